#!/usr/bin/env bash
# The lit suite against an ASan + UBSan build of fa-opt (build-asan/): memory
# errors and undefined behaviour in fa's own code (libMLIR.so is Debian's
# uninstrumented build; ASan still checks every heap access fa's code makes).
#
#   scripts/sanitize.sh          configure once, build fa-opt, run lit
#   FA_ASAN_BUILD_DIR=...        another build directory
#   FA_BUILD_DIR=build-asan scripts/fuzz.sh
#                                the fuzzer under ASan + UBSan too (export the
#                                *SAN_OPTIONS below first; about half the speed)
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FA_ASAN_BUILD_DIR:-$FA_ROOT/build-asan}"
LLVM_PREFIX=/usr/lib/llvm-22
"$FA_ROOT/scripts/setup.sh" > /dev/null  # packages (and the normal build)
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$FA_ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DLLVM_USE_SANITIZER="Address;Undefined" \
    -DLLVM_UBSAN_FLAGS="-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all" \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit"
fi
# Any report fails the test that triggered it (-fno-sanitize-recover, and
# abort instead of exit). LLVM_UBSAN_FLAGS is what LLVM's own UBSan builds
# use (its top-level CMakeLists sets it; an out-of-tree build must): vptr and
# function checks off, as the types come from the uninstrumented libMLIR.so.
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1"
cmake --build "$BUILD_DIR" --target check-fa
