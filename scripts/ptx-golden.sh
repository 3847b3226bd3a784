#!/usr/bin/env bash
# The PTX of every benchmark kernel (bench/kernels_sm80.mlir, bench/kernels_sm90.mlir,
# the backward's bench/kernels_backward.mlir, the kv_lens / paged
# bench/kernels_kv_cache.mlir for both chips, and bench/kernels_split_kv.mlir
# and the kv_lens / paged ones with split-kv on sm_90a, the fp8
# bench/kernels_fp8.mlir on sm_90a) and of every
# schedule variant of bench/sm90_variants.sh, hashed and compared
# against the recorded set test/Golden/ptx.sha256: a refactor of the kernel
# builders that must not change behaviour must leave every line unchanged.
#
#   scripts/ptx-golden.sh            compare (exit 1 and list the kernels that differ)
#   scripts/ptx-golden.sh --record   rewrite test/Golden/ptx.sha256
#   PTX_GOLDEN_KEEP=DIR              keep the PTX in DIR (to diff two trees)
#
# FAOPT (default build/bin/fa-opt) is the compiler under test. The hashes hold
# for LLVM/MLIR 22.1.8 (Debian's packages), which the PTX depends on.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FAOPT=${FAOPT:-$ROOT/build/bin/fa-opt}
GOLDEN=$ROOT/test/Golden/ptx.sha256
mode=${1:-check}
work=${PTX_GOLDEN_KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${PTX_GOLDEN_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

FAOPT=$FAOPT "$ROOT/bench/sm90_variants.sh" "$work/variants" > "$work/variants.log"
"$FAOPT" "$ROOT/bench/kernels_sm90.mlir" \
  "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=$work/sm90})" -o /dev/null
# Builder paths no variant takes: each set compiles all of kernels_sm90.mlir
# (or kernels_sm80.mlir) with the pipeline options after its name and, after
# a '|', fa.sm90.* function attributes.
while IFS='|' read -r spec attrs; do
  read -r name file opts <<< "$spec"
  src=$work/$name.mlir
  if [ -n "$attrs" ]; then
    sed -E "s/^(func\.func .*) \{$/\1 attributes {$attrs} {/" "$ROOT/bench/$file" > "$src"
  else
    cp "$ROOT/bench/$file" "$src"
  fi
  "$FAOPT" "$src" \
    "--pass-pipeline=builtin.module(fa-to-ptx{$opts},fa-dump-kernel{dir=$work/variants/$name})" -o /dev/null
done <<'SETS'
opt_no_ws kernels_sm90.mlir chip=sm_90a stages=2 warp-specialize=false
opt_no_overlap kernels_sm90.mlir chip=sm_90a overlap=false
opt_no_overlap_smemp kernels_sm90.mlir chip=sm_90a stages=2 overlap=false p-from-registers=false block-kv=64
opt_split_poly kernels_sm90.mlir chip=sm_90a stages=2|fa.sm90.split_release = true, fa.sm90.exp2_poly_every = 3 : i64
opt_persistent_split kernels_sm90.mlir chip=sm_90a stages=2|fa.sm90.persistent = true, fa.sm90.split_release = true, fa.sm90.longest_first = false
opt_slow_softmax kernels_sm90.mlir chip=sm_90a stages=2 fast-softmax=false|fa.sm90.warp_arrive = false, fa.sm90.rescale_before_pv = true, fa.sm90.ping_pong = false
opt_sm80_rpw16 kernels_sm80.mlir chip=sm_80 rows-per-warp=16
opt_sm80_bkv64 kernels_sm80.mlir chip=sm_80 block-q=64 block-kv=64
grad_sm90 kernels_backward.mlir chip=sm_90a
grad_sm80 kernels_backward.mlir chip=sm_80
grad_sm80_bkv64 kernels_backward.mlir chip=sm_80|fa.grad.block_kv = 64 : i64
kv_cache_sm90 kernels_kv_cache.mlir chip=sm_90a
kv_cache_sm80 kernels_kv_cache.mlir chip=sm_80
split_kv_sm90 kernels_split_kv.mlir chip=sm_90a split-kv=true
split_kv_kv_cache_sm90 kernels_kv_cache.mlir chip=sm_90a split-kv=true
fp8_sm90 kernels_fp8.mlir chip=sm_90a
SETS

# One line per kernel: "<sha256>  <set>/<kernel>.ptx", sorted.
(cd "$work" && find variants sm90 -name '*.ptx' | sed 's|^variants/||' | LC_ALL=C sort |
  while read -r f; do
    if [ -f "variants/$f" ]; then p="variants/$f"; else p="$f"; fi
    echo "$(sha256sum < "$p" | cut -d' ' -f1)  $f"
  done) > "$work/ptx.sha256"

if [ "$mode" = "--record" ]; then
  mkdir -p "$(dirname "$GOLDEN")"
  cp "$work/ptx.sha256" "$GOLDEN"
  echo "recorded $(wc -l < "$GOLDEN") kernels in ${GOLDEN#$ROOT/}"
  exit 0
fi
if diff -u "$GOLDEN" "$work/ptx.sha256" > "$work/diff"; then
  echo "PTX byte-identical to the recorded set: $(wc -l < "$GOLDEN") kernels"
  exit 0
fi
echo "PTX differs from the recorded set (${GOLDEN#$ROOT/}):"
grep -E '^[-+][0-9a-f]' "$work/diff" || true
exit 1
