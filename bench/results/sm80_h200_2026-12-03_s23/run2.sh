#!/bin/bash
# run2: sm_80 forward without the ring (run1: it lost). t0: ldmatrix / cp.async at 32-bit shared
# addresses + immediates, the masks' band in 32 bits, the rows' diagonals from %tid.x read again in
# the masked branch; a0: t0 with the diagonals kept live; n0: addresses only; main = k0.
K=.dev/s23
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== fwd"; python3 bench/bench_sm80.py --kernels $K/t0 --variants main=$K/k0,addr=$K/n0,band=$K/a0,q16=$K/q16 --check --bench --out $OUT/run2_sm80_addr.json 2>&1 | grep -v "^check.*OK$" | tail -60
echo "== racecheck"; compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/t0 2>&1 | tail -2
echo "== synccheck"; compute-sanitizer --tool synccheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/t0 2>&1 | tail -2
echo "== memcheck"; compute-sanitizer --tool memcheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/t0 2>&1 | tail -2
echo "== kv"; python3 bench/check_kv_cache.py --kernels $K/kv80 --out $OUT/run2_kv80.json 2>&1 | tail -1
echo "== variants"; python3 bench/bench_variants.py --k80 $K/v80 --check --out $OUT/run2_variants80 2>&1 | tail -1
echo "== bwd check"; python3 bench/check_backward_kernel.py --kernels $K/b80 --no-time --out $OUT/run2_check_b80 2>&1 | tail -1
