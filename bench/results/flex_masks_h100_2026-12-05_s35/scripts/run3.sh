#!/bin/bash
# Session 35, run3: fa.flex after the capture-column and fast-math fixes (sm_90a check + timing).
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $O/gpu.txt
export PYTHONPATH=$PWD/python
FA_BUNDLE=.dev/s35/flexplain timeout 300 python3 bench/flex_api.py check .dev/s35/flex --json $O/flex_sm90a.json > $O/flex_sm90a.log 2>&1; echo "flex rc $?" >> $O/summary.txt
cat $O/summary.txt; tail -8 $O/flex_sm90a.log
tar czf ${OUT:-/tmp}/run3.tgz -C /tmp run3
