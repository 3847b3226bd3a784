"""Session 28: variant kernels of several builds timed round-robin (bench_sm90.time_interleaved) in
one process, B=1 H=16 N=16k d128 bf16. Usage: cmp_interleaved.py ROUNDS name=DIR ... (first = base)"""
import os, sys, json
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench")); sys.path.insert(0, os.path.join(ROOT, "python"))
import torch
import common
from bench_sm90 import time_interleaved
from bench_variants import VARIANTS
rounds = int(sys.argv[1]); builds = [a.split("=", 1) for a in sys.argv[2:]]
base = builds[0][1]
N, H, D = 16384, 16, 128
q, k, v = (torch.randn(1, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
rows = []
for var in os.environ.get("VARS", "softcap_full,softcap_causal,alibi_full,alibi_causal").split(","):
    causal = var.endswith("causal")
    pairs = H * (N * (N + 1) // 2 if causal else N * N)
    fns = {"plain": (lambda kern=common.load_named(base, "var_plain_" + ("causal" if causal else "full")): kern(q, k, v))}
    spec = VARIANTS[var]
    extra = spec["inputs"](1, H, N, N) if spec.get("inputs") else {}
    for name, d in builds:
        if common.has_kernel(d, "var_" + var):
            fns[name] = (lambda kern=common.load_named(d, "var_" + var): kern(q, k, v, **extra))
    t = time_interleaved(fns, rounds)
    b0 = t[builds[0][0]]
    line = f"{var}: " + ", ".join(f"{n} {4 * D * pairs / ms / 1e9:.0f} TF ({b0 / ms:.3f}x base, {t['plain'] / ms:.3f}x plain)" for n, ms in t.items())
    print(line, flush=True)
    rows.append(dict(variant=var, ms=t, pairs=pairs))
json.dump(dict(device=torch.cuda.get_device_name(), rounds=rounds, builds=builds, rows=rows),
          open(os.path.join(os.environ.get("OUT", "."), "cmp_interleaved.json"), "w"), indent=1)
