#!/bin/bash
# Session 12, device call 2: dynamic tiles (atomic tile counter) vs the defaults, checks, sanitizers, bench.
set -x
R=$OUT/r; mkdir -p $R
K=.dev/k2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > $R/gpu.txt
python3 bench/bench_sm90.py --k90 $K/dyn --check --dims 64,128 --out $R/check.json > $R/check.log 2>&1
grep -E "^check:|FAIL" $R/check.log | head -20
for tool in racecheck synccheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool python3 .dev/san90.py $K/dyn > $R/san_$tool.log 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|san90" $R/san_$tool.log | head -3
done
timeout 420 python3 bench/bench_sm90.py --k90 $K/def --k80 $K/k80 --bench --interleave --dims 64,128 --dtypes bf16 --iters 12 --variants dyn=$K/dyn,dyn1=$K/dyn1 --out $R/bench.json > $R/bench.log 2>&1
grep -E "^bench|gemm" $R/bench.log | head -60
cd $OUT && tar czf results.tgz r && rm -rf r
