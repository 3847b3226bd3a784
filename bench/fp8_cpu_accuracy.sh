#!/usr/bin/env bash
# The CPU accuracy table of docs/FP8.md: fa-quantize-fp8 through fa-to-cpu on
# FlashAttention-3's outlier protocol, RMSE against float64, per scaling.
#   bench/fp8_cpu_accuracy.sh [D...]     (default: 64 128; seeds 0-5; ~3 min on 2 cores)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OPT="${FA_BUILD_DIR:-$ROOT/build}/bin/fa-opt"
CASE="$ROOT/test/Integration/CPU/Inputs/fp8_quant_case.py"
LIB=/usr/lib/llvm-22/lib
RUNNER=(/usr/lib/llvm-22/bin/mlir-runner -e main --entry-point-result=void
        --shared-libs=$LIB/libmlir_runner_utils.so --shared-libs=$LIB/libmlir_c_runner_utils.so)
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
configs=(
  "f16||"
  "tensor|granularity=tensor|--granularity tensor"
  "head|granularity=head|--granularity head"
  "block128|granularity=block|--granularity block"
  "block64|granularity=block block-q=64 block-kv=64|--granularity block --block-q 64 --block-kv 64"
  "block16|granularity=block block-q=16 block-kv=16|--granularity block --block-q 16 --block-kv 16"
  "tensor+inc|granularity=tensor incoherent=1|--granularity tensor --incoherent"
  "block128+inc|granularity=block incoherent=1|--granularity block --incoherent"
  "block64+inc|granularity=block block-q=64 block-kv=64 incoherent=1|--granularity block --block-q 64 --block-kv 64 --incoherent"
)
Ds=("$@"); [ ${#Ds[@]} -eq 0 ] && Ds=(64 128)
for D in "${Ds[@]}"; do
  for seed in 0 1 2 3 4 5; do
    C=(--B 1 --H 2 --N 256 --D "$D" --seed "$seed")
    /usr/bin/python3 "$CASE" emit "${C[@]}" > "$TMP/in.mlir"
    for cfg in "${configs[@]}"; do
      IFS='|' read -r name pass check <<< "$cfg"
      quant=(); [ -n "$pass" ] && quant=("--fa-quantize-fp8=$pass")
      "$OPT" "$TMP/in.mlir" "${quant[@]}" --fa-to-cpu | "${RUNNER[@]}" > "$TMP/out"
      # shellcheck disable=SC2086
      echo "D=$D seed=$seed $name $(/usr/bin/python3 "$CASE" check "${C[@]}" $check "$TMP/out")"
    done
  done
done
