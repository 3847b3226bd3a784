#!/usr/bin/env bash
# The main job: installs what is missing, builds fa, then compiles
# examples/attention.mlir (or the file given) through the FlashAttention form
# and runs it on the CPU next to the reference lowering.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$FA_ROOT/scripts/setup.sh" >/dev/null
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
FA_OPT="$BUILD_DIR/bin/fa-opt"
LLVM_BIN=/usr/lib/llvm-22/bin
EXAMPLE="${1:-$FA_ROOT/examples/attention.mlir}"
RUNNER=("$LLVM_BIN/mlir-runner" -e main --entry-point-result=void
        --shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so
        --shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so)
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT

echo "== $EXAMPLE: fa.attention"
grep -A3 'fa.attention' "$EXAMPLE" | grep -v '^//' | head -4
echo
echo "== after fa-tile-attention{block-q=4 block-kv=4}, canonicalize, cse (function @attention)"
"$FA_OPT" "$EXAMPLE" --fa-tile-attention="block-q=4 block-kv=4" --canonicalize --cse \
  | awk '/func.func @attention/{on=1} on{print} on&&/^  }$/{exit}'
echo
echo "== run on the CPU: tiled form (fa-to-cpu) vs reference (fa-to-cpu{reference=1})"
"$FA_OPT" "$EXAMPLE" --fa-to-cpu="block-q=4 block-kv=4" | "${RUNNER[@]}" > "$TMP/tiled.out"
"$FA_OPT" "$EXAMPLE" --fa-to-cpu="reference=1" | "${RUNNER[@]}" > "$TMP/reference.out"
/usr/bin/python3 "$FA_ROOT/scripts/compare_outputs.py" "$TMP/tiled.out" "$TMP/reference.out"
