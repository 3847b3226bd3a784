#!/bin/bash
# Session 25 run4: the landed conditional rescale (the defaults: sm_80 threshold 8, sm_90a 8 at
# D = 128 and full D = 256) on the correctness sweeps that run1-3 did not cover: kv_lens / paged
# kernels of both chips, in-kernel split-KV, the variant kernels (softcap, masks, score_mod /
# mask_mod) of both chips, varlen, fa.attention from a bundle (python_h200.py); sanitizers on the
# default kernels; the sm_80 plots of run1 / run3.
cd "$(dirname "$0")/../.."
D=.dev/s25
R=bench/results/rescale_h200_2026-12-03_s25
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== kv"; python3 bench/check_kv_cache.py --kernels $D/sweep/kv90 --kernels $D/sweep/kv80 --out $OUT/run4_kv.json 2>&1 | tail -2
echo "== split-kv"; python3 bench/check_kv_cache.py --kernels $D/sweep/sk90 --kernels $D/sweep/skkv90 --splits 1,3,7 --out $OUT/run4_split_kv.json 2>&1 | tail -2
echo "== variants"; python3 bench/bench_variants.py --k90 $D/sweep/v90 --k80 $D/sweep/v80 --check --out $OUT/run4_variants 2>&1 | tail -4
echo "== varlen"; python3 bench/bench_varlen.py --kdir $D/sweep/vl90 --check --out $OUT/run4_varlen.json 2>&1 | tail -3
echo "== python"; python3 bench/python_h200.py --bundle $D/bundle --out $OUT/run4_python.json 2>&1 | tail -45
echo "== synccheck sm90"; timeout 100 compute-sanitizer --tool synccheck --print-limit 5 python3 bench/sanitize_sm90.py $D/final90 2>&1 | tail -2
echo "== racecheck sm90"; timeout 100 compute-sanitizer --tool racecheck --print-limit 5 python3 bench/sanitize_sm90.py $D/final90 2>&1 | tail -2
echo "== memcheck sm90"; timeout 100 compute-sanitizer --tool memcheck --print-limit 5 python3 bench/sanitize_sm90.py $D/final90 2>&1 | tail -2
echo "== synccheck sm80"; timeout 80 compute-sanitizer --tool synccheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $D/final80 2>&1 | tail -2
echo "== racecheck sm80"; timeout 80 compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $D/final80 2>&1 | tail -2
python3 bench/plot_sm80.py $R/run1_sm80.json $OUT/run1_sm80.png
python3 bench/plot_sm80.py $R/run3_sm80.json $OUT/run3_sm80.png
