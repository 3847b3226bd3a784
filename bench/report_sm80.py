"""Markdown table from a bench_sm80.py JSON: python3 bench/report_sm80.py results.json [title]"""
import json
import sys

r = json.load(open(sys.argv[1]))
title = sys.argv[2] if len(sys.argv) > 2 else "sm_80 FlashAttention-2 kernel"
out = [f"# {title}: {r['device']}, {r['date']}, torch {r['torch']}", ""]
if "check" in r:
    ok = sum(c["ok"] for c in r["check"])
    out += [f"Correctness: {ok}/{len(r['check'])} cases within tolerance "
            "(max abs error vs an f32 reference; f16 <= 4e-3, bf16 <= 3e-2).", ""]
if "bench" in r:
    out += ["TFLOP/s, FLOPs = 4 B H N^2 D (halved when causal), B = 16384/N, H = 2048/D; "
            "CUDA events, median of 10, all three in one process.", "",
            "| dtype | d | causal | seqlen | ours | flash (FA2) | cudnn | ours/flash | ours/cudnn |",
            "|---|---|---|---|---|---|---|---|---|"]
    for b in r["bench"]:
        f = lambda x: f"{x:.1f}" if x else "-"
        g = lambda x: f"{x:.2f}" if x else "-"
        out.append(f"| {b['dtype']} | {b['d']} | {'yes' if b['causal'] else 'no'} | {b['seqlen']} | "
                   f"{f(b['ours_tflops'])} | {f(b['flash_tflops'])} | {f(b['cudnn_tflops'])} | "
                   f"{g(b['ratio_flash'])} | {g(b['ratio_cudnn'])} |")
print("\n".join(out))
