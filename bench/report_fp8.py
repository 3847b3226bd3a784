"""Markdown table (and a plot where matplotlib is installed) of a bench_fp8.py run.

    python3 bench/report_fp8.py RUN.json OUT.md [OUT.png]
"""
import json
import sys


def table(res):
    lines = []
    if "accuracy" in res:
        lines += ["FA3 accuracy protocol (Q, K, V ~ N(0,1), 0.1% of entries ~ N(0, 100); B 2, H 16, "
                  "N 4096, D 128; RMSE against FP64):", "",
                  "| kernel | RMSE |", "|---|---|"]
        lines += [f"| {k} | {v:.2e} |" for k, v in res["accuracy"].items()]
        lines += [""]
    if "check" in res:
        ok = sum(r["ok"] for r in res["check"])
        lines += [f"Correctness: {ok}/{len(res['check'])} cases within tolerance "
                  "(bench_fp8.py check_one).", ""]
    rows = res.get("bench", [])
    if rows:
        lines += ["Kernel-only TFLOP/s (median of CUDA-event timings, host path hidden; FLOPs = "
                  "4 B H N^2 D, /2 causal; 16k tokens, hidden 2048), same process:", "",
                  "| D | causal | N | fp8 | fp8 block scales | fp8 + V^T | quant alone | "
                  "fp8 + quant | ours f16 | cudnn f16 | flash f16 | fp8 / ours f16 | "
                  "fp8 / cudnn | fp8 b2b (user) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

        def f(r, k):
            v = r.get(k)
            return f"{v:.0f}" if v is not None else "-"

        for r in rows:
            lines.append(
                f"| {r['d']} | {r['causal']} | {r['seqlen']} | {f(r, 'fp8_tflops')} | "
                f"{f(r, 'fp8_block_tflops')} | "
                f"{f(r, 'fp8+vT_tflops')} | {f(r, 'quant_tflops')} | {f(r, 'fp8+quant_tflops')} | "
                f"{f(r, 'ours_f16_tflops')} | {f(r, 'cudnn_tflops')} | {f(r, 'flash_tflops')} | "
                f"{r.get('fp8_vs_ours_f16', float('nan')):.2f} | "
                f"{r.get('fp8_vs_cudnn', float('nan')):.2f} | {f(r, 'fp8_b2b_tflops')} |")
        lines += ["", "quant alone: the FLOPs of the attention over the time of the per-tensor "
                  "quantization of q, k, v and V^T (amax, scale, cast, transpose) in torch; "
                  "fp8 b2b: 20 back-to-back calls through Kernel.__call__ (argument checks, "
                  "tensor maps, launch), V^T given."]
    return "\n".join(lines) + "\n"


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = res.get("bench", [])
    keys = sorted({(r["d"], r["causal"]) for r in rows})
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.5), squeeze=False)
    for ax, (d, causal) in zip(axes[0], keys):
        sel = [r for r in rows if r["d"] == d and r["causal"] == causal]
        xs = [r["seqlen"] for r in sel]
        for name in ("fp8", "ours_f16", "cudnn", "flash"):
            ys = [r.get(name + "_tflops") for r in sel]
            if all(y is not None for y in ys):
                ax.plot(xs, ys, marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"d{d} {'causal' if causal else 'full'}")
        ax.set_xlabel("seqlen")
        ax.set_ylabel("TFLOP/s")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path)
    return True


def main():
    res = json.load(open(sys.argv[1]))
    with open(sys.argv[2], "w") as f:
        f.write(f"# bench_fp8.py on {res.get('device')} (torch {res.get('torch')})\n\n")
        f.write(table(res))
    if len(sys.argv) > 3:
        plot(res, sys.argv[3])


if __name__ == "__main__":
    main()
