"""Markdown table from a bench_sm80.py JSON: python3 bench/report_sm80.py results.json [title]"""
import json
import sys

r = json.load(open(sys.argv[1]))
title = sys.argv[2] if len(sys.argv) > 2 else "sm_80 FlashAttention-2 kernel"
variants = list(r.get("variants", {}))
out = [f"# {title}: {r['device']}, {r['date']}, torch {r['torch']}", ""]
for key in ["check"] + ["check_" + v for v in variants]:
    if key in r:
        ok = sum(c["ok"] for c in r[key])
        name = "ours" if key == "check" else key[6:]
        out += [f"Correctness ({name}): {ok}/{len(r[key])} cases within tolerance "
                "(max abs error vs an f32 reference; f16 <= 4e-3, bf16 <= 3e-2).", ""]
if "bench" in r:
    vh = "".join(f" {v} |" for v in variants)
    out += ["TFLOP/s, FLOPs = 4 B H N^2 D (halved when causal), B = 16384/N, H = 2048/D; "
            f"CUDA events, median of {r.get('iters', 20)}, all in one process.", "",
            f"| dtype | d | causal | seqlen | ours |{vh} flash (FA2) | cudnn | ours/flash | ours/cudnn |",
            "|---|---|---|---|---|" + "---|" * len(variants) + "---|---|---|---|"]
    for b in r["bench"]:
        f = lambda x: f"{x:.1f}" if x else "-"
        g = lambda x: f"{x:.2f}" if x else "-"
        vc = "".join(f" {f(b.get(v + '_tflops'))} |" for v in variants)
        out.append(f"| {b['dtype']} | {b['d']} | {'yes' if b['causal'] else 'no'} | {b['seqlen']} | "
                   f"{f(b['ours_tflops'])} |{vc} {f(b['flash_tflops'])} | {f(b['cudnn_tflops'])} | "
                   f"{g(b['ratio_flash'])} | {g(b['ratio_cudnn'])} |")
print("\n".join(out))
