#!/bin/bash
# Session 30 run4: the landed compiler (split bias + ping-pong off for it at D = 128): every variant
# checked on both chips, the error against f64 beside the unsplit kernels, the issue-16 table
# (B=1 H=16 N=16k d128 bf16; ours and session 29's kernels (base) round-robin with our plain kernel,
# FlexAttention, cudnn), compute-sanitizer memcheck and racecheck on the changed kernels.
S=.dev/s30; K=$S/k
FINAL=$OUT; OUT=/tmp/r4; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 python3 bench/bench_variants.py --k90 $K/fin_sm_90a --k80 $K/fin_sm_80 --check --out $OUT/run4_check > $OUT/run4_check.log 2>&1; echo "check rc=$?: $(grep -c ' OK' $OUT/run4_check.log) OK, $(grep -c FAIL $OUT/run4_check.log) FAIL, $(grep -c 'caught$' $OUT/run4_check.log) controls caught; $(tail -1 $OUT/run4_check.log)"
grep -E "FAIL|NOT CAUGHT" $OUT/run4_check.log | head
OUT=$OUT timeout 150 python3 $S/scripts/bias_error.py $K/base_sm_90a $K/fin_sm_90a > $OUT/run4_error.log 2>&1; echo "error rc=$?"; grep -v rounding $OUT/run4_error.log
timeout 420 python3 bench/bench_variants.py --k90 $K/fin_sm_90a --bench --alt base=$K/base_sm_90a --out $OUT/run4_bench > $OUT/run4_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run4_bench.log | head -60
for tool in memcheck racecheck; do timeout 150 compute-sanitizer --tool $tool python3 bench/bench_variants.py --k90 $K/fin_sm_90a --sanitize --only alibi,relpos,rowbias,tablebias --out $OUT/run4_$tool > $OUT/run4_$tool.log 2>&1; echo "$tool rc=$?"; tail -2 $OUT/run4_$tool.log; done
tar czf $FINAL/run4.tgz -C $OUT .
