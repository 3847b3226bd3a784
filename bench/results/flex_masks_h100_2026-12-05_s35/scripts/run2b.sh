#!/bin/bash
# Session 35, run2b: mask kernels (both chips), fa.flex, raised sm_80, varlen racecheck/synccheck, memcheck.
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run2b; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $O/gpu.txt
export PYTHONPATH=$PWD/python
t0=$(date +%s)
step() { # name timeout cmd...
  local name=$1 to=$2; shift 2
  if [ $(( $(date +%s)-t0 )) -gt 520 ]; then echo "$name skipped (time)" >> $O/summary.txt; return; fi
  timeout $to "$@" > $O/$name.log 2>&1; echo "$name rc $? at $(( $(date +%s)-t0 ))s" >> $O/summary.txt
}
FA_CHIP=sm_80 FA_BUNDLE=.dev/s35/flexplain step flex_sm80 90 python3 bench/flex_api.py check .dev/s35/flex --no-timing --json $O/flex_sm80.json
step raise_sm80 60 python3 bench/raise_kernels.py check .dev/s35/raise --chip sm_80 --json $O/raise_sm80.json
step varlen_racecheck 90 compute-sanitizer --tool racecheck --racecheck-report all --kernel-name kns=vbwd_ --print-limit 20 python3 bench/check_backward_varlen.py --kernels .dev/s35/vl --few
step varlen_synccheck 60 compute-sanitizer --tool synccheck --kernel-name kns=vbwd_ --print-limit 20 python3 bench/check_backward_varlen.py --kernels .dev/s35/vl --few
FA_BUNDLE=.dev/s35/mask90 step mask_memcheck 90 compute-sanitizer --tool memcheck --kernel-name kns=fa_ --print-limit 20 python3 bench/attn_mask_api.py --grad --no-timing
FA_BUNDLE=.dev/s35/flexplain step flex_memcheck 90 compute-sanitizer --tool memcheck --kernel-name kns=flex_ --print-limit 20 python3 bench/flex_api.py check .dev/s35/flex --no-timing
for f in $O/*.log; do echo "== $f"; tail -4 $f; done >> $O/summary.txt
cat $O/summary.txt
tar czf ${OUT:-/tmp}/run2b.tgz -C /tmp run2b
