#!/bin/bash
# Session 14, device call 3: decode steps in CUDA graphs (ours vs cudnn), back to back.
R=$OUT/r; mkdir -p $R
timeout 300 python3 .dev/graph.py $R/graph.json > $R/graph.log 2>&1
echo "graph rc $?"; cat $R/graph.log | tail -12
cd $OUT && tar czf results.tgz r && rm -rf r
