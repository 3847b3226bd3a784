#!/usr/bin/env bash
# The main job: installs what is missing, builds fa, then
#  1. compiles examples/attention_gpu.mlir to PTX for the GPU (fa-to-ptx) and
#     shows the launch manifest and the PTX's key instructions;
#  2. compiles examples/attention.mlir (or the file given) through the
#     FlashAttention form and runs it on the CPU next to the reference lowering.
# FA_CHIP=sm_80 (default) selects the GPU target.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$FA_ROOT/scripts/setup.sh" >/dev/null
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
FA_OPT="$BUILD_DIR/bin/fa-opt"
LLVM_BIN=/usr/lib/llvm-22/bin
EXAMPLE="${1:-$FA_ROOT/examples/attention.mlir}"
GPU_EXAMPLE="$FA_ROOT/examples/attention_gpu.mlir"
CHIP="${FA_CHIP:-sm_80}"
RUNNER=("$LLVM_BIN/mlir-runner" -e main --entry-point-result=void
        --shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so
        --shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so)
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT

echo "== $GPU_EXAMPLE -> PTX for $CHIP (fa-to-ptx{chip=$CHIP}, fa-dump-kernel)"
grep -A3 'fa.attention' "$GPU_EXAMPLE" | grep -v '^//' | head -4
mkdir -p "$TMP/gpu"
start=$(date +%s%N)
"$FA_OPT" "$GPU_EXAMPLE" \
  "--pass-pipeline=builtin.module(fa-to-ptx{chip=$CHIP},fa-dump-kernel{dir=$TMP/gpu})" -o /dev/null
end=$(date +%s%N)
echo "compiled in $(( (end - start) / 1000000 )) ms (fa-opt, whole pipeline, process start included)"
for manifest in "$TMP"/gpu/*.json; do
  echo "-- launch manifest $(basename "$manifest")"
  cat "$manifest"; echo
  ptx="${manifest%.json}.ptx"
  echo "-- $(basename "$ptx"): $(wc -l < "$ptx") lines; target and key instructions (counts):"
  grep -m1 '^.target' "$ptx"
  for insn in cp.async.cg ldmatrix mma.sync.aligned.m16n8k16 shfl.sync.bfly ex2.approx \
              cp.async.bulk.tensor mbarrier.try_wait.parity wgmma.mma_async setmaxnreg; do
    n=$(grep -c "$insn" "$ptx" || true)
    [ "$n" -gt 0 ] && printf '   %-28s %s\n' "$insn" "$n"
  done
  if [ -x /usr/local/cuda/bin/ptxas ]; then
    echo "-- ptxas -arch=${CHIP} -v (registers, spills):"
    /usr/local/cuda/bin/ptxas -arch="$CHIP" -v "$ptx" -o "$TMP/gpu/kernel.cubin" 2>&1 | grep -E 'registers|spill' || true
  fi
done
echo "   (to run it on a GPU: python/fa_runtime loads the .ptx + .json; see docs/SM80.md)"
echo

echo "== $EXAMPLE: fa.attention"
grep -A3 'fa.attention' "$EXAMPLE" | grep -v '^//' | head -4
echo
echo "== after fa-tile-attention{block-q=4 block-kv=4}, canonicalize, cse (function @attention)"
"$FA_OPT" "$EXAMPLE" --fa-tile-attention="block-q=4 block-kv=4" --canonicalize --cse \
  | awk '/func.func @attention/ && !done {on=1} on {print} on && /^  }$/ {on=0; done=1}'
# (awk reads to the end: exiting early would SIGPIPE fa-opt and fail the pipeline)
echo
echo "== run on the CPU: tiled form (fa-to-cpu) vs reference (fa-to-cpu{reference=1})"
"$FA_OPT" "$EXAMPLE" --fa-to-cpu="block-q=4 block-kv=4" | "${RUNNER[@]}" > "$TMP/tiled.out"
"$FA_OPT" "$EXAMPLE" --fa-to-cpu="reference=1" | "${RUNNER[@]}" > "$TMP/reference.out"
/usr/bin/python3 "$FA_ROOT/scripts/compare_outputs.py" "$TMP/tiled.out" "$TMP/reference.out"
