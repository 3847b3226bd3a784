#!/bin/bash
# Session 28 run10: document masking with split release and ping-pong off (the compiler's new
# default for a tensor-reading mask_mod at D = 128; kall/final4): correctness, sanitizers, speed
# against FlexAttention and the previous kernels (kall/final3) round-robin.
S=.dev/s28; K=$S/kall
timeout 120 python3 bench/bench_variants.py --k90 $K/final4 --check --only doc --out $OUT/run10_check > $OUT/run10_check.log 2>&1; echo "check rc=$?: $(tail -1 $OUT/run10_check.log)"
timeout 120 compute-sanitizer --tool racecheck python3 bench/bench_variants.py --k90 $K/final4 --sanitize --only doc --out /tmp/s1 > $OUT/run10_racecheck.log 2>&1; echo "racecheck rc=$?: $(grep -E 'RACECHECK SUMMARY' $OUT/run10_racecheck.log | tail -1)"
timeout 120 compute-sanitizer --tool synccheck python3 bench/bench_variants.py --k90 $K/final4 --sanitize --only doc --out /tmp/s2 > $OUT/run10_synccheck.log 2>&1; echo "synccheck rc=$?: $(grep -E 'ERROR SUMMARY' $OUT/run10_synccheck.log | tail -1)"
timeout 120 compute-sanitizer --tool memcheck python3 bench/bench_variants.py --k90 $K/final4 --sanitize --only doc --out /tmp/s3 > $OUT/run10_memcheck.log 2>&1; echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $OUT/run10_memcheck.log | tail -1)"
VARS=doc_causal,doc_full timeout 100 python3 $S/cmp_interleaved.py 31 prev=$K/final3 new=$K/final4 2>&1 | tee $OUT/run10_cmp.log; cp $OUT/cmp_interleaved.json $OUT/run10_cmp.json
for i in 1 2; do timeout 100 python3 bench/bench_variants.py --k90 $K/final4 --bench --only doc --out $OUT/run10_bench$i > $OUT/run10_bench$i.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run10_bench$i.log | head -6; done
