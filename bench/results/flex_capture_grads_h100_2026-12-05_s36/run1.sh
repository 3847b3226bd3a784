#!/bin/bash
# Session 36, run1: fa.flex after the capture-column and fast-math fixes (sm_90a check + timing).
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $O/gpu.txt
export PYTHONPATH=$PWD/python
FA_BUNDLE=.dev/s36/flexplain timeout 420 python3 bench/flex_api.py check .dev/s36/flex --json $O/flex_sm90a.json > $O/flex_sm90a.log 2>&1; echo "flex rc $?" >> $O/summary.txt
cat $O/gpu.txt $O/summary.txt; tail -12 $O/flex_sm90a.log
tar czf ${OUT:-/tmp}/run1.tgz -C /tmp run1
