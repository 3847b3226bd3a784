"""Session 30: the error of the split bias (new) against the unsplit kernels (base): ALiBi and
relpos, full and causal, against an f64 reference (B1 H8 d128 bf16, N 2048 and 8192: biases up
to slope * N), max / mean |o - ref| beside the floor (the exact result rounded to bf16).
Usage: bias_error.py BASE_DIR NEW_DIR"""
import os, sys, json, math
ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "bench")); sys.path.insert(0, os.path.join(ROOT, "python"))
import torch
import common
from bench_variants import VARIANTS

dirs = dict(base=sys.argv[1], new=sys.argv[2])
B, H, D = 1, 8, 128
rows = []
for N in (2048, 8192):
    for var in ("alibi_full", "alibi_causal", "relpos_full", "relpos_causal"):
        spec = VARIANTS[var]
        g = torch.Generator(device="cuda"); g.manual_seed(N)
        q, k, v = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
        s = torch.matmul(q.double(), k.double().transpose(-1, -2)) / math.sqrt(D)
        b_ = torch.arange(B, device="cuda")[:, None, None, None]
        h = torch.arange(H, device="cuda")[None, :, None, None]
        i = torch.arange(N, device="cuda")[:, None]
        j = torch.arange(N, device="cuda")[None, :]
        # the score_mod in f64 (the lambdas use float32 slopes: recompute them in f64)
        slope = torch.exp2(-0.5 * (h + 1).double())
        if var.startswith("alibi"):
            s = s + slope * (j - i).double()
        else:
            s = s + (-2 * slope * ((j - i).double() + 0.25) + 1.5)
        if spec.get("causal"):
            s = s.masked_fill(j > i, float("-inf"))
        ref = torch.softmax(s, -1) @ v.double()
        errs = {"bf16 rounding of the exact result": (ref.to(torch.bfloat16).double() - ref).abs()}
        for name, d in dirs.items():
            o = common.load_named(d, "var_" + var)(q, k, v)
            torch.cuda.synchronize()
            errs[name] = (o.double() - ref).abs()
        for name, e in errs.items():
            row = dict(variant=var, N=N, impl=name, max_abs=e.max().item(), mean_abs=e.mean().item(),
                       nan=bool(torch.isnan(e).any()))
            rows.append(row)
            print(f"{var} N{N}: {name:34s} max {row['max_abs']:.3e} mean {row['mean_abs']:.3e}", flush=True)
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows),
          open(os.path.join(os.environ.get("OUT", "."), "bias_error.json"), "w"), indent=1)
