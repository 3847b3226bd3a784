#!/bin/bash
# Session 24 run4: fa.attention through the public API with the final kernels (d64 bundle:
# block-q=192 full attention now persistent), and synccheck / memcheck of the persistent
# three-warpgroup kernels.
set -x
cd "$(dirname "$0")"
python3 api.py bundle $OUT/run4_api.json 2>&1 | tail -30
cd ../..
for tool in synccheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 5 python3 bench/sanitize_sm90.py .dev/s24/wg3p32 2>&1 | tail -2
done
