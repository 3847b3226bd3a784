#!/usr/bin/env bash
# Installs what is missing (Debian packages of LLVM/MLIR 22, clang, lld, ninja,
# numpy), then configures and builds fa incrementally in build/.
# Sourced by run-example.sh and test.sh; safe to run again.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22

# libclang-rt-22-dev: libFuzzer (-fsanitize=fuzzer) for tools/fa-fuzz, which
# clang-22 only recommends.
packages=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22
          libclang-rt-22-dev ninja-build cmake python3-numpy)
# Callers that need more (scripts/python.sh: venv, pip, pytest) name them here.
read -r -a extra <<< "${FA_EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "== configuring $BUILD_DIR"
  cmake -G Ninja -S "$FA_ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit"
fi
echo "== building"
cmake --build "$BUILD_DIR" --target fa-opt
