#!/usr/bin/env bash
# The embedding check (issue 17): install fa from build/ into a prefix, build
# the out-of-tree consumer examples/embedding/ against that installed tree
# only (find_package(FA CONFIG) through FA_DIR), then run test/Embedding/
# with it: each named pipeline through mlir::fa::registerAll alone, and
# fa-to-cpu through mlir::fa::registerAllCPU (fa-embed-cpu, no GPU target).
#
#   scripts/embedding.sh         install into build/embedding/install, build
#                                the consumer in build/embedding/consumer
#   FA_BUILD_DIR=...             another fa build directory
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22
"$FA_ROOT/scripts/setup.sh" > /dev/null  # packages, configure, build fa-opt
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"     # lit needs absolute paths

PREFIX="$BUILD_DIR/embedding/install"
CONSUMER="$BUILD_DIR/embedding/consumer"
# What is installed and not built for fa-opt (the C API, the plugin).
cmake --build "$BUILD_DIR" --target FACAPI FAPlugin > /dev/null
echo "== installing fa into $PREFIX"
rm -rf "$PREFIX"
cmake --install "$BUILD_DIR" --prefix "$PREFIX" > /dev/null
# The consumer sees the installed tree and nothing of fa's source or build.
echo "== building examples/embedding against it"
rm -rf "$CONSUMER"
cmake -G Ninja -S "$FA_ROOT/examples/embedding" -B "$CONSUMER" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
  -DFA_DIR="$PREFIX/lib/cmake/fa" > /dev/null
cmake --build "$CONSUMER"
echo "== test/Embedding with $CONSUMER/fa-embed"
"$LLVM_PREFIX/bin/lit" -v "$BUILD_DIR/test/Embedding" \
  --param fa_embed="$CONSUMER/fa-embed" --param fa_install="$PREFIX"
