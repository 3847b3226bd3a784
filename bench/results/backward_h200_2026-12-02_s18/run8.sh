#!/bin/bash
B=.dev/bw
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
echo "== row kernels sm_90a"; python3 bench/check_backward_row_kernels.py --kernels $B/t6 --out $OUT/row_kernels.json 2>&1 | grep -v "^ok " | tail -8
echo "== row kernels sm_80"; python3 bench/check_backward_row_kernels.py --kernels $B/t6_80 --no-time --out $OUT/row_kernels_sm80.json 2>&1 | tail -1
echo "== memcheck"; compute-sanitizer --tool memcheck python3 bench/check_backward_row_kernels.py --kernels $B/t6 --no-time 2>&1 | tail -2
echo "== det"; python3 bench/check_backward_deterministic.py --det $B/t6det --default $B/t6 --no-time --out $OUT/det6 2>&1 | tail -2
echo "== cmp --grad"; python3 $C $B/t5,$B/t6 $OUT/grad_cmp.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_bf16_d128_causal,bwd_f16_d64_full,bwd_f16_d64_causal --grad 2>&1 | tail -15
echo "== final"; python3 bench/bench_backward.py --bundle .dev/gbundle --out $OUT/final 2>&1 | grep -E "correctness|passed|failed|Error" | tail -5
