#!/bin/bash
K=.dev/s19
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
echo "== check k6"; python3 bench/check_backward_kernel.py --kernels $K/k6 --no-time --out $OUT/check_k6 2>&1 | tail -1
echo "== check k6 sm_80"; python3 bench/check_backward_kernel.py --kernels $K/k6_80 --no-time --out $OUT/check_k6_80 2>&1 | tail -1
echo "== det k6"; python3 bench/check_backward_deterministic.py --det $K/k6det --default $K/k6 --no-time --out $OUT/det_k6 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k6 --few 2>&1 | tail -1
echo "== synccheck det"; compute-sanitizer --tool synccheck python3 bench/check_backward_kernel.py --kernels $K/k6det --few 2>&1 | tail -1
echo "== cmp"; python3 $C $K/k0,$K/k5,$K/k6 $OUT/cmp_k056.json 2>&1 | tail -18
echo "== variants"; timeout 90 python3 bench/check_backward_variants.py --k90 $K/v90 --check --out $OUT/variants 2>&1 | tail -2
echo "== final"; timeout 200 python3 bench/bench_backward.py --bundle $K/gbundle --sections correctness,speed --rounds 3 --out $OUT/final 2>&1 | grep -E "correctness|passed|failed|Error|right" | tail -5
ls $OUT
