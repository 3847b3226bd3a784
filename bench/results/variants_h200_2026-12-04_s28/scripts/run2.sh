#!/bin/bash
# Session 28 run2: softcap's max from the raw scores (raw*), c folded into the exponent with the max
# over tanh (tmax), against main's kernels (base), one process; MUFU throughput microbenchmark.
S=.dev/s28; K=$S/k
timeout 60 python3 $S/mufu_rate.py 2>&1 | tail -6
alts=""; for d in raw tmax rawrb rawp8 npoly4 rb; do alts="$alts,$d=$K/$d"; done
for i in 1 2; do
timeout 150 python3 bench/bench_variants.py --k90 $K/base --bench --only softcap,alibi --alt ${alts#,} --out $OUT/run2_bench$i > $OUT/run2_bench$i.log 2>&1; echo "bench rc=$?"
grep -v "^ *$" $OUT/run2_bench$i.log | head -40
done
for d in raw tmax; do timeout 60 python3 bench/bench_variants.py --k90 $K/$d --check --only softcap --out $OUT/run2_check_$d > $OUT/run2_check_$d.log 2>&1; echo "check $d rc=$?: $(tail -1 $OUT/run2_check_$d.log)"; done
