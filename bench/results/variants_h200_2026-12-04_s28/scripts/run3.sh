#!/bin/bash
# Session 28 run3: softcap with c in the exponent (tmax) and the other candidates, timed round-robin
# against main's kernels (base) and an identical copy of them (base2, the control), one process, twice.
S=.dev/s28; K=$S/k
for i in 1 2; do
timeout 150 python3 $S/cmp_interleaved.py 31 base=$K/base base2=$K/base2 tmax=$K/tmax tmaxrb=$K/tmaxrb rb=$K/rb npoly4=$K/npoly4 npoly3=$K/npoly3 2>&1 | tee $OUT/run3_cmp$i.log; cp $OUT/cmp_interleaved.json $OUT/run3_cmp$i.json
done
timeout 60 python3 bench/bench_variants.py --k90 $K/tmax --check --only softcap --out $OUT/run3_check_tmax > $OUT/run3_check_tmax.log 2>&1; echo "check tmax rc=$?: $(tail -1 $OUT/run3_check_tmax.log)"
timeout 100 compute-sanitizer --tool memcheck python3 bench/bench_variants.py --k90 $K/tmax --sanitize --only softcap --out /tmp/san > $OUT/run3_memcheck_tmax.log 2>&1; echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $OUT/run3_memcheck_tmax.log | tail -1)"
