#!/bin/bash
# run7: ncu of the final sm_80 backward (k2dq), f16 D = 128, N = 4k (flash's profile: run1).
K=.dev/s21
who=final
ncu --kernel-name "regex:bwd_f16_d128_full_kernel$" --launch-skip 2 --launch-count 1 --set full -o $OUT/$who python3 $K/prof80.py $K/k2dq bwd_f16_d128_full 4096 > $OUT/ncu_$who.log 2>&1; tail -1 $OUT/ncu_$who.log
ncu -i $OUT/$who.ncu-rep --page details > $OUT/${who}_details.txt 2>&1
ncu -i $OUT/$who.ncu-rep --page source --csv --print-source sass > $OUT/${who}_sass.csv 2>&1
python3 $K/top.py $OUT/${who}_sass.csv > $OUT/${who}_top.txt 2>&1; sed -n 2,25p $OUT/${who}_top.txt
grep -E "Duration|Registers Per|highest-utilized" $OUT/${who}_details.txt | head -5
ncu -i $OUT/$who.ncu-rep --page raw --csv > $OUT/${who}_raw.csv 2>&1
rm -f $OUT/$who.ncu-rep $OUT/${who}_sass.csv
