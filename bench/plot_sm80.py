"""PNG of a bench_sm80.py JSON (needs matplotlib): python3 bench/plot_sm80.py results.json out.png

One panel per (dtype, head dim, causal): TFLOP/s vs seqlen for ours, its variants,
torch SDPA flash (FA2) and cudnn, all from the same process."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

r = json.load(open(sys.argv[1]))
rows = r["bench"]
panels = sorted({(b["dtype"], b["d"], b["causal"]) for b in rows})
series = ["ours"] + list(r.get("variants", {})) + ["flash", "cudnn"]
fig, axes = plt.subplots(2, (len(panels) + 1) // 2, figsize=(4 * ((len(panels) + 1) // 2), 7),
                         squeeze=False)
for ax, (dt, d, causal) in zip(axes.flat, panels):
    sel = [b for b in rows if (b["dtype"], b["d"], b["causal"]) == (dt, d, causal)]
    ns = [b["seqlen"] for b in sel]
    for name in series:
        ys = [b.get(name + "_tflops") for b in sel]
        if any(ys):
            ax.plot(ns, [y or float("nan") for y in ys], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_title(f"{dt} d{d} {'causal' if causal else 'full'}")
    ax.set_xlabel("seqlen")
    ax.set_ylabel("TFLOP/s")
    ax.grid(alpha=0.3)
axes.flat[0].legend(fontsize=8)
fig.suptitle(f"fa sm_80 kernel (PTX JIT) vs torch SDPA, {r['device']}, {r['date']}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
