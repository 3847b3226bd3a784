#!/bin/bash
# run1: sm_80 forward. n0: ldmatrix / cp.async at 32-bit shared addresses + immediates; r0: n0 + the
# two-stage K/V ring with one barrier a step; m0: r0 + the masks' band in 32 bits (the candidate);
# m64: m0 at 64 keys; q16: m0 with 16-row warps (Q in registers); main = k0.
# The backward's loads (LoadPipeline) changed too: b80 (new) vs b80o (main).
K=.dev/s23
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== fwd"; python3 bench/bench_sm80.py --kernels $K/m0 --variants main=$K/k0,addr=$K/n0,ring=$K/r0,kv64=$K/m64,q16=$K/q16 --check --bench --out $OUT/run1_sm80_ring.json 2>&1 | tail -70
echo "== racecheck"; compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/m0 2>&1 | tail -2
echo "== synccheck"; compute-sanitizer --tool synccheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $K/m0 2>&1 | tail -2
echo "== kv"; python3 bench/check_kv_cache.py --kernels $K/kv80 --out $OUT/run1_kv80.json 2>&1 | tail -3
echo "== variants"; python3 bench/bench_variants.py --k80 $K/v80 --check --out $OUT/run1_variants80 2>&1 | tail -3
echo "== bwd check"; python3 bench/check_backward_kernel.py --kernels $K/b80 --no-time --out $OUT/run1_check_b80 2>&1 | grep -v " OK" | tail -4
echo "== bwd cmp"; python3 bench/compare_backward.py --dirs $K/b80o,$K/b80 --peer flash --names bwd_f16_d128_full,bwd_f16_d128_causal,bwd_f16_d64_full --out $OUT/run1_cmp_b80.json 2>&1 | tail -12
