#!/bin/bash
# Session 14, device call 4: the host path after its cuts; the decode sweep again (user times).
R=$OUT/r; mkdir -p $R
timeout 90 python3 .dev/hostpath2.py > $R/hostpath.log 2>&1; cat $R/hostpath.log | tail -19
timeout 200 python3 bench/bench_decode.py --bundle .dev/sk/dbundle --out $R/decode > $R/decode.log 2>&1
echo "decode rc $?"; tail -12 $R/decode.log
cd $OUT && tar czf results.tgz r && rm -rf r
