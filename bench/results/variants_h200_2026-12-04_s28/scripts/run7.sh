#!/bin/bash
# Session 28 run7: the second landed defaults (producer-registers 56 with a score_mod at D = 128,
# ping-pong off for softcap alone at D = 128; kall/final2) against the first commit's kernels
# (kall/final), round-robin, twice; the whole variant check; memcheck of the changed kernels.
S=.dev/s28; K=$S/kall
for i in 1 2; do
VARS=alibi_full,alibi_causal,relpos_full,relpos_causal,softcap_full,softcap_causal,softcapmod_full,softcapmod_causal timeout 150 python3 $S/cmp_interleaved.py 31 prev=$K/final new=$K/final2 2>&1 | tee $OUT/run7_cmp$i.log; cp $OUT/cmp_interleaved.json $OUT/run7_cmp$i.json
done
timeout 200 python3 bench/bench_variants.py --k90 $K/final2 --check --out $OUT/run7_check > $OUT/run7_check.log 2>&1; echo "check rc=$?: $(tail -1 $OUT/run7_check.log)"
timeout 150 compute-sanitizer --tool memcheck python3 bench/bench_variants.py --k90 $K/final2 --sanitize --only alibi,relpos,softcap --out /tmp/san > $OUT/run7_memcheck.log 2>&1; echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $OUT/run7_memcheck.log | tail -1)"
timeout 150 compute-sanitizer --tool racecheck python3 bench/bench_variants.py --k90 $K/final2 --sanitize --only softcap_full,alibi_full --out /tmp/san2 > $OUT/run7_racecheck.log 2>&1; echo "racecheck rc=$?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/run7_racecheck.log | tail -1)"
timeout 90 python3 bench/bench_variants.py --k90 $K/final2 --bench --out $OUT/run7_bench > $OUT/run7_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run7_bench.log | head -20
