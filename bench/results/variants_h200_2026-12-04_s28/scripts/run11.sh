#!/bin/bash
# Session 28 run11 / run12: bench_variants.py --alt now round-robin (run12: and our plain kernel in the
# same rounds): an identical copy of the kernels (base2) must come out at 1.00x.
S=.dev/s28
timeout 120 python3 bench/bench_variants.py --k90 $S/k2/base --bench --only alibi,softcap --alt same=$S/k2/base2,nopp=$S/k2/nopp --out $OUT/run11_alt > $OUT/run11_alt.log 2>&1; echo "rc=$?"; grep -v "^ *$" $OUT/run11_alt.log
