#!/bin/bash
K=.dev/s20
timeout 420 python3 bench/bench_sm90.py --k90 $K/f90new --variants old=$K/f90old --check --bench --dims 64,128 --seqlens 512,1024,2048,4096,16384 --out $OUT/sm90_fwd_tile32.json 2>&1 | grep -E "check|bench.*causal=False" | tail -30
