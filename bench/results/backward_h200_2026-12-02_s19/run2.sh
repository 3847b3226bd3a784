#!/bin/bash
K=.dev/s19
for c in $K/cubin/*.cubin; do n=$(basename $c .cubin); nvdisasm -c $c > $OUT/$n.sass 2>&1; echo "$n STL/LDL: $(grep -c 'STL\|LDL' $OUT/$n.sass)"; done
for k in k0 k1; do
ncu --kernel-name regex:bwd_f16_d128_causal_kernel$ --launch-skip 2 --launch-count 1 --set full --import-source no -o $OUT/prof_$k python3 .dev/pf/prof17.py $K/$k bwd_f16_d128_causal 4096 > $OUT/ncu_$k.log 2>&1; tail -2 $OUT/ncu_$k.log
ncu -i $OUT/prof_$k.ncu-rep --page details > $OUT/details_$k.txt 2>&1
ncu -i $OUT/prof_$k.ncu-rep --page source --csv --print-source sass > /tmp/sass_$k.csv 2>&1; python3 .dev/pf/top.py /tmp/sass_$k.csv > $OUT/top_$k.txt 2>&1; head -30 $OUT/top_$k.txt
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Registers Per|Achieved Occupancy|Stall|Compute \(SM\) Throughput|Memory Throughput|L2 Hit" $OUT/details_$k.txt | head -20
rm -f $OUT/prof_$k.ncu-rep
done
