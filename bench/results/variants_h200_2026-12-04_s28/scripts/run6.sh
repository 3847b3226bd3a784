#!/bin/bash
# Session 28 run6: schedule switches on the softcap and ALiBi kernels of the landed compiler
# (k2/base; base2 an identical copy), round-robin in one process, twice.
S=.dev/s28; K=$S/k2
for i in 1 2; do
timeout 200 python3 $S/cmp_interleaved.py 31 base=$K/base base2=$K/base2 nopp=$K/nopp wa0=$K/wa0 pr40=$K/pr40 pr56=$K/pr56 kv112=$K/kv112 kv96s2=$K/kv96s2 kv144s2=$K/kv144s2 kv176s2=$K/kv176s2 thr12=$K/thr12 2>&1 | tee $OUT/run6_cmp$i.log; cp $OUT/cmp_interleaved.json $OUT/run6_cmp$i.json
done
