"""Correctness and speed of the fa sm_80 FlashAttention-2 kernels on a GPU.

Usage (on a GPU machine, no MLIR needed):
    python3 bench/bench_sm80.py --kernels DIR [--variants name=DIR,...] [--check] [--bench]
        [--out results.json]
--variants adds other builds of the same kernels (e.g. rows-per-warp=32), checked and
timed in the same process next to DIR ("ours").
DIR holds <kernel>.ptx + <kernel>.json from
    fa-opt bench/kernels_sm80.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=DIR})'
--check compares against an f32 torch reference (bottom-right causal, GQA, odd lengths);
--bench times ours, torch SDPA flash and cudnn backends in this process
(FLOPs = 4 B H N^2 D, halved when causal; TFLOP/s on the median of CUDA-event timings).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from common import (DT, PEERS, check_case, check_growing_scores, load, load_named,  # noqa: E402
                    peer_fns, time_ms)


def check(kdir, quick=False):
    """Odd lengths, GQA, MQA, Nq != Nk both ways, tiny, the FA-paper sweep shapes (16k tokens),
    a sliding window (left 100, right 0) and lse with fully masked rows; `quick` (variants) keeps
    the shapes up to 2k."""
    torch.manual_seed(0)
    rows, cases = [], []
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                cases += [(dt, d, causal, 2, 8, 2, 1000, 1000), (dt, d, causal, 1, 4, 4, 77, 333),
                          (dt, d, causal, 2, 6, 3, 333, 77), (dt, d, causal, 1, 2, 1, 1, 1),
                          (dt, d, causal, 3, 4, 1, 129, 200)]
                for n in (512, 1024, 2048, 4096) + ((8192,) if d == 128 else ()):
                    cases.append((dt, d, causal, 16384 // n, 2048 // d, 2048 // d, n, n))
    if quick:
        cases = [c for c in cases if c[6] <= 2048]
    for dt, d, causal, B, Hq, Hkv, Nq, Nk in cases:
        rows.append(check_case(load(kdir, dt, d, causal), dt, d, B, Hq, Hkv, Nq, Nk, causal=causal,
                               torch_err=True))
    for dt, d in (("f16", 64), ("bf16", 128)):
        kern = load_named(kdir, f"attn_{dt}_d{d}_window")
        for B, Hq, Hkv, Nq, Nk in ((2, 4, 2, 1000, 1000), (1, 2, 1, 333, 517), (1, 2, 2, 517, 200)):
            rows.append(check_case(kern, dt, d, B, Hq, Hkv, Nq, Nk, window=(100, 0)))
    rows.append(check_case(load(kdir, "f16", 64, True, lse=True), "f16", 64, 2, 4, 2, 300, 200,
                           causal=True, lse=True))
    rows += check_growing_scores(kdir, (64, 128))
    return rows


def bench(kdir, seqlens, iters, variants=()):
    rows = []
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                kern = load(kdir, dt, d, causal)
                vkerns = [(name, load(vdir, dt, d, causal)) for name, vdir in variants]
                for n in seqlens:
                    B, H = 16384 // n, 2048 // d
                    q = torch.randn(B, H, n, d, device="cuda", dtype=DT[dt])
                    k = torch.randn_like(q)
                    v = torch.randn_like(q)
                    out = torch.empty_like(q)
                    flops = 4 * B * H * n * n * d / (2 if causal else 1)
                    row = dict(dtype=dt, d=d, causal=causal, seqlen=n, B=B, H=H)
                    row["ours_ms"] = time_ms(lambda: kern(q, k, v, out=out), iters)
                    for name, vk in vkerns:
                        row[name + "_ms"] = time_ms(lambda: vk(q, k, v, out=out), iters)
                        row[name + "_tflops"] = flops / (row[name + "_ms"] * 1e-3) / 1e12
                        row[name + "_ratio_flash"] = None
                    peers = peer_fns(q, k, v, causal)
                    for name, _ in PEERS:
                        row[name + "_ms"] = time_ms(peers[name], iters) if name in peers else None
                    for name in ("ours", "flash", "cudnn"):
                        ms = row[name + "_ms"]
                        row[name + "_tflops"] = flops / (ms * 1e-3) / 1e12 if ms else None
                    for peer in ("flash", "cudnn"):
                        row["ratio_" + peer] = (row["ours_tflops"] / row[peer + "_tflops"]
                                                if row[peer + "_tflops"] else None)
                    extra = ""
                    for name, _ in vkerns:
                        if row["flash_tflops"]:
                            row[name + "_ratio_flash"] = row[name + "_tflops"] / row["flash_tflops"]
                        extra += f" {name} {row[name + '_tflops']:.1f}"
                    print(f"bench {dt} d{d} causal={causal} n{n}: ours {row['ours_tflops']:.1f}{extra} "
                          f"flash {row['flash_tflops'] or 0:.1f} cudnn {row['cudnn_tflops'] or 0:.1f} TFLOP/s"
                          f" (x{row['ratio_flash'] or 0:.2f} flash)", flush=True)
                    rows.append(row)
                    del q, k, v, out
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--out", default="bench_sm80.json")
    ap.add_argument("--variants", default="", help="name=DIR,... other builds to check and time")
    a = ap.parse_args()
    variants = [tuple(x.split("=", 1)) for x in a.variants.split(",") if x]
    res = dict(date=time.strftime("%Y-%m-%d"), device=torch.cuda.get_device_name(),
               torch=torch.__version__)
    if a.check:
        res["check"] = check(a.kernels)
        print("check: %d/%d OK" % (sum(r["ok"] for r in res["check"]), len(res["check"])), flush=True)
        for name, vdir in variants:
            res["check_" + name] = check(vdir, quick=True)
            print("check %s: %d/%d OK" % (name, sum(r["ok"] for r in res["check_" + name]),
                                         len(res["check_" + name])), flush=True)
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if a.bench:
        res["variants"] = dict(variants)
        res["bench"] = bench(a.kernels, [int(s) for s in a.seqlens.split(",")], a.iters, variants)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
