#!/bin/bash
# run2: sm_80 backward, dQ atomics as 4 rows x 8 columns (k80n) vs main (k80).
K=.dev/s21
echo "== check k80n"; python3 bench/check_backward_kernel.py --kernels $K/k80n --no-time --out $OUT/check_k80n 2>&1 | tail -1
echo "== det"; python3 bench/check_backward_deterministic.py --det $K/k80n_det --default $K/k80n --chip sm_80 --no-time --out $OUT/det_k80n 2>&1 | tail -1
echo "== memcheck"; compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $K/k80n --few 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k80n --few 2>&1 | tail -1
echo "== variants"; timeout 120 python3 bench/check_backward_variants.py --k80 $K/v80n --check --out $OUT/variants_80 2>&1 | tail -2
echo "== cmp flash"; PEER=FLASH python3 $K/cmpf.py $K/k80,$K/k80n $OUT/cmp_k80n_flash.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_bf16_d128_full,bwd_f16_d64_full,bwd_f16_d64_causal 2>&1 | tail -15
