#!/bin/bash
# Session 26 run6: the new d256 defaults (causal: split release + threshold 8, 80-key tiles, 20
# bytes of spills) against 64-key tiles with the same switches (no spills), checked and timed.
D=.dev/s26
timeout 560 python3 bench/bench_sm90.py --k90 $D/chk --dims 256 --seqlens 1024,4096,8192,16384 --check --check-variants --bench --interleave --iters 10 --variants bkv64=$D/v256/bkv64 --out $OUT/run6_d256.json 2>&1 | grep -v " OK$" | tail -30
