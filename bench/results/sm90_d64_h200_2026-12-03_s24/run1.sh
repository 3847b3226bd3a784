#!/bin/bash
# Session 24 run1: three consumer warpgroups at d64 (block-q 192) against the default, one process.
set -x
cd "$(dirname "$0")/../.."
D=.dev/s24
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
python3 bench/bench_sm90.py --k90 $D/k90 --dims 64 --dtypes f16,bf16 --check --check-variants --bench --interleave --iters 20 \
  --variants wg3np=$D/wg3np,wg3np_s4=$D/wg3np_s4,wg3np_nopp=$D/wg3np_nopp,wg3p=$D/wg3 --out $OUT/run1.json 2>&1 | grep -v "^check_case" | tail -80
for tool in racecheck synccheck memcheck; do
  timeout 200 compute-sanitizer --tool $tool --print-limit 5 python3 bench/sanitize_sm90.py $D/wg3np 2>&1 | tail -4
done
timeout 100 compute-sanitizer --tool racecheck --print-limit 5 python3 bench/sanitize_sm90.py $D/wg3 2>&1 | tail -3
