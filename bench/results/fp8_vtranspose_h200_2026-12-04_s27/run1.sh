#!/bin/bash
# run1: the transpose-v fp8 kernels on the H200: bench_fp8's correctness sweep (D = 64, 128),
# the interleaved comparison with the pre-pass kernels, compute-sanitizer.
R=bench/results/fp8_vtranspose_h200_2026-12-04_s27
K8=.dev/s27/k8; K8T=.dev/s27/k8t
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
python3 bench/bench_fp8.py --k8 $K8T --check --dims 64,128 --out $OUT/check_vt.json 2>&1 | grep -v "^ok" | tail -8
python3 $R/cmp_vt.py $OUT/cmp_vt.json $K8 $K8T -- attn_fp8_f16_d128_full attn_fp8_f16_d128_causal \
  attn_fp8_f16_d64_full attn_fp8_f16_d64_causal attn_fp8_bf16_d128_full attn_fp8_head_f16_d128_full \
  attn_fp8_block_f16_d128_full attn_fp8_block_f16_d128_causal 2>&1 | tail -40
for tool in racecheck synccheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --kernel-name kns=attn_ python3 $R/sanitize_vt.py $K8T 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|sanitize_vt|WRONG|hazard" | head -4
done
