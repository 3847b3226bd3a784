#!/bin/bash
# Session 25 run6: fp8 (per-tensor / per-head descales) with conditional rescaling (k8:
# rescale-threshold=8) against the default (k0: every step), interleaved (cmp8.py of session
# 22); then bench_fp8.py --check --accuracy on k8 (the f16 kernels: the session's defaults).
D=.dev/s25/fp8
python3 bench/results/fp8_h200_2026-12-03_s22/cmp8.py $OUT/run6_cmp8.json main=$D/k0 t8=$D/k8 -- attn_fp8_f16_d64_full attn_fp8_f16_d128_full attn_fp8_f16_d128_causal attn_fp8_f16_d256_full attn_fp8_f16_d256_causal attn_fp8_head_f16_d128_full 2>&1 | tail -20
timeout 300 python3 bench/bench_fp8.py --k8 $D/k8 --k90 .dev/s25/final90 --check --accuracy --out $OUT/run6_fp8_t8.json 2>&1 | grep -v " OK$" | tail -25
