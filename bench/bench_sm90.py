"""Correctness and speed of the fa sm_90a kernels (TMA + mbarrier + wgmma) on an H100/H200.

Usage (on the GPU machine, no MLIR needed):
    python3 bench/bench_sm90.py --k90 DIR90 [--k80 DIR80] [--check] [--bench] [--out results.json]
DIR90 / DIR80 hold <kernel>.ptx + <kernel>.json from
    fa-opt bench/kernels_sm90.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=DIR90})'
    fa-opt bench/kernels_sm80.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=DIR80})'
(the sm_90a set is the sm_80 one plus lse variants and a [256, 64] window with lse).
--check: ours (sm_90a) vs an f32 torch reference (bottom-right causal, GQA, odd lengths, Nq != Nk, lse,
sliding windows);
--bench: in this one process, ours sm_90a, ours sm_80, torch SDPA flash and cudnn on the FA-paper sweep
(16k tokens, hidden 2048; FLOPs = 4 B H N^2 D, halved when causal; median of CUDA-event timings),
plus the bf16 8192^3 GEMM ceiling. Head dim 256 (sm_90a only; DIR90 from bench/kernels_sm90.mlir):
check_d256 in --check, d256 rows in --bench without an sm_80 kernel (a peer that rejects a shape is
left out of its row).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from common import (DT, PEERS, check_case, check_growing_scores, has_kernel,  # noqa: E402
                    kernel_name, load, load_named, peer_fns, time_back_to_back,
                    time_interleaved, time_ms, time_once)

# Odd lengths, GQA 4:1 and MQA, Nq != Nk both ways, a single row.
ODD_SHAPES = ((2, 8, 2, 1000, 1000), (1, 4, 4, 77, 333), (2, 6, 3, 333, 77), (1, 2, 1, 1, 1),
              (3, 4, 1, 129, 200), (1, 2, 2, 255, 257))
# Sliding windows: also CTAs whose key range is empty (Nq >> Nk: early rows see no key, out 0,
# lse -inf), a one-row decode whose range starts past block 0, and a window wider than the K/V
# ring (stage/parity wrap with begin > 0).
WINDOW_SHAPES = ((2, 4, 2, 1000, 1000), (1, 2, 1, 333, 517), (1, 2, 2, 517, 200),
                 (1, 4, 1, 1000, 77), (1, 4, 4, 1, 1000), (1, 2, 1, 4096, 4096))


def check(kdir):
    """d64/d128: the odd shapes and the sweep shapes up to 4k, causal or not, lse, windows; a head
    dim whose kernels `kdir` lacks is left out (a variant set of one head dim)."""
    torch.manual_seed(0)
    rows = []
    dims = [d for d in (64, 128) if has_kernel(kdir, kernel_name("f16", d, False))]
    for dt in ("f16", "bf16"):
        for d in dims:
            for causal in (False, True):
                shapes = ODD_SHAPES + tuple((16384 // n, 2048 // d, 2048 // d, n, n)
                                            for n in (512, 2048, 4096))
                for B, Hq, Hkv, Nq, Nk in shapes:
                    rows.append(check_case(load(kdir, dt, d, causal), dt, d, B, Hq, Hkv, Nq, Nk,
                                           causal=causal))
    for dt, d, causal, Nq, Nk in (("f16", 64, True, 300, 200), ("bf16", 128, False, 200, 333),
                                  ("f16", 128, True, 1000, 1000)):
        if d in dims:
            rows.append(check_case(load(kdir, dt, d, causal, lse=True), dt, d, 2, 4, 2, Nq, Nk,
                                   causal=causal, lse=True))
    for name, dt, d, win, lse in (("attn_f16_d64_window", "f16", 64, (100, 0), False),
                                  ("attn_bf16_d128_window", "bf16", 128, (100, 0), False),
                                  ("attn_bf16_d128_window_256_64_lse", "bf16", 128, (256, 64), True)):
        if d not in dims:
            continue
        kern = load_named(kdir, name)
        for B, Hq, Hkv, Nq, Nk in WINDOW_SHAPES:
            rows.append(check_case(kern, dt, d, B, Hq, Hkv, Nq, Nk, window=win, lse=lse))
    rows += check_growing_scores(kdir, dims)
    return rows


def check_d256(kdir):
    """Head dim 256 (128 x 80 tile, 2 stages): the odd shapes and 4k, causal or not, lse, a
    two-edge window (64-key tile); [] (with a note) when `kdir` has no d256 kernels."""
    if not has_kernel(kdir, kernel_name("f16", 256, False)):
        print(f"check d256: no d256 kernels in {kdir}, skipped", flush=True)
        return []
    torch.manual_seed(256)
    rows = []
    for dt in ("f16", "bf16"):
        for causal in (False, True):
            for B, Hq, Hkv, Nq, Nk in ODD_SHAPES + ((4, 8, 8, 4096, 4096),):
                rows.append(check_case(load(kdir, dt, 256, causal), dt, 256, B, Hq, Hkv, Nq, Nk,
                                       causal=causal))
    for dt, causal, Nq, Nk in (("f16", True, 300, 200), ("bf16", False, 200, 333)):
        rows.append(check_case(load(kdir, dt, 256, causal, lse=True), dt, 256, 2, 4, 2, Nq, Nk,
                               causal=causal, lse=True))
    if has_kernel(kdir, "attn_bf16_d256_window_256_64_lse"):
        kern = load_named(kdir, "attn_bf16_d256_window_256_64_lse")
        for B, Hq, Hkv, Nq, Nk in WINDOW_SHAPES[:2] + WINDOW_SHAPES[3:5]:
            rows.append(check_case(kern, "bf16", 256, B, Hq, Hkv, Nq, Nk, window=(256, 64), lse=True))
    return rows


def gemm_ceiling(iters):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    ms = time_ms(lambda: torch.matmul(a, b), iters)
    return 2 * 8192 ** 3 / (ms * 1e-3) / 1e12


def bench(k90, k80, seqlens, iters, dtypes, dims, partial=None, variants=(), var_min_seqlen=0,
          interleave=False):
    rows = []
    for dt in dtypes:
        for d in dims:
            for causal in (False, True):
                kern = load(k90, dt, d, causal)
                kern80 = load(k80, dt, d, causal) if has_kernel(k80, kernel_name(dt, d, causal)) else None  # no sm_80 d256
                for n in seqlens:
                    B, H = 16384 // n, 2048 // d
                    q = torch.randn(B, H, n, d, device="cuda", dtype=DT[dt])
                    k = torch.randn_like(q)
                    v = torch.randn_like(q)
                    out = torch.empty_like(q)
                    flops = 4 * B * H * n * n * d / (2 if causal else 1)
                    row = dict(dtype=dt, d=d, causal=causal, seqlen=n, B=B, H=H)
                    if interleave:
                        fns = {"sm90": lambda: kern(q, k, v, out=out)}
                        if kern80:
                            fns["sm80"] = lambda: kern80(q, k, v, out=out)
                        vkerns = {}
                        for vname, vdir in variants:
                            if n >= var_min_seqlen and has_kernel(vdir, kernel_name(dt, d, causal)):
                                vkerns[vname] = load(vdir, dt, d, causal)
                                fns["v_" + vname] = (lambda kv: lambda: kv(q, k, v, out=out))(
                                    vkerns[vname])
                        fns.update(peer_fns(q, k, v, causal))
                        row.update({nm + "_ms": ms for nm, ms in time_interleaved(fns, iters).items()})
                        for name in ("sm80", "flash", "cudnn"):
                            row.setdefault(name + "_ms", None)
                        # What a user sees: back-to-back calls, host path included.
                        row["sm90_user_ms"] = time_back_to_back(lambda: kern(q, k, v))
                        for vname, kv in vkerns.items():
                            row["v_" + vname + "_user_ms"] = time_back_to_back(
                                (lambda kv: lambda: kv(q, k, v))(kv))
                        for name in ("flash", "cudnn"):
                            row[name + "_user_ms"] = (time_back_to_back(fns[name])
                                                      if name in fns else None)
                    else:
                        row["sm90_ms"] = time_ms(lambda: kern(q, k, v, out=out), iters)
                        row["sm80_ms"] = time_ms(lambda: kern80(q, k, v, out=out), iters) if kern80 else None
                        for vname, vdir in variants:  # other sm_90a schedules, same process, same inputs
                            if n < var_min_seqlen or not has_kernel(vdir, kernel_name(dt, d, causal)):
                                continue
                            kv = load(vdir, dt, d, causal)
                            row["v_" + vname + "_ms"] = time_ms(lambda: kv(q, k, v, out=out), iters)
                        peers = peer_fns(q, k, v, causal)
                        for name, _ in PEERS:
                            row[name + "_ms"] = time_ms(peers[name], iters) if name in peers else None
                        # What a user sees: back-to-back calls, host path included.
                        row["sm90_user_ms"] = time_back_to_back(lambda: kern(q, k, v))
                        for name, _ in PEERS:
                            row[name + "_user_ms"] = (time_back_to_back(peers[name])
                                                      if name in peers else None)
                    for name in ("sm90", "sm80", "flash", "cudnn"):
                        ms = row[name + "_ms"]
                        row[name + "_tflops"] = flops / (ms * 1e-3) / 1e12 if ms else None
                    for vname, _ in variants:
                        ms = row.get("v_" + vname + "_ms")
                        if ms and row["cudnn_ms"]:
                            row["v_" + vname + "_tflops"] = flops / (ms * 1e-3) / 1e12
                            row["v_" + vname + "_ratio_cudnn"] = row["cudnn_ms"] / ms
                    for peer in ("sm80", "flash", "cudnn"):
                        row["ratio_" + peer] = (row["sm90_tflops"] / row[peer + "_tflops"]
                                                if row[peer + "_tflops"] else None)
                    print(f"bench {dt} d{d} causal={causal} n{n}: sm90 {row['sm90_tflops']:.1f} "
                          f"sm80 {row['sm80_tflops'] or 0:.1f} flash {row['flash_tflops'] or 0:.1f} "
                          f"cudnn {row['cudnn_tflops'] or 0:.1f} TFLOP/s" +
                          "".join(f" {vn} {row['v_' + vn + '_tflops']:.1f}" for vn, _ in variants
                                  if row.get('v_' + vn + '_tflops')), flush=True)
                    rows.append(row)
                    if partial:  # keep what was measured if the run is cut short
                        with open(partial, "w") as fh:
                            json.dump(rows, fh, indent=1)
                    del q, k, v, out
    return rows


def report(res, md_path, png_path):
    f = lambda x: "-" if x is None else f"{x:.0f}"  # noqa: E731
    r = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    lines = [f"# fa sm_90a kernel on {res['device']} ({res['date']}, torch {res['torch']})", ""]
    if "check" in res:
        c = res["check"]
        lines += [f"Correctness vs f32 reference: {sum(x['ok'] for x in c)}/{len(c)} OK "
                  f"(max abs err f16 <= 4e-3, bf16 <= 3e-2; lse <= 1e-3)", ""]
    if "gemm_bf16_tflops" in res:
        lines += [f"bf16 8192^3 GEMM ceiling in the same run: {res['gemm_bf16_tflops']:.0f} TFLOP/s", ""]
    if "bench" in res:
        lines += ["Forward TFLOP/s (FLOPs = 4 B H N^2 D, /2 causal; 16k tokens, hidden 2048; median of CUDA events, host launch path hidden behind a GPU sleep: kernel time only, common.time_once)", "",
                  "| dtype | d | causal | seqlen | ours sm_90a | ours sm_80 | flash (FA2) | cudnn | sm90/cudnn | sm90/flash | sm90/sm80 |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for x in res["bench"]:
            lines.append(f"| {x['dtype']} | {x['d']} | {'yes' if x['causal'] else 'no'} | {x['seqlen']} | "
                         f"{f(x['sm90_tflops'])} | {f(x['sm80_tflops'])} | {f(x['flash_tflops'])} | "
                         f"{f(x['cudnn_tflops'])} | {r(x['ratio_cudnn'])} | {r(x['ratio_flash'])} | {r(x['ratio_sm80'])} |")
    urows = [x for x in res.get("bench", []) if x.get("sm90_user_ms")]
    vnames = res.get("variants", [])
    uvnames = [vn for vn in vnames if any(x.get("v_" + vn + "_user_ms") for x in urows)]
    if urows:
        lines += ["", "What a user sees: ms per call of 20 back-to-back calls through the public API "
                  "(ours: fa_runtime Kernel.__call__ allocating out, argument checks, tensor maps, "
                  "launch; peers: torch SDPA), host path included", "",
                  "| dtype | d | causal | seqlen | ours sm_90a ms | flash ms | cudnn ms | cudnn/ours | flash/ours |" +
                  "".join(f" {vn} ms | {vn}/ours |" for vn in uvnames),
                  "|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(uvnames)]
        for x in urows:
            ou, fl, cu = x["sm90_user_ms"], x.get("flash_user_ms"), x.get("cudnn_user_ms")
            vcells = ""
            for vn in uvnames:
                vu = x.get("v_" + vn + "_user_ms")
                vcells += f" {f'{vu:.3f}' if vu else '-'} | {r(vu / ou if vu else None)} |"
            lines.append(f"| {x['dtype']} | {x['d']} | {'yes' if x['causal'] else 'no'} | {x['seqlen']} | "
                         f"{ou:.3f} | {fl or 0:.3f} | {cu or 0:.3f} | {r(cu / ou if cu else None)} | "
                         f"{r(fl / ou if fl else None)} |" + vcells)
    vrows = [x for x in res.get("bench", []) if any(x.get("v_" + vn + "_ms") for vn in vnames)]
    if vrows:
        lines += ["", "Variants (other sm_90a schedules, same process and inputs): TFLOP/s (ratio to cudnn)", "",
                  "| dtype | d | causal | seqlen | cudnn | default | " + " | ".join(vnames) + " |",
                  "|---|---|---|---|---|---|" + "---|" * len(vnames)]
        for x in vrows:
            cells = [f"{f(x.get('v_' + vn + '_tflops'))} ({r(x.get('v_' + vn + '_ratio_cudnn'))})" for vn in vnames]
            lines.append(f"| {x['dtype']} | {x['d']} | {'yes' if x['causal'] else 'no'} | {x['seqlen']} | "
                         f"{f(x['cudnn_tflops'])} | {f(x['sm90_tflops'])} ({r(x['ratio_cudnn'])}) | " +
                         " | ".join(cells) + " |")
    with open(md_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        groups = sorted({(x["dtype"], x["d"], x["causal"]) for x in res.get("bench", [])})
        if groups:
            fig, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 3.5), squeeze=False)
            for ax, (dt, d, c) in zip(axes[0], groups):
                xs = [x for x in res["bench"] if (x["dtype"], x["d"], x["causal"]) == (dt, d, c)]
                for name in ("sm90", "sm80", "flash", "cudnn"):
                    ax.plot([x["seqlen"] for x in xs], [x[name + "_tflops"] or 0 for x in xs], marker="o", label=name)
                ax.set_xscale("log", base=2)
                ax.set_title(f"{dt} d{d} {'causal' if c else 'full'}")
                ax.set_xlabel("seqlen")
                ax.set_ylabel("TFLOP/s")
            axes[0][0].legend()
            fig.tight_layout()
            fig.savefig(png_path, dpi=80)
    except Exception as e:  # matplotlib missing
        print("no plot:", e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k90", required=True)
    ap.add_argument("--k80")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--dtypes", default="f16,bf16")
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--out", default="bench_sm90.json")
    ap.add_argument("--variants", default="",
                    help="NAME=DIR,...: more sm_90a kernel sets timed in the same process")
    ap.add_argument("--variant-min-seqlen", type=int, default=0)
    ap.add_argument("--interleave", action="store_true",
                    help="time all implementations of a row round-robin (rotated order) instead of in turn")
    ap.add_argument("--check-variants", action="store_true",
                    help="also run the correctness sweep on every variant")
    a = ap.parse_args()
    variants = [tuple(x.split("=", 1)) for x in a.variants.split(",") if x]
    res = dict(date=time.strftime("%Y-%m-%d"), device=torch.cuda.get_device_name(),
               torch=torch.__version__, variants=[vn for vn, _ in variants])
    base = os.path.splitext(a.out)[0]
    if a.check:
        res["check"] = check(a.k90) + check_d256(a.k90)
        print("check: %d/%d OK" % (sum(r["ok"] for r in res["check"]), len(res["check"])), flush=True)
        if a.check_variants:
            res["check_variants"] = {}
            for vname, vdir in variants:
                c = check(vdir) + check_d256(vdir)
                res["check_variants"][vname] = dict(ok=sum(r["ok"] for r in c), n=len(c),
                                                    max_err=max(r["max_abs_err"] for r in c))
                print(f"check {vname}: {res['check_variants'][vname]}", flush=True)
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if a.bench:
        res["gemm_bf16_tflops"] = gemm_ceiling(a.iters)
        print(f"gemm bf16 8192^3: {res['gemm_bf16_tflops']:.0f} TFLOP/s", flush=True)
        res["bench"] = bench(a.k90, a.k80, [int(s) for s in a.seqlens.split(",")], a.iters,
                             a.dtypes.split(","), [int(x) for x in a.dims.split(",")],
                             partial=base + ".partial.json", variants=variants,
                             var_min_seqlen=a.variant_min_seqlen, interleave=a.interleave)
        res["interleaved"] = a.interleave
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    report(res, base + ".md", base + ".png")


if __name__ == "__main__":
    main()
