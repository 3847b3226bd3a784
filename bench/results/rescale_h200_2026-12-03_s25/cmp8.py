"""Interleaved kernel-only comparison of fp8 kernel variants: cmp8.py OUT.json name=DIR ... -- KERNELS
Each kernel name (bench/kernels_fp8.mlir) at N in 1k..16k (16k tokens); first variant is the base;
outputs compared to the base's (max abs diff); rounds of interleaved medians."""
import json, os, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load_named, time_ms
from bench_fp8 import quantize, run_fp8
from fa_runtime.driver import transpose_v_fp8

out = sys.argv[1]
i = sys.argv.index("--")
variants = [a.split("=", 1) for a in sys.argv[2:i]]
names = sys.argv[i + 1:]
rows = []
for name in names:
    d = int(name.split("_d")[1].split("_")[0])
    causal = "causal" in name
    gran = "block" if "_block_" in name else "head" if "_head_" in name else "tensor"
    for n in (1024, 4096, 16384):
        B, H = 16384 // n, 2048 // d
        flops = 4 * B * H * n * n * d / (2 if causal else 1)
        q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        (q8, qd), (k8, kd), (v8, vd) = (quantize(x, gran) for x in (q, k, v))
        ks = {vn: load_named(vd_, name) for vn, vd_ in variants}
        v_t = transpose_v_fp8(v8, ks[variants[0][0]].manifest["v_key_order"])
        fns = {vn: (lambda kk=kk: run_fp8(kk, q8, k8, None, qd, kd, vd, v_t=v_t)) for vn, kk in ks.items()}
        base = fns[variants[0][0]]()
        base = base[0] if isinstance(base, tuple) else base
        row = dict(name=name, seqlen=n)
        for vn, fn in fns.items():
            o = fn(); o = o[0] if isinstance(o, tuple) else o
            row[vn + "_maxdiff"] = (o.float() - base.float()).abs().max().item()
        ts = {vn: [] for vn in fns}
        for r in range(3):
            for vn, fn in fns.items():
                ts[vn].append(time_ms(fn, 20))
        for vn in fns:
            ms = sorted(ts[vn])[1]
            row[vn + "_tflops"] = flops / ms / 1e9
        b = row[variants[0][0] + "_tflops"]
        print(name, n, " ".join(f"{vn} {row[vn+'_tflops']:.0f} ({row[vn+'_tflops']/b:.3f}x, diff {row[vn+'_maxdiff']:.2g})" for vn in fns), flush=True)
        rows.append(row)
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(out, "w"), indent=1)
