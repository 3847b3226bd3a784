#!/bin/bash
# run6: sm_80 backward (k2dq): D = 64 the own half's A fragments of dV / dK from registers,
# D = 128 dQ's product in 32 x 32 warp tiles; against run5's kernels (k2d).
# Then what a user sees with these sm_80 kernels (bundle gb80q, FA_CHIP=sm_80).
K=.dev/s21
echo "== check k2dq"; python3 bench/check_backward_kernel.py --kernels $K/k2dq --no-time --out $OUT/check_k2dq 2>&1 | grep -v " OK" | tail -4
echo "== det"; python3 bench/check_backward_deterministic.py --det $K/k2dq_det --default $K/k2dq --chip sm_80 --no-time --out $OUT/det_k2dq 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k2dq --few 2>&1 | tail -1
echo "== memcheck"; compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $K/k2dq --few 2>&1 | tail -1
echo "== variants"; timeout 100 python3 bench/check_backward_variants.py --k80 $K/v2dq --check --out $OUT/variants_80 2>&1 | tail -1
echo "== cmp flash"; PEER=FLASH python3 $K/cmpf.py $K/k2d,$K/k2dq $OUT/cmp_k2dq_flash.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_bf16_d128_full,bwd_f16_d64_full,bwd_f16_d64_causal 2>&1 | tail -15
echo "== final sm80"; FA_CHIP=sm_80 timeout 300 python3 bench/bench_backward.py --bundle $K/gb80q --sections correctness,speed --rounds 3 --out $OUT/final_sm80 2>&1 | grep -E "correctness|passed|failed|Error|right" | tail -5
