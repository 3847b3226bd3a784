#!/bin/bash
# run2: where transpose-v's time goes at d128 per tensor. base = pre-pass kernels (24 / 240
# registers), base232 = the same built with the 40 / 232 budget transpose-v uses, tv = transpose-v
# (40 / 232), tv24 = transpose-v on 24 / 240 (the producer spills 4-8 bytes).
R=bench/results/fp8_vtranspose_h200_2026-12-04_s27
python3 $R/cmp_var.py $OUT/cmp_var.json base=.dev/s27/k8 base232=.dev/s27/k8r tv=.dev/s27/k8t \
  tv24=.dev/s27/k8t24 -- attn_fp8_f16_d128_full attn_fp8_f16_d128_causal attn_fp8_block_f16_d128_full 2>&1 | tail -12
