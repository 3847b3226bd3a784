#!/bin/bash
# run4: sm_80 forward, the row max as a tree (f80t) against the chain (main, f80).
K=.dev/s21
python3 bench/bench_sm80.py --kernels $K/f80t --variants chain=$K/f80 --check --bench --out $OUT/run4_sm80_tree.json 2>&1 | tail -60
