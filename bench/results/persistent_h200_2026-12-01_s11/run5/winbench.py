"""Session 11: sliding-window kernels, one tile per CTA (def) vs persistent with two Q tiles
(pers: 40/232 registers, pers240: 24/240), interleaved, 16k tokens, hidden 2048; checks first."""
import json, os, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load_named, check_case, DT
from bench_sm90 import time_interleaved
W = ".dev/w"
KS = (("win_bf16_d128_1024", 128, (1024, 0)), ("win_bf16_d64_1024", 64, (1024, 0)), ("win_bf16_d128_256_64", 128, (256, 64)))
sets = ("def", "pers", "pers240")
torch.manual_seed(0)
ok = True
for name, d, win in KS:
    for s in sets:
        for B, Hq, Hkv, Nq, Nk in ((2, 4, 2, 1000, 1000), (1, 2, 1, 333, 517), (1, 2, 2, 517, 200), (1, 4, 1, 1000, 77), (1, 4, 4, 1, 1000), (1, 2, 1, 4096, 4096), (4, 16, 8, 2048, 2048)):
            r = check_case(load_named(f"{W}/{s}", name), "bf16", d, B, Hq, Hkv, Nq, Nk, window=win)
            ok &= r["ok"]
print("checks all right" if ok else "checks FAIL", flush=True)
rows = []
for name, d, win in KS:
    for n in (512, 1024, 2048, 4096, 8192, 16384):
        B, H = 16384 // n, 2048 // d
        q = torch.randn(B, H, n, d, device="cuda", dtype=torch.bfloat16); k = torch.randn_like(q); v = torch.randn_like(q)
        out = torch.empty_like(q)
        fns = {s: (lambda kk: lambda: kk(q, k, v, out=out))(load_named(f"{W}/{s}", name)) for s in sets}
        ms = time_interleaved(fns, 12)
        row = dict(kernel=name, seqlen=n, **{s + "_ms": ms[s] for s in sets})
        rows.append(row)
        print(f"{name} n{n}: " + " ".join(f"{s} {ms[s]*1e3:.1f}us" for s in sets) + f"  pers/def {ms['def']/ms['pers']:.3f} pers240/def {ms['def']/ms['pers240']:.3f}", flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "."), "r", "win.json"), "w"), indent=1)
