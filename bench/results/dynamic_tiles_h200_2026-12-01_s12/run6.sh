#!/bin/bash
# Session 12, device call 6: where dynamic tiles lose at long causal: ncu of the default (one tile
# per CTA) and the dynamic kernel, causal bf16 d128 and d64 at 16k tokens.
set -x
R=$OUT/r; mkdir -p $R
K=.dev/k2
for d in 128 64; do
for v in def dyn8; do
  tag=${v}_d${d}
  timeout 200 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    -f -o /tmp/$tag python3 bench/profile_sm90.py --which ours --k90 $K/$v --dtype bf16 --d $d --seqlen 16384 --causal > $R/$tag.log 2>&1
  echo "$tag rc=$?"
  ncu --import /tmp/$tag.ncu-rep --page details > $R/$tag.details.txt 2>&1
  ncu --import /tmp/$tag.ncu-rep --page raw --csv > $R/$tag.raw.csv 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Hit|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per Thread|Stall|Eligible Warps" $R/$tag.details.txt | head -24
done
done
cd $OUT && tar czf results.tgz r && rm -rf r
