#!/bin/bash
# Session 25 run3: the conditional rescale with selects for the row statistics (only O's
# multiplications branched), threshold 8 everywhere (sel80, sel90, w3sel), against main and
# run1-2's branched version (if8); correctness (incl. growing scores), synccheck of the vote.
cd "$(dirname "$0")/../.."
D=.dev/s25
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== sm80"
python3 bench/bench_sm80.py --kernels $D/sel80 --variants main=$D/sm80_none,if8=$D/sm80_8 --check --bench --out $OUT/run3_sm80.json 2>&1 | grep -E "^bench|FAIL|OK$" | grep -v "^check [fb]" | tail -60
echo "== sm90"
python3 bench/bench_sm90.py --k90 $D/sel90 --check --bench --interleave --iters 10 --variants main=$D/sm90_none,if8=$D/sm90_8 --out $OUT/run3_sm90.json 2>&1 | grep -E "^bench|gemm|FAIL|^check:" | tail -80
echo "== w3"
python3 bench/bench_sm90.py --k90 $D/w3sel --dims 64 --check --bench --interleave --iters 10 --variants main=$D/w3_none --out $OUT/run3_w3.json 2>&1 | grep -E "^bench|FAIL|^check:" | tail -30
echo "== synccheck sm90"; timeout 120 compute-sanitizer --tool synccheck --print-limit 5 python3 bench/sanitize_sm90.py $D/sel90 2>&1 | tail -2
echo "== racecheck sm90"; timeout 120 compute-sanitizer --tool racecheck --print-limit 5 python3 bench/sanitize_sm90.py $D/sel90 2>&1 | tail -2
echo "== synccheck sm80"; timeout 100 compute-sanitizer --tool synccheck --kernel-name kns=attn_ python3 bench/sanitize_kernels.py $D/sel80 2>&1 | tail -2
