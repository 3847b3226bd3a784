#!/bin/bash
# Session 28 run11 / run12: bench_variants.py --alt now round-robin (run12: and our plain kernel in the
# same rounds): an identical copy of the kernels (base2) must come out at 1.00x.
S=.dev/s28
timeout 120 python3 bench/bench_variants.py --k90 $S/kall/final4 --bench --only alibi,doc --alt same=$S/kall/final4b,prev=$S/kall/final3 --out $OUT/run12_alt > $OUT/run12_alt.log 2>&1; echo "rc=$?"; grep -v "^ *$" $OUT/run12_alt.log
