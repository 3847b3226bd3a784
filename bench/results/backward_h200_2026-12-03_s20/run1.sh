#!/bin/bash
K=.dev/s20
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
for c in $K/cubin/*.cubin; do n=$(basename $c .cubin); nvdisasm -c -g $c > $OUT/$n.sass 2>/dev/null || nvdisasm -c $c > $OUT/$n.sass; echo "$n STL/LDL: $(grep -c 'STL\|LDL' $OUT/$n.sass)"; done
for n in 1 2 3; do python3 bench/check_backward_kernel.py --kernels $K/ks8 --no-time --out $OUT/check_ks8 2>&1 | tail -1; break; done
python3 $C .dev/s19/k0,$K/ks4,$K/ks6,$K/ks8 $OUT/cmp_split.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_bf16_d128_causal 2>&1 | tail -12
