#!/bin/bash
# Session 30 run7: the split bias at head dims 64 and 256 (scripts/headdims.py).
S=.dev/s30; K=$S/k
FINAL=$OUT; OUT=/tmp/r7; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
OUT=$OUT timeout 400 python3 $S/scripts/headdims.py $K/hd $K/hd_base > $OUT/run7_headdims.log 2>&1; echo "rc=$?"; grep -v "^check.*OK$" $OUT/run7_headdims.log | head -30
tar czf $FINAL/run7.tgz -C $OUT .
