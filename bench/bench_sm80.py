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
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from fa_runtime import Kernel  # noqa: E402

DT = {"f16": torch.float16, "bf16": torch.bfloat16}


_LOADED = {}


def load(kdir, dt, d, causal, lse=False):
    """The kernel's module, JIT-compiled once per process."""
    name = f"attn_{dt}_d{d}_{'causal' if causal else 'full'}" + ("_lse" if lse else "") + "_kernel"
    path = os.path.join(kdir, name + ".json")
    if path not in _LOADED:
        _LOADED[path] = Kernel.load(path)
    return _LOADED[path]


def reference(q, k, v, causal, window=None):
    """f32 reference; causal is bottom-right aligned; window = (left, right) keys
    around the bottom-right diagonal (-1 unbounded); fully masked rows -> 0."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    kf = k.float().repeat_interleave(r, dim=1)
    vf = v.float().repeat_interleave(r, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) / math.sqrt(D)
    if causal:
        window = (-1, 0)
    if window:
        i = torch.arange(Nq, device=q.device)[:, None]
        j = torch.arange(Nk, device=q.device)[None, :]
        dist = j - (i + (Nk - Nq))
        left, right = window
        if right >= 0:
            s = s.masked_fill(dist > right, float("-inf"))
        if left >= 0:
            s = s.masked_fill(dist < -left, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    o = torch.matmul(p, vf) / torch.where(l == 0, torch.ones_like(l), l)
    lse = (m + torch.log(l)).squeeze(-1)
    return o, lse


def check(kdir, quick=False):
    torch.manual_seed(0)
    rows = []
    cases = []
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                # odd lengths, GQA, MQA, Nq != Nk both ways, tiny
                cases += [(dt, d, causal, 2, 8, 2, 1000, 1000), (dt, d, causal, 1, 4, 4, 77, 333),
                          (dt, d, causal, 2, 6, 3, 333, 77), (dt, d, causal, 1, 2, 1, 1, 1),
                          (dt, d, causal, 3, 4, 1, 129, 200)]
                for n in (512, 1024, 2048, 4096) + ((8192,) if d == 128 else ()):
                    # FA-paper sweep shapes (16k tokens)
                    cases.append((dt, d, causal, 16384 // n, 2048 // d, 2048 // d, n, n))
    if quick:  # variants: the odd shapes and one large one per kernel
        cases = [c for c in cases if c[6] <= 2048]
    for dt, d, causal, B, Hq, Hkv, Nq, Nk in cases:
        kern = load(kdir, dt, d, causal)
        q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=DT[dt])
        k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=DT[dt])
        v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=DT[dt])
        o = kern(q, k, v)
        torch.cuda.synchronize()
        ref, _ = reference(q, k, v, causal)
        err = (o.float() - ref).abs().max().item()
        # error of torch's own low-precision SDPA vs the same reference, for scale
        if causal and Nq != Nk:
            terr = float("nan")
        else:
            to = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hq != Hkv)
            terr = (to.float() - ref).abs().max().item()
        tol = 4e-3 if dt == "f16" else 3e-2
        ok = err <= tol and not math.isnan(err)
        rows.append(dict(dtype=dt, d=d, causal=causal, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk,
                         max_abs_err=err, torch_sdpa_err=terr, tol=tol, ok=ok))
        print(f"check {dt} d{d} causal={causal} B{B} Hq{Hq} Hkv{Hkv} Nq{Nq} Nk{Nk}: "
              f"err {err:.2e} (torch {terr:.2e}) {'OK' if ok else 'FAIL'}", flush=True)
        del q, k, v, o, ref
    # sliding window (left 100, right 0), Nq != Nk both ways
    for dt, d in (("f16", 64), ("bf16", 128)):
        kern = Kernel.load(os.path.join(kdir, f"attn_{dt}_d{d}_window_kernel.json"))
        for B, Hq, Hkv, Nq, Nk in ((2, 4, 2, 1000, 1000), (1, 2, 1, 333, 517), (1, 2, 2, 517, 200)):
            q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=DT[dt])
            k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=DT[dt])
            v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=DT[dt])
            o = kern(q, k, v)
            ref, _ = reference(q, k, v, False, window=(100, 0))
            err = (o.float() - ref).abs().max().item()
            tol = 4e-3 if dt == "f16" else 3e-2
            ok = err <= tol and not math.isnan(err)
            print(f"check window(100,0) {dt} d{d} B{B} Hq{Hq} Hkv{Hkv} Nq{Nq} Nk{Nk}: err {err:.2e} "
                  f"{'OK' if ok else 'FAIL'}", flush=True)
            rows.append(dict(dtype=dt, d=d, causal=False, window=[100, 0], B=B, Hq=Hq, Hkv=Hkv,
                             Nq=Nq, Nk=Nk, max_abs_err=err, tol=tol, ok=ok))
    # lse variant
    kern = load(kdir, "f16", 64, True, lse=True)
    q = torch.randn(2, 4, 300, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(2, 2, 200, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(2, 2, 200, 64, device="cuda", dtype=torch.float16)
    o, lse = kern(q, k, v)
    ref, rlse = reference(q, k, v, True)
    fin = torch.isfinite(rlse)
    lerr = (lse[fin] - rlse[fin]).abs().max().item()
    inf_ok = bool(torch.all(torch.isneginf(lse[~fin])).item())
    err = (o.float() - ref).abs().max().item()
    ok = err <= 4e-3 and lerr <= 1e-3 and inf_ok
    print(f"check lse f16 d64 causal Nq300 Nk200: out err {err:.2e} lse err {lerr:.2e} "
          f"masked rows -inf {inf_ok} {'OK' if ok else 'FAIL'}", flush=True)
    rows.append(dict(dtype="f16", d=64, causal=True, lse=True, B=2, Hq=4, Hkv=2, Nq=300, Nk=200,
                     max_abs_err=err, lse_err=lerr, ok=ok))
    return rows


def time_ms(fn, iters):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


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
                    for name, be in (("flash", SDPBackend.FLASH_ATTENTION),
                                     ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                        try:
                            with sdpa_kernel([be]):
                                row[name + "_ms"] = time_ms(
                                    lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), iters)
                        except Exception as e:  # backend unavailable for this shape
                            row[name + "_ms"] = None
                            print(f"  {name} failed: {e}", flush=True)
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
