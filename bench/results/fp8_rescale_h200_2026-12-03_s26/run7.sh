#!/bin/bash
# Session 26 run7: the causal d256 defaults (64-key tiles, split release, threshold 8) under
# compute-sanitizer, and the split-kv d256 kernels (S = 1, 3, 7).
D=.dev/s26
timeout 150 python3 bench/check_kv_cache.py --kernels $D/sk --only d256 --splits 1,3,7 --out $OUT/run7_split_kv_d256.json 2>&1 | tail -4
for t in racecheck synccheck memcheck; do
  timeout 120 compute-sanitizer --tool $t --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $D/d256c 2>&1 | tail -2
done
