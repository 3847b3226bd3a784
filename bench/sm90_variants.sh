#!/bin/bash
# Compiles the sm_90a kernel set of bench/kernels_sm90.mlir once per schedule
# variant (PTX + manifests, no GPU needed) into OUT/<variant>/, plus the sm_80
# set into OUT/sm80/, for bench/bench_sm90.py --k90 OUT/<default> --variants ...
# Usage: bench/sm90_variants.sh OUT
# A variant is "name key=value ...": fa-to-ptx options, i.e. the sm_90a
# schedule switches declared in include/fa/Conversion/AttentionToNVGPU/SM90/Schedule.def
# (stages, warp-specialize, overlap, p-from-registers, fast-softmax, warp-arrive,
# rescale-before-pv, ping-pong, longest-first, exp2-poly-every, persistent,
# split-release; block-kv), by option name or by attribute name (the
# fa.sm90.<name> attribute: underscores for dashes). A switch not named keeps
# its default; fa-opt rejects an unknown name or a bad value.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: sm90_variants.sh OUT}
FAOPT=${FAOPT:-$ROOT/build/bin/fa-opt}
VARIANTS=${VARIANTS:-"fast_s3 stages=3
fast_early_s3 stages=3 rescale-before-pv=true
fast_s3_nopp stages=3 ping-pong=false
fast_s3_allarrive stages=3 warp-arrive=false
fast_s2 stages=2
persistent_s3 stages=3 persistent=true
regP_warp_s3 stages=3 fast-softmax=false
smemP_s2 stages=2 p-from-registers=false warp-arrive=false fast-softmax=false"}
mkdir -p "$OUT"
while read -r name settings; do
  [ -z "$name" ] && continue
  opts=""
  for kv in $settings; do
    key=${kv%%=*}
    opts="$opts ${key//_/-}=${kv#*=}"
  done
  tmp=$(mktemp --suffix=.mlir)
  # The variants are d64/d128 schedules: the d256 kernels (2 stages at most)
  # are left out.
  awk '/^func\.func @[a-z0-9_]*_d256/ {skip = 1} !skip; skip && /^}/ {skip = 0}' \
    "$ROOT/bench/kernels_sm90.mlir" > "$tmp"
  "$FAOPT" "$tmp" "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a$opts},fa-dump-kernel{dir=$OUT/$name})" -o /dev/null
  rm -f "$tmp"
  echo "$name: $(ls "$OUT/$name"/*.ptx | wc -l) kernels"
done <<< "$VARIANTS"
"$FAOPT" "$ROOT/bench/kernels_sm80.mlir" "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=$OUT/sm80})" -o /dev/null
echo "sm80: $(ls "$OUT/sm80"/*.ptx | wc -l) kernels"
