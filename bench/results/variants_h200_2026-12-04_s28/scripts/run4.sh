#!/bin/bash
# Session 28 run4: the landed compiler's variant kernels (rescale-before-pv on with a score_mod, its
# new measured default; kall/final) against the same compiler with it off (kall/off = main's
# kernels), round-robin in one process; the correctness sweep of every variant; memcheck.
S=.dev/s28; K=$S/kall
VARS=alibi_full,alibi_causal,relpos_full,relpos_causal,softcapmod_full,softcapmod_causal timeout 150 python3 $S/cmp_interleaved.py 31 off=$K/off final=$K/final 2>&1 | tee $OUT/run4_cmp.log; cp $OUT/cmp_interleaved.json $OUT/run4_cmp.json
timeout 200 python3 bench/bench_variants.py --k90 $K/final --check --out $OUT/run4_check > $OUT/run4_check.log 2>&1; echo "check rc=$?: $(tail -1 $OUT/run4_check.log)"
timeout 150 compute-sanitizer --tool memcheck python3 bench/bench_variants.py --k90 $K/final --sanitize --only alibi,relpos,softcapmod --out /tmp/san > $OUT/run4_memcheck.log 2>&1; echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $OUT/run4_memcheck.log | tail -1)"
timeout 60 python3 bench/bench_variants.py --k90 $K/final --bench --only alibi,relpos,softcapmod --out $OUT/run4_bench > $OUT/run4_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run4_bench.log | head -12
