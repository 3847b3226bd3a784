#!/bin/bash
# Session 36, run2: flex check (with capture gradients) + timing, sm_90a.
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $O/gpu.txt
export PYTHONPATH=$PWD/python
FA_BUNDLE=.dev/s36/flexplain timeout 500 python3 bench/flex_api.py check .dev/s36/flex --json $O/flex_sm90a.json > $O/flex_sm90a.log 2>&1; echo "flex rc $?" >> $O/summary.txt
cat $O/gpu.txt $O/summary.txt; grep -E "FAIL|capture|cases|ours/plain" $O/flex_sm90a.log | tail -14
tar czf ${OUT:-/tmp}/run2.tgz -C /tmp run2
