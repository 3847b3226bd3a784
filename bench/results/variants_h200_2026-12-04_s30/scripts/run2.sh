#!/bin/bash
# Session 30 run2: schedule switches around the split bias (ALiBi, relpos; bf16 d128 16k),
# each build timed round-robin with the main build and our plain kernel in one process.
S=.dev/s30; K=$S/k; W=$S/sw
FINAL=$OUT; OUT=/tmp/r2; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
ALTS=$(for d in $W/*; do printf "%s=%s," $(basename $d) $d; done)
timeout 500 python3 bench/bench_variants.py --k90 $K/new_sm_90a --bench --only alibi,relpos --alt "${ALTS%,}" --out $OUT/run2_bench > $OUT/run2_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run2_bench.log | head -60
tar czf $FINAL/run2.tgz -C $OUT .
