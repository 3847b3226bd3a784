#!/bin/bash
# Session 30 run6: the landed kernels again: compute-sanitizer synccheck on the changed kernels, and a
# second sample of the ALiBi / relpos rows of the table (ours, our plain kernel and session 29's
# kernels round-robin, FlexAttention in the same process).
S=.dev/s30; K=$S/k
FINAL=$OUT; OUT=/tmp/r6; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 compute-sanitizer --tool synccheck python3 bench/bench_variants.py --k90 $K/fin_sm_90a --sanitize --only alibi,relpos,rowbias,tablebias --out $OUT/run6_synccheck > $OUT/run6_synccheck.log 2>&1; echo "synccheck rc=$?"; tail -2 $OUT/run6_synccheck.log
timeout 300 python3 bench/bench_variants.py --k90 $K/fin_sm_90a --bench --only alibi,relpos --alt base=$K/base_sm_90a --out $OUT/run6_bench > $OUT/run6_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run6_bench.log | head -30
tar czf $FINAL/run6.tgz -C $OUT .
