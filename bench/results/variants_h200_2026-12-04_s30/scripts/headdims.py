"""Session 30 run7: the split bias at head dims 64 (f16) and 256 (bf16) on sm_90a: each kernel
checked against the f32 reference (tails, GQA, Nq != Nk; lse for alibilse), then timed round-robin
against the same kernel compiled without the split (hd_base: the constructor's splitBias off,
i.e. session 29's arithmetic), B=1, N=16k, H=16 (d64) / 8 (d256). Usage: headdims.py NEW BASE"""
import os, sys, json, math
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch, common
from bench_variants import VARIANTS, reference, masked_scores
new, base = sys.argv[1], sys.argv[2]
rows = []
names = sorted(f[:-len("_kernel.json")] for f in os.listdir(new) if f.endswith("_kernel.json"))
for name in names:
    var = VARIANTS[name[len("var_"):].rsplit("_d", 1)[0]]
    d = int(name.rsplit("_d", 1)[1])
    dt = torch.float16 if d == 64 else torch.bfloat16
    for kdir, tag in ((new, "new"), (base, "base")):
        kern = common.load_named(kdir, name)
        for (B, Hq, Hkv, Nq, Nk) in ((2, 8, 2, 1000, 1000), (1, 4, 4, 384, 1024), (1, 2, 2, 2304, 2304)):
            g = torch.Generator(device="cuda"); g.manual_seed(Nq)
            q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dt, generator=g)
            k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dt, generator=g)
            v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dt, generator=g)
            o = kern(q, k, v)
            lse = None
            if var.get("lse"):
                o, lse = o
            torch.cuda.synchronize()
            err = (o.float() - reference(q, k, v, var, {})).abs().max().item()
            ok = err <= 3e-2 and bool(torch.isfinite(o).all())
            if lse is not None:
                ref_lse = torch.logsumexp(masked_scores(q, k, v, var, {})[0], -1)
                le = ((lse - ref_lse).abs() / (3e-2 + 1e-5 * ref_lse.abs())).max().item()
                ok = ok and le <= 1
            rows.append(dict(kind="check", kernel=name, build=tag, shape=[B, Hq, Hkv, Nq, Nk], err=err, ok=ok))
            print(f"check {tag} {name} {B, Hq, Hkv, Nq, Nk}: err {err:.2e} {'OK' if ok else 'FAIL'}", flush=True)
    N, H = 16384, (16 if d == 64 else 8)
    q, k, v = (torch.randn(1, H, N, d, device="cuda", dtype=dt) for _ in range(3))
    kn, kb_ = common.load_named(new, name), common.load_named(base, name)
    t = common.time_interleaved({"new": lambda: kn(q, k, v), "base": lambda: kb_(q, k, v)}, 21)
    pairs = H * (N * (N + 1) // 2 if var.get("causal") else N * N)
    rows.append(dict(kind="bench", kernel=name, ms=t, new_over_base=t["base"] / t["new"],
                     tflops_new=4 * d * pairs / t["new"] / 1e9))
    print(f"bench {name}: new {4 * d * pairs / t['new'] / 1e9:.0f} TFLOP/s, {t['base'] / t['new']:.3f}x the base build", flush=True)
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows),
          open(os.path.join(os.environ.get("OUT", "."), os.environ.get("TAG", "run7") + "_headdims.json"), "w"), indent=1)
bad = [r for r in rows if r.get("ok") is False]
print(f"{len(bad)} failures")
