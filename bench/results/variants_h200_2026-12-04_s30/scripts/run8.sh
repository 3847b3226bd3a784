#!/bin/bash
# Session 30 run8: packed MUFU forms' throughput and SASS (scripts/mufu16.py).
S=.dev/s30; FINAL=$OUT; OUT=/tmp/r8; mkdir -p $OUT
OUT=$OUT timeout 200 python3 $S/scripts/mufu16.py > $OUT/run8_mufu16.log 2>&1; echo "rc=$?"; cat $OUT/run8_mufu16.log
tar czf $FINAL/run8.tgz -C $OUT .
