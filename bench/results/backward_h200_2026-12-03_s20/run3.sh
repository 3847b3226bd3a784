#!/bin/bash
K=.dev/s20
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
echo "== check kc"; python3 bench/check_backward_kernel.py --kernels $K/kc --no-time --out $OUT/check_kc 2>&1 | tail -1
echo "== det kc"; python3 bench/check_backward_deterministic.py --det $K/kcdet --default $K/kc --no-time --out $OUT/det_kc 2>&1 | tail -1
echo "== memcheck"; compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $K/kc --few 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/kc --few 2>&1 | tail -1
echo "== variants"; timeout 90 python3 bench/check_backward_variants.py --k90 $K/vc --check --out $OUT/variants_kc 2>&1 | tail -2
echo "== cmp"; python3 $C .dev/s19/k0,$K/ka,$K/kc $OUT/cmp_kc.json 2>&1 | tail -18
