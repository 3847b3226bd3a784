#!/bin/bash
# Session 12, device call 4: dynamic tiles with the coordinates handed over in shared memory:
# dynS (L2 sections of 32 MiB), dyn8 (8 MiB), dyn1 (global order, run 2), beside the defaults.
set -x
R=$OUT/r; mkdir -p $R
K=.dev/k2
for v in dynS dyn8; do
python3 bench/bench_sm90.py --k90 $K/$v --check --dims 64,128 --out $R/check_$v.json > $R/check_$v.log 2>&1
grep -E "^check:|FAIL" $R/check_$v.log | head -20
done
timeout 150 compute-sanitizer --tool racecheck python3 .dev/san90.py $K/dyn8 > $R/san_racecheck.log 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|san90" $R/san_racecheck.log | head -3
timeout 450 python3 bench/bench_sm90.py --k90 $K/def --bench --interleave --dims 64,128 --dtypes bf16 --iters 12 --variants dynS=$K/dynS,dyn8=$K/dyn8,dyn1=$K/dyn1 --out $R/bench.json > $R/bench.log 2>&1
grep -E "^bench|gemm" $R/bench.log | head -60
cd $OUT && tar czf results.tgz r && rm -rf r
