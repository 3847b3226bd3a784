#!/bin/bash
# run5: sm_80 backward with pairs of warps (2-D tiles; k2d) vs main (k80n).
K=.dev/s21
echo "== check k2d"; python3 bench/check_backward_kernel.py --kernels $K/k2d --no-time --out $OUT/check_k2d 2>&1 | tail -1
echo "== det"; python3 bench/check_backward_deterministic.py --det $K/k2d_det --default $K/k2d --chip sm_80 --no-time --out $OUT/det_k2d 2>&1 | tail -1
echo "== memcheck"; compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $K/k2d --few 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k2d --few 2>&1 | tail -1
echo "== variants"; timeout 120 python3 bench/check_backward_variants.py --k80 $K/v2d --check --out $OUT/variants_80 2>&1 | tail -2
echo "== cmp flash"; PEER=FLASH python3 $K/cmpf.py $K/k80n,$K/k2d $OUT/cmp_k2d_flash.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_bf16_d128_full,bwd_f16_d64_full,bwd_f16_d64_causal 2>&1 | tail -15
