#!/bin/bash
# Session 26 run2: the fp8 check with the emulation control on an ordinary case, the growing-score
# comparison against the every-step kernels, and the speed table (k8 = the new defaults).
D=.dev/s26
echo "== check (k8)"
timeout 200 python3 bench/bench_fp8.py --k8 $D/k8 --check --out $OUT/run2_check_k8.json 2>&1 | grep -v " OK$" | tail -12
echo "== growth (k8 against k0)"
timeout 100 python3 bench/bench_fp8.py --k8 $D/k8 --k8-every $D/k0 --growth --out $OUT/run2_growth.json 2>&1 | tail -14
echo "== bench"
timeout 280 python3 bench/bench_fp8.py --k8 $D/k8 --k90 $D/k90 --bench --out $OUT/run2_bench.json 2>&1 | tail -45
