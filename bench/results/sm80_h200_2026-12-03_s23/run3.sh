#!/bin/bash
# run3: the landed sm_80 forward (f0: ldmatrix / cp.async at 32-bit shared addresses + immediates;
# at D = 128 the masks' rows from %tid.x read again, in 32 bits) against main (k0), one process.
K=.dev/s23
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== fwd"; python3 bench/bench_sm80.py --kernels $K/f0 --variants main=$K/k0 --check --bench --out $OUT/run3_sm80_final.json 2>&1 | grep -v "^check.*OK$" | tail -60
echo "== racecheck"; compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/f0 2>&1 | tail -2
echo "== memcheck"; compute-sanitizer --tool memcheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/f0 2>&1 | tail -2
echo "== kv"; python3 bench/check_kv_cache.py --kernels $K/kv80 --out $OUT/run3_kv80.json 2>&1 | tail -1
echo "== variants"; python3 bench/bench_variants.py --k80 $K/v80 --check --out $OUT/run3_variants80 2>&1 | tail -1
