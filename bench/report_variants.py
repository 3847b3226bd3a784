"""Markdown table and plot of bench_variants.py's JSON (issue 16).

  python bench/report_variants.py RESULT.json OUT_PREFIX
"""
import json
import sys


def main(path, prefix):
    data = json.load(open(path))
    rows = data["rows"]
    checks = [r for r in rows if r["kind"] == "check"]
    controls = [r for r in rows if r["kind"] == "negative_control"]
    bench = [r for r in rows if r["kind"] == "bench"]
    out = [f"# Attention variants on the {data['device']} (torch {data['torch']})", ""]
    ok = sum(r["ok"] for r in checks)
    out.append(f"Correctness: {ok}/{len(checks)} checks within tolerance (bf16, d128, against an "
               f"f32 reference applying the variant); negative controls caught "
               f"{sum(r['caught'] for r in controls)}/{len(controls)}.")
    worst = {}
    for r in checks:
        key = (r["chip"], r["variant"])
        worst[key] = max(worst.get(key, 0), r["max_abs_err"])
    out += ["", "| chip | variant | worst max abs err |", "|---|---|---|"]
    out += [f"| {c} | {v} | {e:.2e} |" for (c, v), e in sorted(worst.items())]
    out += ["", "Speed, sm_90a, B=1, H=16, N=16384, d128, bf16: TFLOP/s of visible work "
            "(4 * D * visible pairs), kernel-only (host path hidden); b2b = back-to-back calls "
            "through the public API, host included.", "",
            "| variant | visible | ours TFLOP/s | ours ms | b2b ms | vs our plain | "
            "FlexAttention TFLOP/s | ours / Flex | cudnn plain TFLOP/s |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in bench:
        flex = f"{r['flex_tflops']:.0f}" if "flex_tflops" in r else "-"
        vs = f"{r['vs_flex']:.2f}x" if "vs_flex" in r else "-"
        cd = f"{r['cudnn_plain_tflops']:.0f}" if r.get("cudnn_plain_tflops") else "-"
        out.append(f"| {r['variant']} | {r['visible_fraction']:.3f} | {r['ours_tflops']:.0f} | "
                   f"{r['ours_ms']:.3f} | {r['ours_b2b_ms']:.3f} | {r['vs_plain']:.2f}x | {flex} | "
                   f"{vs} | {cd} |")
    for r in rows:
        if r["kind"] == "window_vs_windowmod":
            out += ["", f"Sliding window as mask_mod vs the built-in window: "
                    f"{r['maskmod_ms']:.3f} ms vs {r['builtin_ms']:.3f} ms "
                    f"({r['ratio']:.3f}x the time)."]
    open(prefix + ".md", "w").write("\n".join(out) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [r["variant"] for r in bench]
        x = range(len(names))
        fig, ax = plt.subplots(figsize=(10, 4))
        ax.bar([i - 0.2 for i in x], [r["ours_tflops"] for r in bench], 0.4, label="fa (ours)")
        ax.bar([i + 0.2 for i in x], [r.get("flex_tflops", 0) for r in bench], 0.4,
               label="FlexAttention")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("TFLOP/s (visible work)")
        ax.set_title("sm_90a variants, N=16k, H=16, d128, bf16")
        ax.legend()
        fig.tight_layout()
        fig.savefig(prefix + ".png", dpi=100)
    except Exception as e:  # no matplotlib here: an SVG written by hand
        print(f"no matplotlib ({e}): {prefix}.svg")
        open(prefix + ".svg", "w").write(svg(bench))


def svg(bench):
    """Bars of TFLOP/s (visible work): ours, an --alt build's ('old', grey) and FlexAttention."""
    series = [("fa (ours)", "#3366cc", lambda r: r["ours_tflops"]),
              ("--alt old", "#bbbbbb", lambda r: r.get("alts", {}).get("old", {}).get("tflops")),
              ("FlexAttention", "#dd8844", lambda r: r.get("flex_tflops"))]
    w, left, top, bar = 820, 150, 46, 9
    h = top + 30 * len(bench) + 20
    top_v = max(f(r) or 0 for r in bench for _, _, f in series)
    scale = (w - left - 70) / top_v
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             'font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="16">sm_90a variants, H200, B=1 H=16 N=16k d128 bf16: '
             'TFLOP/s of visible work</text>']
    for k, (label, color, _) in enumerate(series):
        parts.append(f'<rect x="{left + 130 * k}" y="26" width="10" height="10" fill="{color}"/>'
                     f'<text x="{left + 130 * k + 14}" y="35">{label}</text>')
    for i, r in enumerate(bench):
        y = top + 30 * i
        parts.append(f'<text x="{left - 6}" y="{y + 16}" text-anchor="end">{r["variant"]}</text>')
        for k, (_, color, f) in enumerate(series):
            v = f(r)
            if v:
                parts.append(f'<rect x="{left}" y="{y + k * bar}" width="{v * scale:.1f}" '
                             f'height="{bar - 1}" fill="{color}"/><text x="{left + v * scale + 3:.1f}" '
                             f'y="{y + k * bar + 8}" font-size="9">{v:.0f}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
