#!/bin/bash
K=.dev/s19
C=bench/results/backward_h200_2026-12-02_s17/cmp.py
python3 $C $K/k0,$K/k1,$K/DBG_NOADDS,$K/DBG_NODQ,$K/DBG_NOEXP,$K/DBG_NOSTS $OUT/ablate.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_f16_d64_full 2>&1 | tail -12
