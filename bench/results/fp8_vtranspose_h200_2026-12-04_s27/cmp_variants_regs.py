"""The issue-16 variant kernels (bench/kernels_variants.mlir, bf16, d128, B=1, H=16, N=16k) at
other setmaxnreg splits, interleaved, kernel only: python3 cmp_variants_regs.py OUT name=DIR ...
(first = base). Outputs compared to the base's (max |difference|)."""
import json, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
import common
import bench_variants as bv

out = sys.argv[1]
builds = [a.split("=", 1) for a in sys.argv[2:]]
N, H, B = 16384, 16, 1
torch.manual_seed(0)
q, k, v = (torch.randn(B, H, N, bv.D, device="cuda", dtype=bv.DT) for _ in range(3))
rows = []
for name, var in bv.VARIANTS.items():
    if var.get("additive") or var.get("boolean") or not common.has_kernel(builds[0][1], "var_" + name):
        continue
    tensors = var["inputs"](B, H, N, N) if var.get("inputs") else {}
    ks = {bn: common.load_named(bd, "var_" + name) for bn, bd in builds}
    fns = {bn: (lambda kk=kk: kk(q, k, v, **tensors)) for bn, kk in ks.items()}
    base = fns[builds[0][0]]()
    row = dict(variant=name)
    for bn, fn in fns.items():
        row[bn + "_maxdiff"] = (fn().float() - base.float()).abs().max().item()
    ts = {bn: [] for bn in fns}
    for r in range(5):
        for bn, fn in fns.items():
            ts[bn].append(common.time_ms(fn, 7))
    b = sorted(ts[builds[0][0]])[2]
    for bn in fns:
        row[bn + "_ms"] = sorted(ts[bn])[2]
        row[bn + "_speedup"] = b / row[bn + "_ms"]
    print(name, " ".join(f"{bn} {row[bn + '_ms']:.3f} ms ({row[bn + '_speedup']:.3f}x, diff "
                         f"{row[bn + '_maxdiff']:.2g})" for bn in fns), flush=True)
    rows.append(row)
json.dump(dict(device=torch.cuda.get_device_name(), builds=builds, rows=rows), open(out, "w"),
          indent=1)
