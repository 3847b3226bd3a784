#!/usr/bin/env bash
# Builds, on this machine (the compiler's), the ahead-of-time bundle that
# bench/python_h200.py loads on the GPU machine, where there is no compiler:
#   bench/python_bundle.sh [DIR]        (default: .dev/bundle)
# then, there:  python3 bench/python_h200.py --bundle .dev/bundle --out $OUT/python.json
# Kernels: the default sweep of python -m fa.precompile for sm_90a and sm_80
# (f16/bf16 x every head dim the chip supports x causal or not x lse or not,
# and the backward kernels: --grad) and a few window and scale variants. The package runs from the source tree
# (PYTHONPATH=python, FA_CAPI_LIBRARY=build/lib/libFAPythonCAPI.so); the
# bundle is checked (--check-bundle-only) before this script ends.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
OUT="${1:-$FA_ROOT/.dev/bundle}"
cmake --build "$BUILD_DIR" --target FAPythonCAPI
export FA_CAPI_LIBRARY="$BUILD_DIR/lib/libFAPythonCAPI.so" PYTHONPATH="$FA_ROOT/python"
export FA_CACHE_DIR="${FA_CACHE_DIR:-$BUILD_DIR/python-cache}"
PY=/usr/bin/python3
rm -rf "$OUT"
$PY -m fa.precompile --chip sm_90a --chip sm_80 --grad --out "$OUT"
$PY -m fa.precompile --chip sm_90a --chip sm_80 --out "$OUT" \
  f16,d128,causal,window=256:0 bf16,d128,full,window=128:64,lse f16,d64,full,scale=0.1 \
  bf16,d128,causal,lse,scale=0.05
$PY "$FA_ROOT/bench/python_h200.py" --bundle "$OUT" --out "$BUILD_DIR/python-bundle-check.json" \
  --check-bundle-only
du -sh "$OUT"
