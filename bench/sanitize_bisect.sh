#!/bin/bash
# Where the sanitizer reports come from (GPU machine): SASS of one kernel built
# from its PTX with this machine's ptxas, racecheck of that cubin (PCs match the
# SASS), then racecheck and synccheck summaries of one kernel per schedule set.
# Usage: bench/sanitize_bisect.sh LOGDIR KERNEL SETDIR...   (KERNEL: e.g. attn_bf16_d128_causal)
set -uo pipefail
LOG=${1:?}; K=${2:?}; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$LOG" /tmp/kc
first=$1
ptxas -arch=sm_90a -O3 "$first/${K}_kernel.ptx" -o /tmp/kc/${K}_kernel.cubin
cuobjdump -sass /tmp/kc/${K}_kernel.cubin > "$LOG/sass_$K.txt"
python3 - "$first/${K}_kernel.json" /tmp/kc <<'PY'
import json, sys, os
m = json.load(open(sys.argv[1])); m["ptx"] = m["kernel"] + ".cubin"
json.dump(m, open(os.path.join(sys.argv[2], m["kernel"] + ".json"), "w"))
PY
FA_SAN_SHAPES=0 timeout 120 compute-sanitizer --tool racecheck --racecheck-report all \
  --kernel-name kns=attn_ --print-limit 400 python3 "$HERE/sanitize_kernels.py" /tmp/kc \
  > "$LOG/racecheck_cubin.log" 2>&1
echo "== racecheck cubin: $(grep -E 'SUMMARY' "$LOG/racecheck_cubin.log")"
for d in "$@"; do
  for tool in racecheck synccheck; do
    FA_SAN_ONLY=${K}_kernel FA_SAN_SHAPES=0,3 timeout 60 compute-sanitizer --tool $tool \
      --kernel-name kns=attn_ --print-limit 3 python3 "$HERE/sanitize_kernels.py" "$d" \
      > "$LOG/${tool}_$(basename "$d").log" 2>&1
    echo "== $tool $(basename "$d"): $(grep -E 'SUMMARY|launches|WRONG|launch failure' "$LOG/${tool}_$(basename "$d").log" | sort -u | tr '\n' ' ')"
  done
done
