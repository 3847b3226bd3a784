"""Interleaved kernel-only comparison of fp8 kernel builds (pre-pass V^T or transpose-v):

    python3 cmp_var.py OUT.json name=DIR ... -- KERNEL_NAMES

The first build is the base; kernels built with transpose-v (manifest "transpose_v") get v as
stored, the others v_t made once beforehand. N in 1k, 4k, 16k (16k tokens, hidden 2048); the
outputs' max |difference| from the base's."""
import json, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load_named, time_ms
from bench_fp8 import quantize, run_fp8
from fa_runtime.driver import transpose_v_fp8

out = sys.argv[1]
i = sys.argv.index("--")
builds = [a.split("=", 1) for a in sys.argv[2:i]]
rows = []
first = lambda o: o[0] if isinstance(o, tuple) else o  # noqa: E731
for name in sys.argv[i + 1:]:
    d = int(name.split("_d")[1].split("_")[0])
    causal = "causal" in name
    gran = "block" if "_block_" in name else "head" if "_head_" in name else "tensor"
    ks = {bn: load_named(bd, name) for bn, bd in builds}
    order = next(k.manifest["v_key_order"] for k in ks.values() if "v_key_order" in k.manifest)
    for n in (1024, 4096, 16384):
        B, H = 16384 // n, 2048 // d
        flops = 4 * B * H * n * n * d / (2 if causal else 1)
        torch.manual_seed(n)
        q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        (q8, qd), (k8, kd), (v8, vd) = (quantize(x, gran) for x in (q, k, v))
        v_t = transpose_v_fp8(v8, order)
        fns = {bn: ((lambda kk=kk: run_fp8(kk, q8, k8, v8, qd, kd, vd))
                    if kk.manifest.get("transpose_v") else
                    (lambda kk=kk: run_fp8(kk, q8, k8, None, qd, kd, vd, v_t=v_t)))
               for bn, kk in ks.items()}
        base = first(fns[builds[0][0]]())
        row = dict(name=name, seqlen=n)
        for bn, fn in fns.items():
            row[bn + "_maxdiff"] = (first(fn()).float() - base.float()).abs().max().item()
        ts = {bn: [] for bn in fns}
        for r in range(5):
            for bn, fn in fns.items():
                ts[bn].append(time_ms(fn, 20))
        for bn in fns:
            row[bn + "_tflops"] = flops / sorted(ts[bn])[2] / 1e9
        b = row[builds[0][0] + "_tflops"]
        print(name, n, " ".join(f"{bn} {row[bn + '_tflops']:.0f} ({row[bn + '_tflops'] / b:.3f}x,"
                                f" diff {row[bn + '_maxdiff']:.2g})" for bn in fns), flush=True)
        rows.append(row)
json.dump(dict(device=torch.cuda.get_device_name(), builds=builds, rows=rows), open(out, "w"),
          indent=1)
