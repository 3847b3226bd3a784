#!/bin/bash
# Session 28 run9: split-release and combinations on document masking / prefix-LM (k5), round-robin, twice.
S=.dev/s28; K=$S/k5
b=""; for d in base base2 sr srnopp srkv96 srwa0 srpr40; do b="$b $d=$K/$d"; done
for i in 1 2; do
VARS=doc_causal,doc_full,prefixlm timeout 200 python3 $S/cmp_interleaved.py 31 $b 2>&1 | tee $OUT/run9_cmp$i.log; cp $OUT/cmp_interleaved.json $OUT/run9_cmp$i.json
done
