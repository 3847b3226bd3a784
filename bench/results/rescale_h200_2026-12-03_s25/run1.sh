#!/bin/bash
# Session 25 run1: conditional rescaling (threshold 8 = t8, 0 = t0) against main, sm_80 PTX and sm_90a.
cd "$(dirname "$0")/../.."
D=.dev/s25
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== neg control (threshold 1000: growth checks must FAIL, plain must pass)"
python3 - <<'PY' 2>&1 | tail -12
import sys; sys.path.insert(0, "bench")
import torch
from common import check_growing_scores, check_case, load
torch.manual_seed(0)
rows = check_growing_scores(".dev/s25/sm80_1000", (64, 128))
print("neg growth ok:", sum(r["ok"] for r in rows), "/", len(rows))
rows = [check_case(load(".dev/s25/sm80_1000", dt, d, c), dt, d, 2, 8, 2, 1000, 1000, causal=c) for dt in ("f16","bf16") for d in (64,128) for c in (False, True)]
print("neg plain ok:", sum(r["ok"] for r in rows), "/", len(rows))
PY
echo "== sm80"
python3 bench/bench_sm80.py --kernels $D/sm80_8 --variants main=$D/sm80_none,t0=$D/sm80_0 --check --bench --out $OUT/run1_sm80.json 2>&1 | grep -v "^check.*OK$" | tail -60
echo "== sm90 check"
python3 bench/bench_sm90.py --k90 $D/sm90_8 --check --check-variants --variants t0=$D/sm90_0,w3=$D/w3_8 --out $OUT/run1_sm90_check.json 2>&1 | grep -E "FAIL|^check" | grep -v "OK$" | tail -30
