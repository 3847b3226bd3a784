#!/bin/bash
# run1: ncu of the sm_80 backward (ours, FA_CHIP kernels) and torch flash's backward, D128 4k.
K=.dev/s21
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
for who in ours flash; do
  if [ $who = ours ]; then KN="regex:bwd_f16_d128_full_kernel$"; SKIP=2; else KN="regex:flash_bwd_dq_dk_dv"; SKIP=2; fi
  ncu --kernel-name "$KN" --launch-skip $SKIP --launch-count 1 --set full -o $OUT/$who python3 $K/prof80.py $K/k80 bwd_f16_d128_full 4096 > $OUT/ncu_$who.log 2>&1; tail -3 $OUT/ncu_$who.log
  ncu -i $OUT/$who.ncu-rep --page details > $OUT/${who}_details.txt 2>&1
  ncu -i $OUT/$who.ncu-rep --page source --csv --print-source sass > $OUT/${who}_sass.csv 2>&1
  python3 $K/top.py $OUT/${who}_sass.csv > $OUT/${who}_top.txt 2>&1; head -40 $OUT/${who}_top.txt
  grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|excessive|Est. Speedup|bank|Shared Memory Config|Dynamic Shared|Block Size|Grid Size|highest-utilized" $OUT/${who}_details.txt | head -40
  ncu -i $OUT/$who.ncu-rep --page raw --csv > $OUT/${who}_raw.csv 2>&1
  gzip $OUT/${who}_sass.csv; rm -f $OUT/$who.ncu-rep
done
