#!/bin/bash
# Session 24 run3: three consumer warpgroups with persistent CTAs on 32 / 160 registers (the
# producer's tile loop spills, not the consumers) and with dynamic tiles, against the
# one-tile-per-CTA 3-warpgroup kernel and the default; d64, one process.
set -x
cd "$(dirname "$0")/../.."
D=.dev/s24
python3 bench/bench_sm90.py --k90 $D/k90 --dims 64 --dtypes f16,bf16 --check-variants --check --bench --interleave --iters 20 \
  --variants wg3=$D/wg3def,wg3p32=$D/wg3p32,wg3dyn32=$D/wg3dyn32 --out $OUT/run3.json 2>&1 | grep -E "^check (wg|[0-9])|^check:|^bench|gemm|Error|error" | tail -40
timeout 150 compute-sanitizer --tool racecheck --print-limit 5 python3 bench/sanitize_sm90.py $D/wg3p32 2>&1 | tail -2
timeout 150 compute-sanitizer --tool racecheck --print-limit 5 python3 bench/sanitize_sm90.py $D/wg3dyn32 2>&1 | tail -2
