#!/bin/bash
# Session 14, device call 5: softcap split-kv kernels checked; pages of 16 rows, where the time goes.
R=$OUT/r; mkdir -p $R
timeout 200 python3 .dev/sc_p16.py > $R/sc_p16.log 2>&1; echo rc $?; grep -v "^ok" $R/sc_p16.log | tail -8
cd $OUT && tar czf results.tgz r && rm -rf r
