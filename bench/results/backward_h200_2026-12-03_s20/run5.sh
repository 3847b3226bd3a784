#!/bin/bash
K=.dev/s20
echo "== sm80 forward"; timeout 280 python3 bench/bench_sm80.py --kernels $K/f80new --variants old=$K/f80old --check --bench --seqlens 512,1024,2048,4096,16384 --out $OUT/sm80_fwd_staged.json 2>&1 | grep -E "check|bench" | tail -45
echo "== final sm90a"; timeout 280 python3 bench/bench_backward.py --bundle $K/gb90 --sections correctness,speed --rounds 3 --out $OUT/final 2>&1 | grep -E "correctness|passed|failed|Error|right" | tail -5
