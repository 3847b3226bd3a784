#!/usr/bin/env python3
"""Session 24 run2: fa.attention at head dim 64 through the public API on the H200 (kernels
from an ahead-of-time bundle): from 2048 tokens it takes the three-warpgroup kernel
(block-q 192). Correctness against an f32 reference (the bench's), then what a user sees:
20 back-to-back calls, interleaved rounds, fa.attention now / fa.attention with the previous
choice (WIDE_TILE_MIN_TOKENS out of reach, same process) / torch SDPA cudnn / flash."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch  # noqa: E402

import fa  # noqa: E402
from fa import torch_ops  # noqa: E402
from common import DT, TOL, peer_fns, reference, time_back_to_back  # noqa: E402

fa.load_bundle(sys.argv[1])
out_path = sys.argv[2]
WIDE = torch_ops.WIDE_TILE_MIN_TOKENS
res = {"check": [], "bench": []}
torch.manual_seed(24)
ok_all = True
# (dtype, causal, B, Hq, Hkv, Nq, Nk, lse)
CASES = [("f16", False, 1, 8, 8, 2048, 2048, False), ("bf16", True, 1, 8, 2, 3001, 3001, True),
         ("f16", True, 2, 4, 1, 2049, 4097, False), ("bf16", False, 1, 4, 4, 4096, 2048, True),
         ("f16", True, 1, 4, 4, 5000, 5000, True), ("bf16", False, 2, 16, 4, 8192, 8192, False),
         ("f16", False, 1, 8, 8, 1024, 1024, False), ("bf16", True, 1, 8, 8, 16384, 16384, False)]
for dt, causal, B, Hq, Hkv, Nq, Nk, lse in CASES:
    q = torch.randn(B, Hq, Nq, 64, device="cuda", dtype=DT[dt])
    k = torch.randn(B, Hkv, Nk, 64, device="cuda", dtype=DT[dt])
    v = torch.randn(B, Hkv, Nk, 64, device="cuda", dtype=DT[dt])
    got = fa.attention(q, k, v, causal=causal, return_lse=lse)
    o, olse = got if lse else (got, None)
    ref, rlse = reference(q, k, v, causal, None)
    err = (o.float() - ref).abs().max().item()
    ok = err <= TOL[dt] and not torch.isnan(o).any().item()
    lerr = None
    if lse:
        fin = torch.isfinite(rlse)
        lerr = (olse[fin] - rlse[fin]).abs().max().item()
        ok = ok and lerr <= 1e-3 and bool((olse[~fin] == float("-inf")).all())
    wide = min(Nq, Nk) >= WIDE and not (causal and Nq == Nk and Nq <= 2048)
    row = dict(dtype=dt, causal=causal, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk, lse=lse, err=err,
               lse_err=lerr, ok=ok, three_warpgroups=wide)
    print("check", row, flush=True)
    res["check"].append(row)
    ok_all &= ok
print(f"check: {sum(r['ok'] for r in res['check'])}/{len(res['check'])}", flush=True)


def previous(fn):
    def call():
        torch_ops.WIDE_TILE_MIN_TOKENS = 1 << 40
        try:
            return fn()
        finally:
            torch_ops.WIDE_TILE_MIN_TOKENS = WIDE
    return call


for dt in ("f16", "bf16"):
    for causal in (False, True):
        for n in (1024, 2048, 4096, 8192, 16384):
            B, H = 16384 // n, 32
            q = torch.randn(B, H, n, 64, device="cuda", dtype=DT[dt])
            k, v = torch.randn_like(q), torch.randn_like(q)
            fns = {"fa": lambda: fa.attention(q, k, v, causal=causal)}
            fns["fa_previous"] = previous(fns["fa"])
            fns.update(peer_fns(q, k, v, causal))
            rounds = {nm: [] for nm in fns}
            for r in range(5):
                names = list(fns)[r % len(fns):] + list(fns)[:r % len(fns)]
                for nm in names:
                    rounds[nm].append(time_back_to_back(fns[nm]))
            ms = {nm: sorted(t)[len(t) // 2] for nm, t in rounds.items()}
            flops = 4 * B * H * n * n * 64 / (2 if causal else 1)
            row = dict(dtype=dt, causal=causal, seqlen=n, **{nm + "_ms": t for nm, t in ms.items()})
            row.update({nm + "_tflops": flops / (t * 1e-3) / 1e12 for nm, t in ms.items()})
            for peer in ("fa_previous", "cudnn", "flash"):
                if peer + "_ms" in row:
                    row["fa_vs_" + peer] = row[peer + "_ms"] / row["fa_ms"]
            print("bench", {kk: (round(vv, 3) if isinstance(vv, float) else vv)
                            for kk, vv in row.items()}, flush=True)
            res["bench"].append(row)
with open(out_path, "w") as fh:
    json.dump(res, fh, indent=1)
sys.exit(0 if ok_all else 1)
