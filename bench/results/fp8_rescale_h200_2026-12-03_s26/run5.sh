#!/bin/bash
# Session 26 run5: causal d256 with split release (12 bytes of spills) and with split release +
# threshold 8 (20 bytes), against the default (no split release, every-step rescale); the full
# sweep on each variant, then interleaved TFLOP/s at d256.
D=.dev/s26
timeout 560 python3 bench/bench_sm90.py --k90 $D/k90 --dims 256 --seqlens 1024,4096,8192,16384 --check --check-variants --bench --interleave --iters 10 --variants sr=$D/v256/sr,srt8=$D/v256/srt8 --out $OUT/run5_d256.json 2>&1 | grep -v " OK$" | tail -30
