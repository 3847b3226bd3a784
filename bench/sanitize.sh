#!/bin/bash
# compute-sanitizer's racecheck, synccheck and memcheck over every kernel of the given
# directories (PTX + manifest, from fa-dump-kernel), each at the small odd shapes of
# bench/sanitize_kernels.py; only fa's kernels are instrumented (--kernel-name kns=attn_).
# Usage (GPU machine): bench/sanitize.sh LOGDIR KDIR [KDIR ...]
# Writes LOGDIR/<tool>.log and prints each tool's summary lines.
set -uo pipefail
LOGDIR=${1:?usage: sanitize.sh LOGDIR KDIR...}; shift
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$LOGDIR"
for tool in ${TOOLS:-racecheck synccheck memcheck}; do
  extra=()
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  timeout "${TOOL_TIMEOUT:-240}" compute-sanitizer --tool "$tool" "${extra[@]}" \
    --kernel-name kns=attn_ --print-limit 40 \
    python3 "$HERE/sanitize_kernels.py" "$@" > "$LOGDIR/$tool.log" 2>&1
  echo "== $tool: exit $?"
  grep -E "SUMMARY|sanitize_kernels:|Error|error" "$LOGDIR/$tool.log" | sort | uniq -c | sort -rn | head -12
done
