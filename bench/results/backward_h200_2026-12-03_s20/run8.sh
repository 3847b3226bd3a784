#!/bin/bash
K=.dev/s20
ncu --kernel-name regex:bwd_f16_d128_full_kernel$ --launch-skip 2 --launch-count 1 --set full -o $OUT/prof python3 .dev/pf/prof17.py $K/k32_sm_90a bwd_f16_d128_full 4096 > $OUT/ncu.log 2>&1; tail -2 $OUT/ncu.log
ncu -i $OUT/prof.ncu-rep --page details > $OUT/details.txt 2>&1
ncu -i $OUT/prof.ncu-rep --page source --csv --print-source sass > $OUT/sass.csv 2>&1
head -c 3000 $OUT/sass.csv | head -3 | cut -c1-1500
python3 .dev/pf/top.py $OUT/sass.csv > $OUT/top.txt 2>&1; head -50 $OUT/top.txt
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|excessive|Est. Speedup|bank" $OUT/details.txt | head -30
gzip $OUT/sass.csv; rm -f $OUT/prof.ncu-rep
