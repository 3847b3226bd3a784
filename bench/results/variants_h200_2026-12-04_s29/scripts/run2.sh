#!/bin/bash
# Session 29 run2: main's compiler at the end of the session (document-masking default back on;
# sm_90a kernels byte-identical to session 28's kall/final4): every variant checked on both chips,
# and the issue-16 table (B=1 H=16 N=16k d128 bf16; ours, our plain kernel, FlexAttention, cudnn).
S=.dev/s29; K=$S/k
FINAL=$OUT; OUT=/tmp/r2; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 python3 bench/bench_variants.py --k90 $K/main90 --k80 $K/main80 --check --out $OUT/run2_check > $OUT/run2_check.log 2>&1; echo "check rc=$?: $(grep -c ' OK' $OUT/run2_check.log) OK, $(grep -c FAIL $OUT/run2_check.log) FAIL, $(grep -c 'caught$' $OUT/run2_check.log) controls caught; $(tail -1 $OUT/run2_check.log)"
timeout 300 python3 bench/bench_variants.py --k90 $K/main90 --bench --out $OUT/run2_bench > $OUT/run2_bench.log 2>&1; echo "bench rc=$?"; grep -v "^ *$" $OUT/run2_bench.log | head -60
python3 - $OUT <<'PY' || true
import json, sys, os
out = sys.argv[1]
rows = [r for r in json.load(open(os.path.join(out, "run2_bench.json")))["rows"] if r.get("kind") == "bench"]
import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
names = [r["variant"] for r in rows]
x = range(len(rows)); w = 0.27
fig, ax = plt.subplots(figsize=(12, 4.5))
ax.bar([i - w for i in x], [r["ours_tflops"] for r in rows], w, label="fa (ours)")
ax.bar(list(x), [r["plain_tflops"] for r in rows], w, label="fa plain kernel")
ax.bar([i + w for i in x], [r.get("flex_tflops") or 0 for r in rows], w, label="FlexAttention")
ax.set_xticks(list(x)); ax.set_xticklabels(names, rotation=30, ha="right")
ax.set_ylabel("TFLOP/s of visible work"); ax.set_title("sm_90a variants, H200, B1 H16 N16k d128 bf16 (session 29 run2)")
ax.legend(); fig.tight_layout(); fig.savefig(os.path.join(out, "run2_bench.png"), dpi=110)
print("plot written")
PY
tar czf $FINAL/run2.tgz -C $OUT .
