#!/bin/bash
# Session 30 run1: sm_90a's split score_mod bias (ALiBi, relpos, row and table biases): every
# variant checked on both chips, the error against an f64 reference beside the unsplit kernels,
# the speed round-robin (split vs unsplit vs our plain kernel, FlexAttention), compute-sanitizer.
S=.dev/s30; K=$S/k
FINAL=$OUT; OUT=/tmp/r1; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 python3 bench/bench_variants.py --k90 $K/new_sm_90a --k80 $K/new_sm_80 --check --out $OUT/run1_check > $OUT/run1_check.log 2>&1; echo "check rc=$?: $(grep -c ' OK' $OUT/run1_check.log) OK, $(grep -c FAIL $OUT/run1_check.log) FAIL, $(grep -c 'caught$' $OUT/run1_check.log) controls caught; $(tail -1 $OUT/run1_check.log)"
grep -E "FAIL|NOT CAUGHT|rowbias|tablebias" $OUT/run1_check.log | head -30
OUT=$OUT timeout 150 python3 $S/scripts/bias_error.py $K/base_sm_90a $K/new_sm_90a > $OUT/run1_error.log 2>&1; echo "error rc=$?"; cat $OUT/run1_error.log
timeout 420 python3 bench/bench_variants.py --k90 $K/new_sm_90a --bench --only alibi,relpos --alt base=$K/base_sm_90a,new2=$K/new_sm_90a --out $OUT/run1_bench > $OUT/run1_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run1_bench.log | head -40
timeout 200 compute-sanitizer --tool memcheck python3 bench/bench_variants.py --k90 $K/new_sm_90a --sanitize --only alibi,relpos,rowbias,tablebias --out $OUT/run1_memcheck > $OUT/run1_memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/run1_memcheck.log
tar czf $FINAL/run1.tgz -C $OUT .
