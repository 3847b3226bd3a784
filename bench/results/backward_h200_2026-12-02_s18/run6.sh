#!/bin/bash
set -x
B=.dev/bw
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
python3 bench/check_backward_kernel.py --kernels $B/t5 --no-time --out $OUT/t5check 2>&1 | tail -2
python3 bench/check_backward_deterministic.py --det $B/t5det --default $B/t5 --no-time --out $OUT/det5 2>&1 | tail -2
compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $B/t5 --few 2>&1 | tail -2
compute-sanitizer --tool synccheck python3 bench/check_backward_kernel.py --kernels $B/t5 --few 2>&1 | tail -2
compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $B/t5 --few 2>&1 | tail -2
python3 $C $B/t4,$B/t5 $OUT/run6_cmp.json 2>&1
python3 $C $B/t4det,$B/t5det $OUT/run6_det.json bwd_f16_d128_full,bwd_bf16_d128_causal,bwd_f16_d64_causal --grad 2>&1

bash .dev/bw/run3.sh
bash .dev/pf/run5.sh
