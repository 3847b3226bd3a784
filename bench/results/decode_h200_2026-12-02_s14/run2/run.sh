#!/bin/bash
# Session 14, device call 2: host-path profile, decode sweep with the final plan (one wave), the paged sweep.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt
timeout 60 python3 .dev/prof.py > $R/prof.log 2>&1; head -45 $R/prof.log | cut -c1-150
timeout 180 python3 bench/bench_decode.py --bundle .dev/sk/dbundle --out $R/decode > $R/decode.log 2>&1
echo "decode rc $?"; tail -13 $R/decode.log
timeout 330 python3 bench/bench_decode.py --paged --bundle .dev/sk/pbundle --out $R/paged > $R/paged.log 2>&1
echo "paged rc $?"; tail -28 $R/paged.log | cut -c1-300
cd $OUT && tar czf results.tgz r && rm -rf r
