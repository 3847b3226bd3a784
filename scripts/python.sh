#!/usr/bin/env bash
# The Python package (python/, docs/Python.md), without a GPU or torch:
# builds libFAPythonCAPI.so in build/ ($FA_BUILD_DIR), installs the package `fa`
# into a venv of Debian's python3 (--system-site-packages for Debian's numpy and
# pytest; pip with --no-build-isolation --no-index: nothing is downloaded), and
# runs pytest on python/tests/ from outside the source tree, so that the
# installed package is what is tested: the compile API, the cache (memory,
# disk, several processes at once), bundles loaded with the compiler hidden,
# input validation, the CPU path (ExecutionEngine) against numpy.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FA_EXTRA_PACKAGES="python3-venv python3-pip python3-setuptools python3-wheel python3-pytest" \
  "$FA_ROOT/scripts/setup.sh"
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
export FA_BUILD_DIR="$BUILD_DIR"

VENV="${FA_PYTHON_VENV:-$BUILD_DIR/python-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
echo "== pip install $FA_ROOT/python"
"$VENV/bin/python" -m pip install --no-build-isolation --no-index --no-deps --force-reinstall \
  "$FA_ROOT/python"

echo "== pytest python/tests"
cd "$BUILD_DIR"  # not the source tree: `import fa` must find the installed package
export FA_CACHE_DIR="$BUILD_DIR/python-cache"  # the tests use their own; this is for strays
"$VENV/bin/python" -m pytest -v -p no:cacheprovider -o console_output_style=classic \
  "$FA_ROOT/python/tests" "$@"
