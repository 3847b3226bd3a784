import os, sys, math
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch, common
from bench_variants import VARIANTS, reference
D = 128
for cfg in sorted(os.listdir(".dev/s30/dbg")):
    d = os.path.join(".dev/s30/dbg", cfg)
    for var in ("alibi_full", "alibi_causal"):
        kern = common.load_named(d, "var_" + var)
        for N in (128, 256, 1024):
            for qz in (True, False):
                g = torch.Generator(device="cuda"); g.manual_seed(N)
                q, k, v = (torch.randn(1, 2, N, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
                if qz: q = q * 0
                o = kern(q, k, v); torch.cuda.synchronize()
                ref = reference(q, k, v, VARIANTS[var], {})
                e = (o.float() - ref).abs()
                # which rows are bad
                bad = (e.amax(-1) > 3e-2).nonzero()
                print(f"{cfg} {var} N{N} q0={qz}: max {e.max().item():.2e} bad rows {bad.shape[0]} first {bad[:4, 2].tolist()}", flush=True)
