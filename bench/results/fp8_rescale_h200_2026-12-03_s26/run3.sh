#!/bin/bash
# Session 26 run3: d128 schedule levers re-measured with conditional rescaling on (the default):
# rescale-before-pv, 176-key tiles at 2 stages, split release, 2 stages; interleaved, f16.
D=.dev/s26
timeout 560 python3 bench/bench_sm90.py --k90 $D/k90 --dims 128 --dtypes f16 --seqlens 1024,4096,16384 --check-variants --bench --interleave --iters 10 --variants rbpv=$D/var/rbpv,bkv176=$D/var/bkv176,sr=$D/var/sr,s2=$D/var/s2 --out $OUT/run3_d128_levers.json 2>&1 | tail -40
