#!/bin/bash
# Session 30 run9: ping-pong off (new) against the default (base) for the split-bias kernels at head dims 64 and 256.
S=.dev/s30; K=$S/k
FINAL=$OUT; OUT=/tmp/r9; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
TAG=run9 OUT=$OUT timeout 400 python3 $S/scripts/headdims.py $K/hd_nopp $K/hd > $OUT/run9_headdims.log 2>&1; echo "rc=$?"; grep -v "^check.*OK$" $OUT/run9_headdims.log | head -30
tar czf $FINAL/run9.tgz -C $OUT .
