#!/bin/bash
# Session 11, device call 7: d64 key-tile sizes (160, 192) on the persistent default; checks first.
set -x
R=$OUT/r; mkdir -p $R
K=.dev/b
for v in b192s4 b160s4; do
python3 - $K/$v > $R/check_$v.log 2>&1 <<'PY'
import sys; sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load, check_case
from bench_sm90 import ODD_SHAPES
ok = True
torch.manual_seed(0)
for dt in ("f16", "bf16"):
    for causal in (False, True):
        for B, Hq, Hkv, Nq, Nk in ODD_SHAPES + ((32, 32, 32, 512, 512), (4, 32, 32, 4096, 4096)):
            ok &= check_case(load(sys.argv[1], dt, 64, causal), dt, 64, B, Hq, Hkv, Nq, Nk, causal=causal)["ok"]
print("ALL OK" if ok else "FAIL")
PY
tail -1 $R/check_$v.log
done
python3 bench/bench_sm90.py --k90 $K/def --bench --interleave --dims 64 --iters 12 --variants old=$K/old,b192s4=$K/b192s4,b160s4=$K/b160s4,b192s3=$K/b192s3 --out $R/bench.json > $R/bench.log 2>&1
grep -E "^bench|gemm" $R/bench.log
cd $OUT && tar czf results.tgz r && rm -rf r
