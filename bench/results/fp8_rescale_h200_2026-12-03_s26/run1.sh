#!/bin/bash
# Session 26 run1: fp8 with conditional rescaling by default (k8: per-tensor / per-head at d128
# and causal d256; k0: rescale-threshold=-1, the previous default).
D=.dev/s26
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
echo "== check (k8), emulation following the manifest's threshold"
timeout 240 python3 bench/bench_fp8.py --k8 $D/k8 --k90 $D/k90 --check --accuracy --out $OUT/run1_check_k8.json 2>&1 | grep -v " OK$" | tail -40
echo "== accuracy (k0, every step)"
timeout 90 python3 bench/bench_fp8.py --k8 $D/k0 --k90 $D/k90 --accuracy --out $OUT/run1_accuracy_k0.json 2>&1 | tail -12
echo "== interleaved k8 vs k0"
timeout 150 python3 bench/results/fp8_h200_2026-12-03_s22/cmp8.py $OUT/run1_cmp8.json every=$D/k0 t8=$D/k8 -- attn_fp8_f16_d128_full attn_fp8_f16_d128_causal attn_fp8_f16_d256_causal attn_fp8_head_f16_d128_full attn_fp8_bf16_d128_full 2>&1 | tail -20
echo "== sanitizers"
timeout 60 compute-sanitizer --tool memcheck --kernel-name kns=attn_ python3 bench/sanitize_fp8.py $D/k8 2>&1 | tail -3
timeout 60 compute-sanitizer --tool synccheck --kernel-name kns=attn_ python3 bench/sanitize_fp8.py $D/k8 2>&1 | tail -3
timeout 100 compute-sanitizer --tool racecheck --kernel-name kns=attn_fp8_f16_d128 python3 bench/sanitize_fp8.py $D/k8 2>&1 | tail -3
