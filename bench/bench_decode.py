#!/usr/bin/env python3
"""Decoding on the GPU (issue 14): one query row per sequence, GQA 32:8, d128,
through the public API fa.attention (GQA packing + split-KV, fa/decode.py),
against torch SDPA flash (FlashAttention-2) and cudnn and a device copy, in
one process.

    python3 bench/bench_decode.py --bundle .dev/dbundle --out $OUT/decode

Per point (B sequences x Nk cached keys): correctness of ours (split and not)
against an f32 reference on the first sequences; kernel-only time (a queued GPU
sleep hides the host path: bench/common.time_ms) and what a user sees (20
back-to-back calls, host path included) for ours (with the planned split, and
with FA_SPLIT_KV off: one CTA per head and 128-row tile, the pre-session
path), flash, cudnn; each split count S that divides Nk, to check the plan.
GB/s = bytes of K and V read / time. The copy: a device-to-device copy of a
buffer of K+V's size, (read + write) bytes / time.

--paged (issue 14 items 2, 5, 6): paged KV caches with per-sequence lengths
through fa.attention(..., kv_lens=, page_table=), page sizes 16, 64, 256
(--page-sizes), B x capacity points (--points). Per point the contiguous
cache [B, 8, Nk, 128] and, per page size, a pool holding the same keys in
shuffled pages (the table a random permutation of the pool's pages, 5% of
them spare), so that ours paged and ours contiguous compute the same
attention. Two length sets: "full" (every kv_lens = Nk) and "varied" (kv_lens
uniform in [Nk/2, Nk], the first a prime, the second 0 when B > 1).
Correctness first, on the first (up to 4) sequences against the f32
reference (fa.torch_ops.reference with kv_lens and the page table): ours paged
(split as planned, and unsplit), ours contiguous. Then kernel
times (time_ms) and GB/s of the K and V bytes the lengths cover, for ours
paged (planned split), ours paged unsplit (FA_SPLIT_KV off), ours contiguous
("full": without kv_lens, split in equal chunks as before; "varied": with
kv_lens, packed, split only with one K/V head), SDPA flash and cudnn on
the contiguous cache (no per-sequence lengths there: their time is for the
whole cache; in "varied" rows their GB/s counts the bytes of the whole cache
too, what they read), and the copy. A page size whose kernels are missing
from the bundle is reported (no kernel) and skipped, the rest still runs.
Writes OUT.json, OUT.md (tables) and prints them; exits 1 on a failure.

Bundles (on the build machine; --print-specs needs no torch):

    PYTHONPATH=python FA_CAPI_LIBRARY=build/lib/libFAPythonCAPI.so \
      python3 -m fa.precompile --chip sm_90a --out .dev/pbundle \
      $(python3 bench/bench_decode.py --paged --print-specs)
    python3 bench/bench_decode.py --paged --bundle .dev/pbundle --check-bundle-only
    # on the GPU machine:
    python3 bench/bench_decode.py --paged --bundle .dev/pbundle --out $OUT/paged
"""
import argparse
import json
import math
import os
import random
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import fa  # noqa: E402

HQ, HKV, D = 32, 8, 128
PAGE_SIZES = (16, 64, 256)
# B x capacity (keys per sequence) of the paged sweep.
PAGED_POINTS = ((1, 32768), (1, 131072), (8, 32768), (8, 131072), (64, 8192), (64, 32768))


def needed_specs(dtype="f16", paged=False, page_sizes=PAGE_SIZES):
    """The variant specs the sweep launches (sm_90a; fa.precompile --chip
    sm_80 takes the same for FA_CHIP=sm_80): the contiguous cache's packed
    kernel (full, with and without lse) and the unsplit causal one (the
    correctness checks ask for lse), the softcap checks' two; with --paged
    the same four with kv_lens (the contiguous cache with lengths) and per
    page size with kv_lens (the split always passes per-chunk lengths)."""
    specs = [f"{dtype},d{D},{m}{lse}" for m in ("full", "causal") for lse in ("", ",lse")]
    if not paged:  # the softcap checks: the prefill shape, the split decode
        specs += [f"{dtype},d{D},causal,softcap=30.0", f"{dtype},d{D},full,lse,softcap=30.0"]
    if paged:
        specs += [f"{s},kv_lens" for s in specs[:]]
        specs += [f"{dtype},d{D},{m}{lse},kv_lens,page={S}" for S in page_sizes
                  for m in ("full", "causal") for lse in ("", ",lse")]
    # The in-kernel split-KV kernels of the packed (non-causal) calls.
    specs += [f"{s},split-kv=true" for s in specs if ",full" in s and "softcap" not in s]
    return specs


def check_bundle(path, specs, chip="sm_90a"):
    b = fa.Bundle.load(path)
    have = set(b.variants())
    return [s for s in specs if fa.Variant.parse(s, chip=chip) not in have]


def _torch():
    global torch, peer_fns, time_back_to_back, time_ms
    import torch
    from common import peer_fns, time_back_to_back, time_ms  # noqa: F401


def with_switch_off(module, switch, fn):
    """fn run with module.<switch> (a module-level bool of fa.torch_ops) off."""
    def run():
        setattr(module, switch, False)
        try:
            return fn()
        finally:
            setattr(module, switch, True)
    return run


def reference(q, k, v):
    """f32 attention of one query row per head, GQA by indexing."""
    G = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(G, dim=1)
    vf = v.float().repeat_interleave(G, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    lse = torch.logsumexp(s, -1)
    return torch.matmul(torch.softmax(s, -1), vf), lse


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle")
    ap.add_argument("--out")
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--iters", type=int, default=15)
    ap.add_argument("--paged", action="store_true",
                    help="the paged KV cache sweep (kv_lens, page tables) instead")
    ap.add_argument("--page-sizes", default=",".join(map(str, PAGE_SIZES)))
    ap.add_argument("--points", default=",".join(f"{b}x{n}" for b, n in PAGED_POINTS),
                    help="--paged: BxNk points (Nk: keys per sequence, the capacity)")
    ap.add_argument("--print-specs", action="store_true",
                    help="print the variant specs the bundle needs (for fa.precompile) and exit")
    ap.add_argument("--check-bundle-only", action="store_true",
                    help="check that --bundle has every kernel (sm_90a) and exit")
    args = ap.parse_args()
    page_sizes = tuple(int(x) for x in args.page_sizes.split(","))
    specs = needed_specs(args.dtype, args.paged, page_sizes)
    if args.print_specs:
        print(" ".join(specs))
        return 0
    if not args.bundle:
        ap.error("--bundle is required")
    if args.check_bundle_only:
        missing = check_bundle(args.bundle, specs)
        print(f"{args.bundle}: " + (f"missing {', '.join(missing)}" if missing else
                                    f"all {len(specs)} kernels"))
        return 1 if missing else 0
    if not args.out:
        ap.error("--out is required")
    _torch()
    fa.load_bundle(args.bundle)
    if args.paged:
        return run_paged(args, page_sizes)
    return run_contiguous(args)


def run_contiguous(args):
    from fa import decode, torch_ops
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    dev = torch.device("cuda:0")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows, failures = [], []
    torch.manual_seed(0)
    # softcap through the public API (issue 16: routed to the kernels now), a
    # prefill shape and a split decode, against the f32 reference.
    for (B, Hq, Hkv, Nq, Nk, causal) in ((2, 8, 2, 1000, 1000, True),
                                         (1, 32, 8, 1, 32768, True)):
        q = torch.randn(B, Hq, Nq, D, device=dev, dtype=dt)
        k = torch.randn(B, Hkv, Nk, D, device=dev, dtype=dt)
        v = torch.randn(B, Hkv, Nk, D, device=dev, dtype=dt)
        ref, _ = torch_ops.reference(q.float(), k.float(), v.float(), causal=causal,
                                     softcap=30.0, return_lse=True)
        fallbacks = []
        plain_reference = torch_ops.reference
        torch_ops.reference = lambda *a, **kw: fallbacks.append(1) or plain_reference(*a, **kw)
        try:
            out = fa.attention(q, k, v, causal=causal, softcap=30.0)
        finally:
            torch_ops.reference = plain_reference
        err = (out.float() - ref.float()).abs().max().item()
        print(f"softcap B={B} Hq={Hq} Nq={Nq} Nk={Nk}: max err {err:.2e}, splits "
              f"{torch_ops._plan_decode(q, k, causal, (-1, 0))}, torch fallback calls "
              f"{len(fallbacks)}", flush=True)
        if not err <= (4e-3 if dt == torch.float16 else 3e-2) or fallbacks:
            failures.append(f"softcap B={B} Nq={Nq}: err {err:.2e}")
    for B in (1, 8, 64):
        for Nk in (4096, 32768, 131072):
            q = torch.randn(B, HQ, 1, D, device=dev, dtype=dt)
            k = torch.randn(B, HKV, Nk, D, device=dev, dtype=dt)
            v = torch.randn(B, HKV, Nk, D, device=dev, dtype=dt)
            kv_bytes = 2 * k.numel() * k.element_size()
            plan = torch_ops._plan_decode(q, k, True, (-1, 0))
            r = {"B": B, "Nk": Nk, "plan_splits": plan, "kv_MB": kv_bytes / 1e6}

            # Correctness on the first (up to 2) sequences.
            nb = min(B, 2)
            ref, ref_lse = reference(q[:nb], k[:nb], v[:nb])
            out, lse = fa.attention(q, k, v, causal=True, return_lse=True)
            r["err_out"] = (out[:nb].float() - ref).abs().max().item()
            r["err_lse"] = (lse[:nb] - ref_lse).abs().max().item()
            torch_ops._SPLIT_KV = False
            out1, lse1 = fa.attention(q, k, v, causal=True, return_lse=True)
            torch_ops._SPLIT_KV = True
            r["err_out_unsplit"] = (out1[:nb].float() - ref).abs().max().item()
            tol = 4e-3 if dt == torch.float16 else 3e-2
            if not (r["err_out"] <= tol and r["err_lse"] <= 1e-3):
                failures.append(f"B={B} Nk={Nk}: err out {r['err_out']:.2e} lse "
                                f"{r['err_lse']:.2e}")

            def ours():
                return fa.attention(q, k, v, causal=True)

            fns = {"ours": ours, "ours_unsplit": with_switch_off(torch_ops, "_SPLIT_KV", ours),
                   "ours_host_split": with_switch_off(torch_ops, "_SPLIT_KV_KERNEL", ours)}
            # One query row: causal or not is the same attention for the peers.
            fns.update(peer_fns(q, k, v, False, enable_gqa=True))
            src = torch.empty(kv_bytes // 2, device=dev, dtype=torch.float16)
            dst = torch.empty_like(src)
            fns["copy"] = lambda: dst.copy_(src)
            for name, fn in fns.items():
                ms = time_ms(fn, args.iters)
                r[f"{name}_ms"] = ms
                moved = 2 * kv_bytes if name == "copy" else kv_bytes
                r[f"{name}_GBps"] = moved / ms / 1e6
                if name != "copy":
                    r[f"{name}_user_ms"] = time_back_to_back(fn)
            # Each split count that divides Nk (the plan's check).
            best = None
            for S in (1, 2, 4, 8, 16, 32, 64, 128):
                if Nk % S or Nk // S < 256:
                    continue
                ms = time_ms(lambda S=S: torch_ops._run_packed(q, k, v, S, None, None, False),
                             args.iters)
                r[f"S{S}_ms"] = ms
                if best is None or ms < best[1]:
                    best = (S, ms)
            r["best_S"], r["best_S_ms"] = best
            # In-kernel split-KV at each num_splits (the plan's check).
            plan_k = decode.plan_kernel_splits(B, HQ, HKV, 1, Nk, sms)
            r["plan_kernel_splits"] = plan_k
            kern = torch_ops._kernel(q, v, False, None, None, None, False, True, split_kv=True)
            if not isinstance(kern, str):
                qp = q.view(B, HKV, HQ // HKV, D)
                bestk = None
                for S in sorted({1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, plan_k}):
                    if S < 1 or S > Nk // 128:
                        continue
                    ms = time_ms(lambda S=S: kern(qp, k, v, num_splits=S), args.iters)
                    r[f"K{S}_ms"] = ms
                    if bestk is None or ms < bestk[1]:
                        bestk = (S, ms)
                r["best_K"], r["best_K_ms"] = bestk
            for name in ("ours", "ours_unsplit", "ours_host_split", "flash", "cudnn"):
                if f"{name}_ms" in r:
                    r[f"{name}_vs_copy"] = r[f"{name}_GBps"] / r["copy_GBps"]
            for name in ("flash", "cudnn"):
                if f"{name}_ms" in r:
                    r[f"ours_vs_{name}"] = r[f"{name}_ms"] / r["ours_ms"]
                    r[f"ours_user_vs_{name}"] = r[f"{name}_user_ms"] / r["ours_user_ms"]
            rows.append(r)
            print(json.dumps({k2: (round(x, 4) if isinstance(x, float) else x)
                              for k2, x in r.items()}), flush=True)
            del q, k, v, src, dst
            torch.cuda.empty_cache()
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "sms": sms, "torch": torch.__version__,
                   "dtype": args.dtype, "rows": rows, "failures": failures}, f, indent=1)
    cols = ["B", "Nk", "plan_kernel_splits", "best_K", "ours_GBps", "ours_host_split_GBps",
            "ours_unsplit_GBps", "flash_GBps", "cudnn_GBps", "copy_GBps", "ours_vs_copy",
            "ours_vs_cudnn", "ours_vs_flash", "ours_user_vs_cudnn", "ours_user_vs_flash",
            "err_out"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(
            (f"{r[c]:.3g}" if isinstance(r.get(c), float) else str(r.get(c, "")))
            for c in cols) + " |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("failures:", failures or "none")
    return 1 if failures else 0


# ---------------------------------------------------------------------------
# --paged


def _prime_at_most(n):
    for m in range(n, 1, -1):
        if all(m % p for p in range(2, int(m ** 0.5) + 1)):
            return m
    return 2


def paged_lengths(B, Nk, mode, rng):
    """kv_lens of a point: all Nk ("full"), or uniform in [Nk/2, Nk] with the
    first a prime and the second 0 when B > 1 ("varied")."""
    if mode == "full":
        return [Nk] * B
    lens = [rng.randint(Nk // 2, Nk) for _ in range(B)]
    lens[0] = _prime_at_most(lens[0])
    if B > 1:
        lens[1] = 0
    return lens


def make_pool(k, v, S, gen):
    """Page pools [P, Hkv, S, D] holding the contiguous caches' keys in
    shuffled pages (P = B*M plus 5% spare pages, never referenced) and the
    page table [B, M] int32 that reads them back in order."""
    B, H, Nk, Dh = k.shape
    M = Nk // S
    P = B * M + max(1, B * M // 20)
    table = torch.randperm(P, generator=gen, device="cpu")[:B * M].to(k.device)
    pools = []
    for x in (k, v):
        pool = torch.zeros((P, H, S, Dh), device=x.device, dtype=x.dtype)
        pool[table] = x.view(B, H, M, S, Dh).permute(0, 2, 1, 3, 4).reshape(B * M, H, S, Dh)
        pools.append(pool)
    return pools[0], pools[1], table.view(B, M).to(torch.int32).contiguous()


def _errors(out, lse, ref, ref_lse):
    e_out = (out.float() - ref.float()).abs().max().item()
    fin = torch.isfinite(ref_lse)
    e_lse = (lse[fin] - ref_lse[fin]).abs().max().item() if bool(fin.any()) else 0.0
    inf_ok = bool(torch.all(torch.isneginf(lse[~fin])).item())
    return e_out, e_lse, inf_ok


def run_paged(args, page_sizes):
    from fa import decode, torch_ops
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    dev = torch.device("cuda:0")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tol = 4e-3 if dt == torch.float16 else 3e-2
    points = [tuple(int(x) for x in p.split("x")) for p in args.points.split(",")]
    rows, failures = [], []
    rng = random.Random(0)
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    t0 = time.perf_counter()

    def fail(msg):
        failures.append(msg)
        print("FAIL " + msg, flush=True)

    def unsplit(fn):
        return with_switch_off(torch_ops, "_SPLIT_KV", fn)

    def host_split(fn):
        """The split before in-kernel split-KV: chunks as extra sequences, combined by torch."""
        return with_switch_off(torch_ops, "_SPLIT_KV_KERNEL", fn)

    def check(name, fn, nb, ref, ref_lse, r, suffix=""):
        out, lse = fn()
        e = _errors(out[:nb], lse[:nb], ref, ref_lse)
        r[f"err_out{suffix}"], r[f"err_lse{suffix}"], r[f"lse_inf_ok{suffix}"] = e
        if not (e[0] <= tol and e[1] <= 1e-3 and e[2]):
            fail(f"{name}: err out {e[0]:.2e} lse {e[1]:.2e} -inf rows {e[2]}")

    def timed(r, name, fn, kv_bytes, user=True):
        r[f"{name}_ms"] = time_ms(fn, args.iters)
        r[f"{name}_GBps"] = kv_bytes / r[f"{name}_ms"] / 1e6
        if user:
            r[f"{name}_user_ms"] = time_back_to_back(fn)

    def record(r):
        rows.append(r)
        print(json.dumps({a: (round(x, 4) if isinstance(x, float) else x)
                          for a, x in r.items()}), flush=True)

    for B, Nk in points:
        try:
            q = torch.randn(B, HQ, 1, D, device=dev, dtype=dt)
            k = torch.randn(B, HKV, Nk, D, device=dev, dtype=dt)
            v = torch.randn(B, HKV, Nk, D, device=dev, dtype=dt)
            pools = {S: make_pool(k, v, S, gen) for S in page_sizes if Nk % S == 0}
        except torch.cuda.OutOfMemoryError as e:
            fail(f"B={B} Nk={Nk}: {e}")
            continue
        peers = peer_fns(q, k, v, False, enable_gqa=True)
        peer_ms = {name: time_ms(fn, args.iters) for name, fn in peers.items()}
        # What a user of each peer sees: back-to-back calls, host path included.
        peer_user_ms = {name: time_back_to_back(fn) for name, fn in peers.items()}
        full_bytes = 2 * k.numel() * k.element_size()
        src = torch.empty(full_bytes // 2, device=dev, dtype=torch.float16)
        dst = torch.empty_like(src)
        copy_ms = time_ms(lambda: dst.copy_(src), args.iters)
        nb = min(B, 4)
        for mode in ("full", "varied"):
            lens_list = paged_lengths(B, Nk, mode, rng)
            lens = torch.tensor(lens_list, device=dev, dtype=torch.int32)
            kv_bytes = 2 * sum(lens_list) * HKV * D * k.element_size()
            ref, ref_lse = torch_ops.reference(q[:nb].float(), k[:nb].float(), v[:nb].float(),
                                               causal=True, return_lse=True, kv_lens=lens[:nb])
            base = {"B": B, "Nk": Nk, "lens": mode, "kv_MB": kv_bytes / 1e6,
                    "copy_GBps": 2 * full_bytes / copy_ms / 1e6}
            for name, ms in peer_ms.items():  # the whole cache, whatever the lengths
                base[f"{name}_ms"] = ms
                base[f"{name}_GBps"] = full_bytes / ms / 1e6
                base[f"{name}_user_ms"] = peer_user_ms[name]
            # Ours on the contiguous cache: "full" without kv_lens (the split
            # of equal chunks), "varied" with them (packed; split only with
            # one K/V head).
            c_lens = lens if mode == "varied" else None
            base["plan_kernel_splits"] = decode.plan_kernel_splits(B, HQ, HKV, 1, Nk, sms)
            r = dict(base, layout="contiguous", page_size=0,
                     plan_splits=torch_ops._plan_decode(q, k, True, (-1, 0), kv_lens=c_lens))

            def contig(lse=False):
                return fa.attention(q, k, v, causal=True, kv_lens=c_lens, return_lse=lse)
            try:
                check(f"contiguous B={B} Nk={Nk} {mode}", lambda: contig(True), nb, ref, ref_lse,
                      r)
                timed(r, "ours", contig, kv_bytes)
                timed(r, "ours_host_split", host_split(contig), kv_bytes)
            except fa.UnsupportedError as e:  # no kernel in the bundle
                r["error"] = str(e).splitlines()[0]
            except Exception as e:  # noqa: BLE001 (recorded; the sweep goes on)
                traceback.print_exc()
                r["error"] = f"{type(e).__name__}: {e}"
                fail(f"contiguous B={B} Nk={Nk} {mode}: {r['error']}")
            record(r)
            contig_ms = r.get("ours_ms")
            for S, (kp, vp, table) in pools.items():
                r = dict(base, layout="paged", page_size=S, pool_pages=kp.shape[0],
                         plan_splits=torch_ops._plan_decode(q, kp, True, (-1, 0), kv_lens=lens,
                                                            page_table=table))

                def paged(lse=False, kp=kp, vp=vp, table=table):
                    return fa.attention(q, kp, vp, causal=True, kv_lens=lens, page_table=table,
                                        return_lse=lse)
                what = f"paged S={S} B={B} Nk={Nk} {mode}"
                try:
                    check(what, lambda: paged(True), nb, ref, ref_lse, r)
                    check(what + " unsplit", unsplit(lambda: paged(True)), nb, ref, ref_lse, r,
                          "_unsplit")
                    timed(r, "ours", paged, kv_bytes)
                    timed(r, "ours_unsplit", unsplit(paged), kv_bytes)
                    timed(r, "ours_host_split", host_split(paged), kv_bytes)
                    if contig_ms:
                        r["paged_vs_contiguous"] = contig_ms / r["ours_ms"]
                    for name, ms in peer_ms.items():
                        r[f"ours_vs_{name}"] = ms / r["ours_ms"]
                        r[f"ours_user_vs_{name}"] = peer_user_ms[name] / r["ours_user_ms"]
                except fa.UnsupportedError as e:  # no kernel in the bundle
                    r["error"] = str(e).splitlines()[0]
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    r["error"] = f"{type(e).__name__}: {e}"
                    fail(f"{what}: {r['error']}")
                record(r)
        del q, k, v, src, dst, pools
        torch.cuda.empty_cache()
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "dtype": args.dtype, "sms": torch.cuda.get_device_properties(0).multi_processor_count,
              "bundle": os.path.abspath(args.bundle), "page_sizes": list(page_sizes),
              "seconds": time.perf_counter() - t0, "rows": rows, "failures": failures}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=1)
    cols = ["B", "Nk", "lens", "layout", "page_size", "plan_kernel_splits", "ours_GBps",
            "ours_host_split_GBps", "ours_unsplit_GBps", "flash_GBps", "cudnn_GBps", "copy_GBps", "paged_vs_contiguous",
            "ours_vs_cudnn", "ours_vs_flash", "ours_user_ms", "cudnn_user_ms",
            "ours_user_vs_cudnn", "err_out", "error"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(
            (f"{r[c]:.3g}" if isinstance(r.get(c), float) else str(r.get(c, ""))[:60])
            for c in cols) + " |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"{result['seconds']:.0f} s; failures:", failures or "none")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
