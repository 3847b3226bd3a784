#!/bin/bash
K=.dev/s20
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
echo "== check 90"; python3 bench/check_backward_kernel.py --kernels $K/k32_sm_90a --no-time --out $OUT/check_k32_90 2>&1 | tail -1
echo "== check 80"; python3 bench/check_backward_kernel.py --kernels $K/k32_sm_80 --no-time --out $OUT/check_k32_80 2>&1 | tail -1
echo "== det"; python3 bench/check_backward_deterministic.py --det $K/k32det --default $K/k32_sm_90a --no-time --out $OUT/det_k32 2>&1 | tail -1
echo "== cmp 90"; python3 $C $K/kc,$K/k32_sm_90a $OUT/cmp_k32_90.json 2>&1 | tail -18
echo "== cmp 80"; python3 $C $K/k80c,$K/k32_sm_80 $OUT/cmp_k32_80.json bwd_f16_d128_full,bwd_f16_d128_causal 2>&1 | tail -6
