#!/bin/bash
# Session 29 run1: softcap's tanh on f16 pairs (softcap-tanh-f16x2): SASS, error, speed round-robin.
S=.dev/s29; K=$S/k
FINAL=$OUT; OUT=/tmp/r1; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
TB=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin'))")
ls $TB
for b in base h2; do $TB/ptxas -arch=sm_90a $K/$b/var_softcap_full.ptx -o /tmp/$b.cubin && $TB/cuobjdump -sass /tmp/$b.cubin > $OUT/run1_sass_$b.txt 2>&1; echo "$b: $(grep -c MUFU.TANH $OUT/run1_sass_$b.txt) MUFU.TANH, $(grep -c MUFU.EX2 $OUT/run1_sass_$b.txt) MUFU.EX2"; grep -m3 -E "MUFU.TANH" $OUT/run1_sass_$b.txt; done
OUT=$OUT timeout 200 python3 $S/softcap_error.py > $OUT/run1_error.log 2>&1; echo "error rc=$?"; cat $OUT/run1_error.log | grep -v Warning | tail -20
for i in 1 2; do
VARS=softcap_full,softcap_causal OUT=$OUT timeout 120 python3 $S/cmp_interleaved.py 31 base=$K/base h2=$K/h2 2>&1 | tee $OUT/run1_cmp$i.log; cp $OUT/cmp_interleaved.json $OUT/run1_cmp$i.json
done
timeout 120 python3 bench/bench_variants.py --k90 $K/h2 --check --out $OUT/run1_check > $OUT/run1_check.log 2>&1; echo "check rc=$?: $(grep -c OK $OUT/run1_check.log) OK, $(grep -c FAIL $OUT/run1_check.log) FAIL"; grep softcap $OUT/run1_check.log | head -12
tar czf $FINAL/run1.tgz -C $OUT .
