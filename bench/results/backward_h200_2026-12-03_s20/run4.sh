#!/bin/bash
K=.dev/s20
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
echo "== check k80c"; python3 bench/check_backward_kernel.py --kernels $K/k80c --no-time --out $OUT/check_k80c 2>&1 | tail -1
echo "== memcheck k80c"; compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $K/k80c --few 2>&1 | tail -1
echo "== racecheck k80c"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k80c --few 2>&1 | tail -1
echo "== variants"; timeout 150 python3 bench/check_backward_variants.py --k90 $K/vc --k80 $K/v80c --check --out $OUT/variants_both 2>&1 | tail -2
echo "== cmp sm80"; python3 $C .dev/s19/k6_80,$K/k80c $OUT/cmp_k80c.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_f16_d64_full 2>&1 | tail -9
echo "== final sm80"; FA_CHIP=sm_80 timeout 250 python3 bench/bench_backward.py --bundle $K/gb80 --sections correctness,speed --rounds 3 --out $OUT/final_sm80 2>&1 | grep -E "correctness|passed|failed|Error|right" | tail -5
