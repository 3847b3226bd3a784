"""Tables (markdown) and a bar plot (SVG, no plotting library needed) of
bench/check_backward_variants.py's JSON: each variant's backward against our plain backward,
and forward + backward against FlexAttention, with the run before block sparsity beside it.

  python3 bench/report_backward_variants.py FINAL.json [BEFORE.json] --out PREFIX
"""
import argparse
import json


def rows(path):
    return {r["variant"]: r for r in json.load(open(path)) if r.get("kind") == "bench"}


def table(final, before, before_label):
    out = ["| variant | backward TFLOP/s (visible work) | vs our plain backward | "
           f"{before_label} | fwd + bwd ms: ours / FlexAttention | ours vs Flex |",
           "|---|---|---|---|---|---|"]
    for name, r in final.items():
        b = before.get(name)
        flex = (f"{r['fwd_bwd_ms']:.2f} / {r['flex_fwd_bwd_ms']:.2f}"
                if "flex_fwd_bwd_ms" in r else f"{r.get('fwd_bwd_ms', float('nan')):.2f} / -")
        out.append(f"| {name} | {r['bwd_tflops']:.0f} | {r['bwd_vs_plain']:.2f}x | "
                   + (f"{b['bwd_vs_plain']:.2f}x" if b else "-") + f" | {flex} | "
                   + (f"{r['fwd_bwd_vs_flex']:.2f}x" if "fwd_bwd_vs_flex" in r else "-") + " |")
    return "\n".join(out)


def svg(final, before, title, before_label):
    names = list(final)
    w, h, left, top, bar = 760, 40 + 28 * len(names), 170, 30, 10
    scale = (w - left - 60) / 1.2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="18">{title}</text>']
    for i, n in enumerate(names):
        y = top + 28 * i
        parts.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{n}</text>')
        for k, (src, color) in enumerate(((before, "#bbbbbb"), (final, "#3366cc"))):
            r = src.get(n)
            if r:
                v = r["bwd_vs_plain"]
                parts.append(f'<rect x="{left}" y="{y + k * bar}" width="{v * scale:.1f}" '
                             f'height="{bar - 1}" fill="{color}"/>')
                if k:
                    parts.append(f'<text x="{left + v * scale + 4:.1f}" y="{y + 2 * bar - 2}">'
                                 f'{v:.2f}x</text>')
    x1 = left + scale
    parts.append(f'<line x1="{x1:.1f}" y1="{top - 4}" x2="{x1:.1f}" y2="{h - 6}" '
                 f'stroke="black" stroke-dasharray="3,3"/>')
    parts.append(f'<text x="{x1 + 3:.1f}" y="{h - 8}">1.0 = our plain backward '
                 f'(grey: {before_label})</text></svg>')
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("final")
    ap.add_argument("before", nargs="?")
    ap.add_argument("--out", required=True)
    ap.add_argument("--before-label", default="before block sparsity",
                    help="what BEFORE.json measured (its column and the plot's grey bars)")
    a = ap.parse_args()
    final = rows(a.final)
    before = rows(a.before) if a.before else {}
    with open(a.out + ".md", "w") as f:
        f.write(table(final, before, a.before_label) + "\n")
    with open(a.out + ".svg", "w") as f:
        f.write(svg(final, before, "Backward of attention variants, sm_90a, H200, B=1 H=16 "
                                   "N=16k d128 bf16: TFLOP/s of visible work / our plain",
                    a.before_label))


if __name__ == "__main__":
    main()
