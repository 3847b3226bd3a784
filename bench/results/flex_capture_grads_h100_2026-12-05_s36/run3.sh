#!/bin/bash
# Session 36, run3: flex check on the sm_80 kernels (capture gradients included), then
# the sm_90a check under compute-sanitizer memcheck (no timing).
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run3; mkdir -p $O
export PYTHONPATH=$PWD/python
FA_CHIP=sm_80 FA_BUNDLE=.dev/s36/flexplain timeout 300 python3 bench/flex_api.py check .dev/s36/flex --no-timing --json $O/flex_sm80.json > $O/flex_sm80.log 2>&1; echo "sm80 rc $?" >> $O/summary.txt
FA_BUNDLE=.dev/s36/flexplain timeout 400 compute-sanitizer --tool memcheck --print-limit 20 python3 bench/flex_api.py check .dev/s36/flex --no-timing > $O/memcheck.log 2>&1; echo "memcheck rc $?" >> $O/summary.txt
cat $O/summary.txt; grep -E "FAIL|capture|cases" $O/flex_sm80.log | tail -6; grep -E "ERROR SUMMARY|cases" $O/memcheck.log | tail -3
tar czf ${OUT:-/tmp}/run3.tgz -C /tmp run3
