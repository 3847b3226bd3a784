#!/bin/bash
# Session 28 run8: schedule switches on the mask_mod kernels (document masking, prefix-LM, a window
# as mask_mod) of the landed compiler (k4/base; base2 an identical copy), round-robin, twice.
S=.dev/s28; K=$S/k4
b=""; for d in base base2 pr40 pr56 nopp wa0 thr12 thrm1 s2 kv112 kv96 sr; do b="$b $d=$K/$d"; done
for i in 1 2; do
VARS=doc_causal,doc_full,prefixlm,windowmod timeout 200 python3 $S/cmp_interleaved.py 31 $b 2>&1 | tee $OUT/run8_cmp$i.log; cp $OUT/cmp_interleaved.json $OUT/run8_cmp$i.json
done
