#!/bin/bash
# Session 12, device call 3: dynamic tiles: ring depth 3 (dyn3) beside dyn (sections, 56/224) and dyn1 (global order, 40/232).
set -x
R=$OUT/r; mkdir -p $R
K=.dev/k2
python3 bench/bench_sm90.py --k90 $K/dyn3 --check --dims 64,128 --out $R/check3.json > $R/check3.log 2>&1
grep -E "^check:|FAIL" $R/check3.log | head -20
timeout 450 python3 bench/bench_sm90.py --k90 $K/def --bench --interleave --dims 64,128 --dtypes bf16 --iters 12 --variants dyn=$K/dyn,dyn1=$K/dyn1,dyn3=$K/dyn3 --out $R/bench.json > $R/bench.log 2>&1
grep -E "^bench|gemm" $R/bench.log | head -60
cd $OUT && tar czf results.tgz r && rm -rf r
