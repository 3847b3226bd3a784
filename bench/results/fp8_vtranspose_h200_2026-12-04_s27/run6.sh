#!/bin/bash
# run6: fp8 with every n-th softmax exponent on the FMA pipes (exp2-poly-every = 2, 4, 8) against
# all on the MUFU (.dev/s27/p{0,2,4,8}: the per-tensor / per-head / per-block f16 d128 and d256
# kernels of bench/kernels_fp8.mlir, fa-to-ptx{chip=sm_90a[ exp2-poly-every=n]}).
R=bench/results/fp8_vtranspose_h200_2026-12-04_s27
S=.dev/s27
python3 $R/cmp_var.py $OUT/cmp_poly.json p0=$S/p0 p2=$S/p2 p4=$S/p4 p8=$S/p8 -- \
  attn_fp8_f16_d128_full attn_fp8_f16_d128_causal attn_fp8_head_f16_d128_full \
  attn_fp8_block_f16_d128_full attn_fp8_block_f16_d128_causal attn_fp8_f16_d256_full \
  attn_fp8_f16_d256_causal attn_fp8_block_f16_d256_full 2>&1 | tail -24
