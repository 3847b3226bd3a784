#!/bin/bash
K=.dev/s19
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
python3 bench/check_backward_kernel.py --kernels $K/k2 --no-time --out $OUT/check_k2 2>&1 | tail -1
python3 bench/check_backward_kernel.py --kernels $K/k3 --no-time --out $OUT/check_k3 2>&1 | tail -1
python3 $C $K/k1,$K/k2,$K/k3 $OUT/cmp_k123.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_f16_d64_full,bwd_f16_d64_causal 2>&1 | tail -12
