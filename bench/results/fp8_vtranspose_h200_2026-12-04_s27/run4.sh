#!/bin/bash
# run4: the fp8 kernels with the new measured register split (40 / 232 at causal D = 128 per
# tensor / per head and full D = 64 per tensor): .dev/s27/f8new (bench/kernels_fp8.mlir at the
# defaults) against .dev/s27/f8 (the previous defaults): correctness sweep, the changed kernels
# interleaved, the speed table against our f16 kernels (.dev/s27/k90) and cudnn, racecheck.
R=bench/results/fp8_vtranspose_h200_2026-12-04_s27
S=.dev/s27
python3 bench/bench_fp8.py --k8 $S/f8new --check --out $OUT/check_f8new.json 2>&1 | grep -E "^check:|FAIL" | tail -4
python3 $R/cmp_var.py $OUT/cmp_f8new.json old=$S/f8 new=$S/f8new -- attn_fp8_f16_d128_causal \
  attn_fp8_bf16_d128_causal attn_fp8_f16_d128_causal_lse attn_fp8_head_f16_d128_causal \
  attn_fp8_head_f16_d128_causal_lse attn_fp8_f16_d64_full attn_fp8_bf16_d64_full 2>&1 | tail -21
python3 bench/bench_fp8.py --k8 $S/f8new --k90 $S/k90 --bench --seqlens 1024,4096,16384 \
  --out $OUT/bench_f8new.json 2>&1 | tail -40
timeout 200 compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 bench/sanitize_fp8.py $S/f8new 2>&1 | grep -E "RACECHECK SUMMARY|sanitize_fp8" | head -3
