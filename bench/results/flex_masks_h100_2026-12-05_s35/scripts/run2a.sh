#!/bin/bash
# Session 35, run2a: mask kernels (both chips), fa.flex, raised sm_80, varlen racecheck/synccheck, memcheck.
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run2a; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $O/gpu.txt
export PYTHONPATH=$PWD/python
t0=$(date +%s)
step() { # name timeout cmd...
  local name=$1 to=$2; shift 2
  if [ $(( $(date +%s)-t0 )) -gt 520 ]; then echo "$name skipped (time)" >> $O/summary.txt; return; fi
  timeout $to "$@" > $O/$name.log 2>&1; echo "$name rc $? at $(( $(date +%s)-t0 ))s" >> $O/summary.txt
}
FA_BUNDLE=.dev/s35/mask90 step mask_sm90a 150 python3 bench/attn_mask_api.py --grad --out $O/mask_sm90a.json
FA_BUNDLE=.dev/s35/flexplain step flex_sm90a 240 python3 bench/flex_api.py check .dev/s35/flex --json $O/flex_sm90a.json
FA_CHIP=sm_80 FA_BUNDLE=.dev/s35/mask80 step mask_sm80 120 python3 bench/attn_mask_api.py --grad --no-timing --out $O/mask_sm80.json
for f in $O/*.log; do echo "== $f"; tail -4 $f; done >> $O/summary.txt
cat $O/summary.txt
tar czf ${OUT:-/tmp}/run2a.tgz -C /tmp run2a
