"""Session 11: the decode shapes fa/decode.py hands the plain d128 kernels (GQA 32:8 packed: q
[B*S, 8, 4, 128], Nk / S keys each), persistent default (def) vs one tile per CTA (old),
interleaved in one process; lse kernel where the plan splits (S > 1), else the plain one."""
import json, os, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load_named
from bench_sm90 import time_interleaved
rows = []
# (B, Nk, S) as bench_decode's plan chose them (run3/decode.md)
for B, Nk, S in ((1, 4096, 1), (1, 32768, 16), (1, 131072, 16), (8, 4096, 1), (8, 32768, 2), (8, 131072, 2), (64, 4096, 1), (64, 32768, 1), (64, 131072, 1)):
    q = torch.randn(B * S, 8, 4, 128, device="cuda", dtype=torch.float16)
    k = torch.randn(B * S, 8, Nk // S, 128, device="cuda", dtype=torch.float16)
    v = torch.randn_like(k)
    name = "dec_f16_d128_full_lse" if S > 1 else "dec_f16_d128_full"
    kd, ko = load_named(".dev/dec/def", name), load_named(".dev/dec/old", name)
    ref = ko(q, k, v); got = kd(q, k, v)
    a = got[0] if isinstance(got, tuple) else got; b = ref[0] if isinstance(ref, tuple) else ref
    err = (a.float() - b.float()).abs().max().item()
    ms = time_interleaved({"def": lambda: kd(q, k, v), "old": lambda: ko(q, k, v)}, 15)
    gb = 2 * k.numel() * 2 / (ms["def"] * 1e-3) / 1e9
    rows.append(dict(B=B, Nk=Nk, S=S, def_ms=ms["def"], old_ms=ms["old"], max_diff=err))
    print(f"B{B} Nk{Nk} S{S}: def {ms['def']*1e3:.1f}us old {ms['old']*1e3:.1f}us old/def {ms['old']/ms['def']:.3f} ({gb:.0f} GB/s) |def-old| {err:.1e}", flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "."), "r", "dec.json"), "w"), indent=1)
