#!/bin/bash
set -x
K=.dev/s19
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
python3 bench/check_backward_kernel.py --kernels $K/k1 --no-time --out $OUT/check 2>&1 | tail -3
python3 bench/check_backward_deterministic.py --det $K/k1det --default $K/k1 --no-time --out $OUT/det 2>&1 | tail -3
compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k1 --few 2>&1 | tail -2
compute-sanitizer --tool synccheck python3 bench/check_backward_kernel.py --kernels $K/k1 --few 2>&1 | tail -2
compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $K/k1 --few 2>&1 | tail -2
python3 $C $K/k0,$K/k1 $OUT/cmp.json 2>&1 | tail -40
which cuobjdump nvdisasm
