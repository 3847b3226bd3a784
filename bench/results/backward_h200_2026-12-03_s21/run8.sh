#!/bin/bash
# run8: sm_80 backward with no barrier closing the step (next step's loads issued after the opening barrier; k1b) vs run6's (k2dq).
K=.dev/s21
echo "== check k1b"; python3 bench/check_backward_kernel.py --kernels $K/k1b --no-time --out $OUT/check_k1b 2>&1 | grep -v " OK" | tail -4
echo "== det"; python3 bench/check_backward_deterministic.py --det $K/k1b_det --default $K/k1b --chip sm_80 --no-time --out $OUT/det_k1b 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck python3 bench/check_backward_kernel.py --kernels $K/k1b --few 2>&1 | tail -1
echo "== synccheck"; compute-sanitizer --tool synccheck python3 bench/check_backward_kernel.py --kernels $K/k1b --few 2>&1 | tail -1
echo "== cmp flash"; PEER=FLASH python3 $K/cmpf.py $K/k2dq,$K/k1b $OUT/cmp_k1b_flash.json bwd_f16_d128_full,bwd_f16_d128_causal,bwd_f16_d64_full,bwd_f16_d64_causal 2>&1 | tail -12
