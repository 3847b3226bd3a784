"""Bar chart (SVG, no matplotlib) of run4's table: ours, our plain kernel, FlexAttention, TFLOP/s."""
import json, sys, os
src = sys.argv[1] if len(sys.argv) > 1 else "run4_bench.json"
rows = [r for r in json.load(open(src))["rows"] if r.get("kind") == "bench"]
series = [("fa (ours)", "ours_tflops", "#1f77b4"), ("fa plain kernel", "plain_tflops", "#ff7f0e"),
          ("FlexAttention", "flex_tflops", "#2ca02c")]
W, H, left, bottom, top = 1100, 420, 60, 110, 40
groupw = (W - left - 20) / len(rows); barw = groupw / 4
ymax = 800.0
y = lambda v: top + (H - top - bottom) * (1 - v / ymax)
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">sm_90a variants, H200, B1 H16 N16k d128 bf16 (session 30 run4): TFLOP/s of visible work</text>']
for t in range(0, 801, 100):
    out.append(f'<line x1="{left}" x2="{W-20}" y1="{y(t)}" y2="{y(t)}" stroke="#ddd"/><text x="{left-5}" y="{y(t)+4}" text-anchor="end">{t}</text>')
for g, r in enumerate(rows):
    x0 = left + g * groupw + barw / 2
    for s, (name, key, color) in enumerate(series):
        v = r.get(key) or 0
        out.append(f'<rect x="{x0 + s*barw:.1f}" y="{y(v):.1f}" width="{barw-1:.1f}" height="{y(0)-y(v):.1f}" fill="{color}"/>')
    cx = x0 + 1.5 * barw
    out.append(f'<text transform="translate({cx:.1f},{y(0)+12}) rotate(35)" text-anchor="start">{r["variant"]}</text>')
for s, (name, key, color) in enumerate(series):
    out.append(f'<rect x="{left + 10 + s*150}" y="{top}" width="12" height="12" fill="{color}"/><text x="{left + 26 + s*150}" y="{top+10}">{name}</text>')
out.append("</svg>")
open(os.path.splitext(src)[0] + ".svg", "w").write("\n".join(out))
