#!/bin/bash
# Session 36, run4: varlen with softcap + score_mod + mask_mod (sm_90a forward and backward).
set -u
cd "$(dirname "$0")/../.."
O=/tmp/run4; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv > $O/gpu.txt
timeout 300 python3 bench/check_varlen_modifiers.py --kernels .dev/s36/vmod --plain .dev/s36/vplain --json $O/vmod.json > $O/vmod.log 2>&1; echo "vmod rc $?" >> $O/summary.txt
timeout 300 compute-sanitizer --tool memcheck python3 bench/check_varlen_modifiers.py --kernels .dev/s36/vmod > $O/memcheck.log 2>&1; echo "memcheck rc $?" >> $O/summary.txt
cat $O/gpu.txt $O/summary.txt; tail -5 $O/vmod.log; grep "ERROR SUMMARY" $O/memcheck.log
tar czf ${OUT:-/tmp}/run4.tgz -C /tmp run4
