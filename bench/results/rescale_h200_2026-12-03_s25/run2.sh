#!/bin/bash
# Session 25 run2: sm_90a conditional rescaling (t8 = threshold 8, t0 = 0) against main, interleaved;
# then the d64 three-warpgroup kernels (block-q=192) with threshold 8 against main's.
cd "$(dirname "$0")/../.."
D=.dev/s25
python3 bench/bench_sm90.py --k90 $D/sm90_8 --bench --interleave --iters 10 --variants main=$D/sm90_none,t0=$D/sm90_0 --out $OUT/run2_sm90.json 2>&1 | grep -E "^bench|gemm|Error|error" | tail -80
python3 bench/bench_sm90.py --k90 $D/w3_8 --dims 64 --bench --interleave --iters 10 --variants main=$D/w3_none --out $OUT/run2_w3.json 2>&1 | grep -E "^bench|Error|error" | tail -30
