#!/bin/bash
# Session 28 run1: softcap (issue 16) — where its time goes (ncu, softcap vs plain) and what the
# schedule switches / exponent polynomial give, one process.
S=.dev/s28; K=$S/k
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
alts=""; for d in npoly2 npoly3 npoly4 opoly2 opoly4 rb sr thrm1 fs0 kv64 kv96 s2; do alts="$alts,$d=$K/$d"; done
timeout 200 python3 bench/bench_variants.py --k90 $K/base --bench --only softcap,alibi --alt ${alts#,} --out $OUT/run1_bench > $OUT/run1_bench.log 2>&1; echo "bench rc=$?"
grep -v "^ *$" $OUT/run1_bench.log | head -80
for d in npoly2 npoly4; do timeout 60 python3 bench/bench_variants.py --k90 $K/$d --check --only softcap,alibi --out $OUT/run1_check_$d > $OUT/run1_check_$d.log 2>&1; echo "check $d rc=$?: $(tail -1 $OUT/run1_check_$d.log)"; done
for n in softcap_full plain_full; do
  timeout 90 ncu --clock-control none --profile-from-start off --set full --import-source no -f -o /tmp/$n python3 $S/prof_variant.py $K/base var_$n > $OUT/ncu_$n.log 2>&1; echo "ncu $n rc=$?"
  ncu --import /tmp/$n.ncu-rep --page details > $OUT/ncu_$n.details.txt 2>&1
  ncu --import /tmp/$n.ncu-rep --page source --csv --print-source sass > $OUT/ncu_$n.sass.csv 2>&1
  grep -E "Duration|Issue Slots Busy|Executed Ipc Active|No Eligible|Warp Cycles Per Issued|Compute \(SM\) Throughput|SM Frequency" $OUT/ncu_$n.details.txt | head -12
done
