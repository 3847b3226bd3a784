#!/bin/bash
# Session 28 run5: rescale-before-pv on the plain kernels (bench/kernels_sm90.mlir, main's defaults =
# base) and on the mask_mod / mask variants (kall/off vs kall/rbm), round-robin in one process.
S=.dev/s28
timeout 300 python3 bench/bench_sm90.py --k90 $S/kp/base --bench --interleave --variants rb=$S/kp/rb --dtypes f16,bf16 --dims 64,128,256 --seqlens 1024,4096,16384 --iters 15 --out $OUT/run5_plain.json > $OUT/run5_plain.log 2>&1; echo "plain rc=$?"
grep "^bench" $OUT/run5_plain.log
VARS=doc_full,doc_causal,prefixlm,windowmod,window timeout 150 python3 $S/cmp_interleaved.py 31 off=$S/kall/off rbm=$S/kall/rbm 2>&1 | tee $OUT/run5_maskmod.log; cp $OUT/cmp_interleaved.json $OUT/run5_maskmod.json
