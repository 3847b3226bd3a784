#!/usr/bin/env bash
# Compile time of fa.attention -> PTX, per kernel variant, on this machine (no
# GPU needed): fa-opt's own timing report (--mlir-timing, wall time of the whole
# pass pipeline, parsing and output included), and ptxas separately.
# Usage: bench/compile_time.sh [chip ...]   (default: sm_80)
# Writes bench/results/compile_time_<date>.md and prints it.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FA_OPT="${FA_BUILD_DIR:-$FA_ROOT/build}/bin/fa-opt"
PTXAS=/usr/local/cuda/bin/ptxas
CHIPS=("${@:-sm_80}")
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
OUT="$FA_ROOT/bench/results/compile_time_$(date +%F).md"

{
  echo "# Compile time, fa.attention to PTX ($(date +%F), $(nproc) cores, $(uname -m))"
  echo
  echo "fa-opt: \`--mlir-timing\` total wall time of the pipeline (one process, one"
  echo "variant per function of the input). ptxas: \`ptxas -arch=<chip> -O3\`, wall time."
  echo
  echo "| chip | input | kernels | fa-opt pipeline (ms) | ptxas per kernel (ms) |"
  echo "|---|---|---|---|---|"
  for chip in "${CHIPS[@]}"; do
    for input in "$FA_ROOT"/examples/attention_gpu.mlir "$FA_ROOT"/bench/kernels_sm80.mlir; do
      [ -f "$input" ] || continue
      dir="$TMP/$chip/$(basename "$input" .mlir)"; mkdir -p "$dir"
      total=$("$FA_OPT" "$input" --mlir-timing \
        "--pass-pipeline=builtin.module(fa-to-ptx{chip=$chip},fa-dump-kernel{dir=$dir})" \
        -o /dev/null 2>&1 | awk '/Total Execution Time/ {printf "%.0f", $4 * 1000}')
      n=0; ptxas_ms=()
      for ptx in "$dir"/*.ptx; do
        s=$(date +%s%N); "$PTXAS" -arch="$chip" -O3 "$ptx" -o "$dir/k.cubin"; e=$(date +%s%N)
        ptxas_ms+=($(( (e - s) / 1000000 ))); n=$((n + 1))
      done
      echo "| $chip | $(basename "$input") | $n | $total | ${ptxas_ms[*]} |"
    done
  done
} | tee "$OUT"
