#!/bin/bash
# Session 30 run5: the split bias on sm_80 too (the A100 kernel's PTX, JIT-compiled on the H200):
# every variant checked on both chips, ALiBi / relpos sm_80 kernels timed round-robin against the
# unsplit sm_80 kernels (fin_sm_80 = run4's) and our sm_80 plain kernel, memcheck on the changed ones.
S=.dev/s30; K=$S/k
FINAL=$OUT; OUT=/tmp/r5; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 python3 bench/bench_variants.py --k90 $K/fin_sm_90a --k80 $K/fin80_sm_80 --check --out $OUT/run5_check > $OUT/run5_check.log 2>&1; echo "check rc=$?: $(grep -c ' OK' $OUT/run5_check.log) OK, $(grep -c FAIL $OUT/run5_check.log) FAIL, $(grep -c 'caught$' $OUT/run5_check.log) controls caught; $(tail -1 $OUT/run5_check.log)"
grep -E "FAIL|NOT CAUGHT" $OUT/run5_check.log | head
timeout 300 python3 bench/bench_variants.py --k90 $K/fin80_sm_80 --bench --only alibi,relpos --alt base=$K/fin_sm_80 --out $OUT/run5_bench_sm80 > $OUT/run5_bench_sm80.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run5_bench_sm80.log | head -30
timeout 150 compute-sanitizer --tool memcheck python3 bench/bench_variants.py --k80 $K/fin80_sm_80 --sanitize --only alibi,relpos,rowbias,tablebias --out $OUT/run5_memcheck > $OUT/run5_memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/run5_memcheck.log
tar czf $FINAL/run5.tgz -C $OUT .
