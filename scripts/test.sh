#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs lit.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$FA_ROOT/scripts/setup.sh"
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
cmake --build "$BUILD_DIR" --target check-fa
