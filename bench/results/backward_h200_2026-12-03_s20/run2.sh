#!/bin/bash
K=.dev/s20
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
python3 bench/check_backward_kernel.py --kernels $K/ka --no-time --out $OUT/check_ka 2>&1 | tail -1
python3 bench/check_backward_kernel.py --kernels $K/kb --no-time --out $OUT/check_kb 2>&1 | tail -1
python3 $C .dev/s19/k0,$K/ks4,$K/ka,$K/kb,$K/ks8 $OUT/cmp_after.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_bf16_d128_full,bwd_bf16_d128_causal 2>&1 | tail -12
