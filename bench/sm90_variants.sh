#!/bin/bash
# Compiles the sm_90a kernel set of bench/kernels_sm90.mlir once per schedule
# variant (PTX + manifests, no GPU needed) into OUT/<variant>/, plus the sm_80
# set into OUT/sm80/, for bench/bench_sm90.py --k90 OUT/<default> --variants ...
# Usage: bench/sm90_variants.sh OUT
# A variant is "name stages p_from_registers warp_arrive fast_softmax
# rescale_before_pv ping_pong [block_kv [longest_first [persistent]]]" (the fa.sm90.* function attributes, see
# include/fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: sm90_variants.sh OUT}
FAOPT=${FAOPT:-$ROOT/build/bin/fa-opt}
VARIANTS=${VARIANTS:-"fast_s3 3 true true true false true
fast_early_s3 3 true true true true true
fast_s3_nopp 3 true true true false false
fast_s3_allarrive 3 true false true false true
fast_s2 2 true true true false true
persistent_s3 3 true true true false true 128 true true
regP_warp_s3 3 true true false false true
smemP_s2 2 false false false false true"}
mkdir -p "$OUT"
while read -r name stages preg warp fast early pp bkv lf pers; do
  [ -z "$name" ] && continue
  tmp=$(mktemp --suffix=.mlir)
  # The variants are d64/d128 schedules: the d256 kernels (2 stages at most)
  # are left out.
  awk '/^func\.func @[a-z0-9_]*_d256/ {skip = 1} !skip; skip && /^}/ {skip = 0}' \
    "$ROOT/bench/kernels_sm90.mlir" |
  sed -E "s/^(func\.func .*) \{$/\1 attributes {fa.sm90.p_from_registers = $preg, fa.sm90.warp_arrive = $warp, fa.sm90.fast_softmax = $fast, fa.sm90.rescale_before_pv = $early, fa.sm90.ping_pong = $pp, fa.sm90.block_kv = ${bkv:-128} : i64, fa.sm90.longest_first = ${lf:-true}, fa.sm90.persistent = ${pers:-false}} {/" > "$tmp"
  "$FAOPT" "$tmp" "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a stages=$stages},fa-dump-kernel{dir=$OUT/$name})" -o /dev/null
  rm -f "$tmp"
  echo "$name: $(ls "$OUT/$name"/*.ptx | wc -l) kernels"
done <<< "$VARIANTS"
"$FAOPT" "$ROOT/bench/kernels_sm80.mlir" "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=$OUT/sm80})" -o /dev/null
echo "sm80: $(ls "$OUT/sm80"/*.ptx | wc -l) kernels"
