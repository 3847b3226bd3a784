#!/usr/bin/env python3
"""The Python package `fa` on a GPU machine without the compiler (issue 13, part 3).

    python3 bench/python_h200.py --bundle .dev/bundle --out $OUT/python.json

The kernels come from an ahead-of-time bundle compiled on the build machine
(bench/python_bundle.sh writes .dev/bundle); the package is used from the
source tree (python/ on sys.path; nothing installed, no libFAPythonCAPI.so).
Sections, each recorded in the JSON even when another one fails:
  env          torch, device, chip, whether the compiler is here (it should not be)
  bundle       the bundle's kernels, their compile times on the build machine
  correctness  fa.attention against an f32 reference over f16/bf16 x head dims x
               causal x GQA (Hkv = Hq, Hq/4, 1) x lse x shapes (Nq = Nk, Nq < Nk,
               decoding), the bundle's window and scale variants; torch SDPA's own
               error against the same reference for scale
  behaviour    non-contiguous inputs, a side stream, cuda:1 when there is one,
               validation errors, UnsupportedError and fallback=True (softcap,
               head dim 96, f32, a variant missing from the bundle), backward
               (the bundle's backward kernel, and the fallback's)
  compile      a transformer block (RMSNorm, GQA attention, MLP) under
               torch.compile(fullgraph=True): graph breaks (torch._dynamo.explain),
               the op in the graph, compiled vs eager vs SDPA, time per step
  overhead     host time per call at short lengths: fa.attention, the op
               torch.ops.fa.attention, the bare fa_runtime kernel, torch SDPA
Prints tables; exits 1 if a check failed or a section raised.

`--check-bundle-only` stops after the bundle section (no torch needed): the
build machine runs it to check a bundle before it is carried.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import fa  # noqa: E402

failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL {what}", flush=True)


def table(rows, cols, title):
    print(f"\n== {title}")
    if not rows:
        print("(none)")
        return
    widths = [max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(cols, widths)))
    sys.stdout.flush()


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1e-2 or abs(x) >= 1e4 else f"{x:.4g}"
    return "" if x is None else str(x)


# ---------------------------------------------------------------------------
# bundle (no torch)


def section_bundle(path):
    b = fa.load_bundle(path)
    n = b.validate()
    by_chip = {}
    secs = []
    for e in b.index["kernels"]:
        by_chip.setdefault(e["variant"]["chip"], []).append(e["spec"])
        if e.get("compile_seconds") is not None:
            secs.append(e["compile_seconds"])
    out = {"path": os.path.abspath(path), "kernels": n, "compiler": b.index.get("compiler"),
           "created": b.index.get("created"), "by_chip": by_chip,
           "compile_seconds_build_machine": {
               "n": len(secs), "min": min(secs, default=None), "max": max(secs, default=None),
               "mean": sum(secs) / len(secs) if secs else None}}
    print(f"bundle {path}: {n} kernels ({', '.join(f'{c}: {len(v)}' for c, v in by_chip.items())})"
          f", compiler {out['compiler']}", flush=True)
    if secs:
        print(f"  first-call compile time on the build machine (fa.compile, per kernel): "
              f"mean {out['compile_seconds_build_machine']['mean']:.2f} s, "
              f"max {max(secs):.2f} s", flush=True)
    return b, out


# ---------------------------------------------------------------------------
# correctness


def make(B, Hq, Hkv, Nq, Nk, D, dtype, dev="cuda"):
    import torch
    q = torch.randn(B, Hq, Nq, D, device=dev, dtype=dtype)
    k = torch.randn(B, Hkv, Nk, D, device=dev, dtype=dtype)
    v = torch.randn(B, Hkv, Nk, D, device=dev, dtype=dtype)
    return q, k, v


def compare(out, lse, q, k, v, causal, window, scale, softcap, dt):
    """(max abs err of out, of lse over finite rows, lse -inf rows right, SDPA's err)."""
    import torch
    import torch.nn.functional as F
    from fa.torch_ops import reference
    with torch.no_grad():
        ref, rlse = reference(q.float(), k.float(), v.float(), causal, window, scale, softcap,
                              return_lse=True)
    err = (out.float() - ref).abs().max().item()
    lerr, inf_ok = None, None
    if lse is not None:
        fin = torch.isfinite(rlse)
        lerr = (lse[fin] - rlse[fin]).abs().max().item() if bool(fin.any()) else 0.0
        inf_ok = bool(torch.all(torch.isneginf(lse[~fin])).item())
    serr = None
    Nq, Nk = q.shape[2], k.shape[2]
    if window is None and softcap is None and (not causal or Nq == Nk):
        so = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale,
                                            enable_gqa=q.shape[1] != k.shape[1])
        serr = (so.float() - ref).abs().max().item()
    return err, lerr, inf_ok, serr


def check(rows, tol, lse_tol, chip, dt_name, dtype, D, B, Hq, Hkv, Nq, Nk, causal=False,
          window=None, scale=None, lse=False):
    import torch
    q, k, v = make(B, Hq, Hkv, Nq, Nk, D, dtype)
    res = fa.attention(q, k, v, causal=causal, window=window, scale=scale, return_lse=lse)
    out, olse = res if lse else (res, None)
    torch.cuda.synchronize()
    err, lerr, inf_ok, serr = compare(out, olse, q, k, v, causal, window, scale, None, dt_name)
    ok = (not math.isnan(err)) and (err <= tol or (serr is not None and err <= 2 * serr))
    if lse:
        ok = ok and lerr <= lse_tol and inf_ok
    row = dict(chip=chip, dtype=dt_name, D=D, causal=causal, window=window, scale=scale, lse=lse,
               B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk, err=err, sdpa_err=serr, lse_err=lerr,
               ok=ok)
    rows.append(row)
    if not ok:
        fail(f"correctness {row}")


def section_correctness(chip, bundle, quick):
    import torch
    from common import LSE_TOL, TOL
    dts = {"f16": torch.float16, "bf16": torch.bfloat16}
    dims = fa.variant.HEAD_DIMS[chip]
    shapes = [(2, 1024, 1024), (1, 333, 333), (2, 128, 1000), (1, 1, 777)]
    gqa = [(8, 8), (8, 2), (8, 1)]
    if quick:
        shapes, gqa = shapes[:2], gqa[1:2]
    rows = []
    first_call = []
    for dt_name, dtype in dts.items():
        for D in dims:
            for causal in (False, True):
                for lse in (False, True):
                    t = time.perf_counter()
                    check(rows, TOL[dt_name], LSE_TOL, chip, dt_name, dtype, D, 1, 8, 8, 64, 64,
                          causal=causal, lse=lse)
                    first_call.append(dict(kernel=f"{dt_name},d{D},{'causal' if causal else 'full'}"
                                                  f"{',lse' if lse else ''}",
                                           first_call_ms=1e3 * (time.perf_counter() - t)))
                    for (B, Nq, Nk) in shapes:
                        for Hq, Hkv in gqa:
                            check(rows, TOL[dt_name], LSE_TOL, chip, dt_name, dtype, D, B, Hq,
                                  Hkv, Nq, Nk, causal=causal, lse=lse)
    # The bundle's other variants of this chip (windows, scales).
    for v in bundle.variants():
        if v.chip != chip or (v.window is None and v.scale is None) or v.options or v.grad:
            continue
        for (B, Nq, Nk) in [(2, 1024, 1024), (1, 200, 700)]:
            check(rows, TOL[v.dtype], LSE_TOL, chip, v.dtype, dts[v.dtype], v.head_dim, B, 8, 2,
                  Nq, Nk, causal=v.causal, window=v.window, scale=v.scale, lse=v.lse)
    groups = {}
    for r in rows:  # one line per kernel: the worst case over shapes and GQA
        g = groups.setdefault((r["dtype"], r["D"], r["causal"], r["window"], r["scale"], r["lse"]),
                              dict(dtype=r["dtype"], D=r["D"], causal=r["causal"],
                                   window=r["window"], scale=r["scale"], lse=r["lse"], cases=0,
                                   passed=0, max_err=0.0, max_sdpa_err=None, max_lse_err=None))
        g["cases"] += 1
        g["passed"] += r["ok"]
        g["max_err"] = max(g["max_err"], r["err"])
        for key, src in (("max_sdpa_err", "sdpa_err"), ("max_lse_err", "lse_err")):
            if r[src] is not None:
                g[key] = max(g[key] or 0.0, r[src])
    table(list(groups.values()), ["dtype", "D", "causal", "window", "scale", "lse", "cases",
                                  "passed", "max_err", "max_sdpa_err", "max_lse_err"],
          f"correctness on {chip} (per kernel, worst case over shapes {shapes} x GQA {gqa}; "
          f"every case in the JSON)")
    table(first_call, ["kernel", "first_call_ms"],
          "first call per kernel (bundle PTX loaded and JIT-compiled by the driver)")
    return {"cases": rows, "passed": sum(r["ok"] for r in rows), "total": len(rows),
            "first_call": first_call}


# ---------------------------------------------------------------------------
# behaviour


def expect(results, name, fn, exc=None, word=None):
    """Runs fn, which returns True or a string saying what is wrong; with exc,
    expects it to raise exc mentioning word instead."""
    try:
        got = fn()
    except Exception as e:  # noqa: BLE001
        ok = exc is not None and isinstance(e, exc) and (word is None or word in str(e))
        results.append(dict(check=name, ok=ok, detail=f"{type(e).__name__}: {str(e)[:300]}"))
        if not ok:
            fail(f"behaviour {name}: {type(e).__name__}: {e}")
        return None
    ok = exc is None and got is True  # a check returns True, or a string saying what is wrong
    results.append(dict(check=name, ok=ok, detail="raised nothing" if exc else str(got)[:300]))
    if not ok:
        fail(f"behaviour {name}: {'raised nothing' if exc else got}")
    return got


def section_behaviour(chip):
    import torch
    from common import TOL
    from fa.torch_ops import reference, reference_grad
    res = []
    h = torch.float16

    def close(out, q, k, v, causal=False, window=None, scale=None, softcap=None, tol=None):
        ref, _ = reference(q.float(), k.float(), v.float(), causal, window, scale, softcap, True)
        err = (out.float() - ref).abs().max().item()
        return err <= (tol or TOL["f16"]) or f"err {err}"

    def noncontiguous():
        # [B, N, H, D] tensors viewed as [B, H, N, D]: copied by the runtime.
        q = torch.randn(2, 300, 8, 128, device="cuda", dtype=h).transpose(1, 2)
        k = torch.randn(2, 300, 2, 128, device="cuda", dtype=h).transpose(1, 2)
        v = torch.randn(2, 300, 2, 128, device="cuda", dtype=h).transpose(1, 2)
        return close(fa.attention(q, k, v, causal=True), q, k, v, causal=True)
    expect(res, "non-contiguous q, k, v ([B, N, H, D] transposed)", noncontiguous)

    def side_stream():
        # The launch queues on the current stream s behind a ~25 ms sleep: once the
        # default stream is drained, `out` must still be unwritten (a launch on the
        # default stream would have finished), and right after s is done.
        q, k, v = make(2, 8, 2, 1024, 1024, 128, h)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.cuda._sleep(50_000_000)
            out = fa.attention(q, k, v, causal=True)
        torch.cuda.current_stream().synchronize()
        early = out.clone()  # on the default stream, while s still sleeps
        torch.cuda.synchronize()
        if torch.equal(early, out):
            return "out was complete before its stream ran: launched on another stream"
        return close(out, q, k, v, causal=True)
    expect(res, "launch on the current (side) stream", side_stream)

    if torch.cuda.device_count() > 1:
        def second_device():
            q, k, v = make(1, 8, 8, 500, 500, 64, h, dev="cuda:1")
            out = fa.attention(q, k, v)
            return (out.device == q.device and close(out, q, k, v)) or f"device {out.device}"
        expect(res, "tensors on cuda:1", second_device)

    q, k, v = make(1, 8, 2, 256, 256, 128, h)
    expect(res, "rank 3 q", lambda: fa.attention(q[0], k, v), fa.AttentionInputError, "rank 3")
    expect(res, "mixed dtypes", lambda: fa.attention(q, k.bfloat16(), v),
           fa.AttentionInputError, "one dtype")
    expect(res, "Hq % Hkv", lambda: fa.attention(q[:, :3], k, v), fa.AttentionInputError,
           "do not divide")
    expect(res, "causal with right > 0", lambda: fa.attention(q, k, v, causal=True,
                                                              window=(8, 8)),
           fa.AttentionInputError, "causal")
    expect(res, "CPU tensors", lambda: fa.attention(q.cpu(), k.cpu(), v.cpu()),
           fa.UnsupportedError, "CUDA")
    expect(res, "mixed devices", lambda: fa.attention(q, k.cpu(), v), fa.AttentionInputError,
           "one device")
    expect(res, "softcap without fallback", lambda: fa.attention(q, k, v, softcap=30.0),
           fa.UnsupportedError, "softcap")
    expect(res, "softcap with fallback=True",
           lambda: close(fa.attention(q, k, v, softcap=30.0, fallback=True), q, k, v,
                         softcap=30.0))
    q96, k96, v96 = make(1, 4, 4, 128, 128, 96, h)
    expect(res, "head dim 96", lambda: fa.attention(q96, k96, v96), fa.UnsupportedError,
           "head dim 96")
    expect(res, "head dim 96 with fallback=True",
           lambda: close(fa.attention(q96, k96, v96, fallback=True), q96, k96, v96))
    expect(res, "f32 inputs", lambda: fa.attention(q.float(), k.float(), v.float()),
           fa.UnsupportedError, "dtype")
    expect(res, "custom scale missing from the bundle",
           lambda: fa.attention(q, k, v, scale=0.0123), fa.UnsupportedError, "bundle")
    expect(res, "custom scale with fallback=True",
           lambda: close(fa.attention(q, k, v, scale=0.0123, fallback=True), q, k, v,
                         scale=0.0123))

    def lse_fallback():
        out, lse = fa.attention(q, k, v, softcap=20.0, return_lse=True, fallback=True)
        return tuple(lse.shape) == (1, 8, 256) or f"lse shape {tuple(lse.shape)}"
    expect(res, "lse through the fallback", lse_fallback)

    def opcheck():
        # torch's own checks of the registration: schema (no mutation, no aliasing),
        # the fake implementation against the real one, dynamic-shape AOT dispatch.
        for lse in (False, True):
            torch.library.opcheck(torch.ops.fa.attention.default,
                                  (q, k, v, True, -1, -1, None, None, lse, False),
                                  test_utils=("test_schema", "test_faketensor",
                                              "test_aot_dispatch_dynamic"))
        return True
    expect(res, "torch.library.opcheck(fa::attention)", opcheck)

    def backward(q, k, v, **kw):
        # loss.backward() through fa.attention against fa.torch_ops.reference_grad
        # (f32): dq, dk, dv within 1% of the reference's largest entry
        # (bench/bench_backward.py has the sweep and the tight tolerances).
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        out = fa.attention(qg, kg, vg, causal=True, **kw)
        g = torch.randn_like(out)
        out.backward(g)
        errs = []
        for got, ref in zip((qg.grad, kg.grad, vg.grad), reference_grad(q, k, v, g, True)):
            err = (got.float() - ref).abs().max().item()
            if not err <= 1e-2 * ref.abs().max().item():
                errs.append(f"err {err:.3g} of max {ref.abs().max().item():.3g}")
        return not errs or "; ".join(errs)
    expect(res, "backward: the bundle's backward kernel (python_bundle.sh --grad)",
           lambda: backward(q, k, v))
    expect(res, "backward, head dim 96 with fallback=True (torch)",
           lambda: backward(q96, k96, v96, fallback=True))
    table(res, ["check", "ok", "detail"], "behaviour")
    return res


# ---------------------------------------------------------------------------
# torch.compile


def section_compile():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, dim=1024, heads=16, kv_heads=4, use_fa=True):
            super().__init__()
            self.h, self.kvh, self.hd = heads, kv_heads, dim // heads
            self.use_fa = use_fa
            self.norm1 = nn.RMSNorm(dim)
            self.wq = nn.Linear(dim, dim, bias=False)
            self.wkv = nn.Linear(dim, 2 * kv_heads * self.hd, bias=False)
            self.wo = nn.Linear(dim, dim, bias=False)
            self.norm2 = nn.RMSNorm(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def forward(self, x):
            B, N, C = x.shape
            y = self.norm1(x)
            q = self.wq(y).view(B, N, self.h, self.hd).transpose(1, 2)
            k, v = self.wkv(y).view(B, N, 2, self.kvh, self.hd).permute(2, 0, 3, 1, 4)
            if self.use_fa:
                a = fa.attention(q, k, v, causal=True)
            else:
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.wo(a.transpose(1, 2).reshape(B, N, C))
            return x + self.mlp(self.norm2(x))

    out = {}
    torch.manual_seed(0)
    blk = Block().cuda().to(torch.bfloat16).eval()
    ref_blk = Block(use_fa=False).cuda().to(torch.bfloat16).eval()
    ref_blk.load_state_dict(blk.state_dict())
    x = torch.randn(4, 1024, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        eager = blk(x)
        sdpa = ref_blk(x)
        torch._dynamo.reset()
        ex = torch._dynamo.explain(blk)(x)
        out["graph_count"] = ex.graph_count
        out["graph_break_count"] = ex.graph_break_count
        out["break_reasons"] = [str(r.reason)[:300] for r in ex.break_reasons]
        graphs = "\n".join(str(g.graph) for g in ex.graphs)
        out["op_in_graph"] = "fa.attention" in graphs
        torch._dynamo.reset()
        compiled = torch.compile(blk, fullgraph=True)
        t = time.perf_counter()
        got = compiled(x)
        torch.cuda.synchronize()
        out["compile_seconds"] = time.perf_counter() - t
        out["compiled_vs_eager_err"] = (got.float() - eager.float()).abs().max().item()
        out["fa_vs_sdpa_err"] = (eager.float() - sdpa.float()).abs().max().item()
        x2 = torch.randn(2, 512, 1024, device="cuda", dtype=torch.bfloat16)
        out["other_shape_err"] = (compiled(x2).float() - blk(x2).float()).abs().max().item()
        from common import time_back_to_back
        compiled_sdpa = torch.compile(ref_blk, fullgraph=True)
        compiled_sdpa(x)
        out["step_ms_fa_compiled"] = time_back_to_back(lambda: compiled(x), 20)
        out["step_ms_sdpa_compiled"] = time_back_to_back(lambda: compiled_sdpa(x), 20)
        out["step_ms_fa_eager"] = time_back_to_back(lambda: blk(x), 20)
    ok = (out["graph_count"] == 1 and out["graph_break_count"] == 0 and out["op_in_graph"]
          and out["compiled_vs_eager_err"] <= 0.05 and out["fa_vs_sdpa_err"] <= 0.25
          and out["other_shape_err"] <= 0.05)
    out["ok"] = ok
    if not ok:
        fail(f"torch.compile block: {out}")
    table([out], ["graph_count", "graph_break_count", "op_in_graph", "compiled_vs_eager_err",
                  "fa_vs_sdpa_err", "other_shape_err", "compile_seconds", "step_ms_fa_compiled",
                  "step_ms_sdpa_compiled", "step_ms_fa_eager", "ok"],
          "transformer block under torch.compile(fullgraph=True), bf16, B4 N1024 dim1024 "
          "16/4 heads")
    return out


# ---------------------------------------------------------------------------
# host overhead


def host_us(fn, calls):
    """Host microseconds per call: `calls` calls back to back, timed on the host
    until the last is enqueued (at these sizes the kernels are shorter than
    the host's path, so the launch queue does not fill), and until all are
    done."""
    import torch
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    enq = time.perf_counter() - t
    torch.cuda.synchronize()
    done = time.perf_counter() - t
    return 1e6 * enq / calls, 1e6 * done / calls


def section_overhead(calls):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from common import time_ms
    from fa import dispatch
    from fa.torch_ops import chip_for_device
    rows = []
    for N in (64, 128, 256, 512):
        for D in (64, 128):
            q, k, v = make(1, 8, 8, N, N, D, torch.float16)
            variant = fa.Variant.make("f16", D, True, chip=chip_for_device(q.device))
            rt = dispatch.kernel(variant).runtime

            def sdpa_flash():
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
            fns = {
                "fa.attention": lambda: fa.attention(q, k, v, causal=True),
                "torch.ops.fa.attention": lambda: torch.ops.fa.attention(
                    q, k, v, True, -1, -1, None, None, False, False),
                "fa_runtime kernel": lambda: rt(q, k, v),
                "torch sdpa (default)": lambda: F.scaled_dot_product_attention(q, k, v,
                                                                               is_causal=True),
                "torch sdpa (flash)": sdpa_flash,
            }
            for name, fn in fns.items():
                enq, done = host_us(fn, calls)
                gpu = 1e3 * time_ms(fn, 10)
                rows.append(dict(N=N, D=D, call=name, host_us=enq, per_call_us=done,
                                 gpu_us=gpu))
    table(rows, ["N", "D", "call", "host_us", "per_call_us", "gpu_us"],
          "host overhead per call (B1 H8 f16 causal): host_us = enqueue time per call, "
          "per_call_us = with the GPU's work, gpu_us = the kernel alone")
    return rows


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", required=True, help="bundle directory (python -m fa.precompile)")
    ap.add_argument("--out", required=True, help="JSON results path")
    ap.add_argument("--quick", action="store_true", help="fewer correctness shapes")
    ap.add_argument("--calls", type=int, default=2000, help="calls per host-overhead timing")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip "
                    "(correctness, behaviour, compile, overhead)")
    ap.add_argument("--check-bundle-only", action="store_true",
                    help="load and check the bundle, write the JSON, stop (no torch)")
    args = ap.parse_args()
    results = {"argv": sys.argv, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    def save():
        results["failures"] = failures
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1, default=str)

    bundle, results["bundle"] = section_bundle(args.bundle)
    results["env"] = {"python": sys.version.split()[0], "compiler_here": fa.compiler_available()}
    if args.check_bundle_only:
        save()
        print(f"wrote {args.out}")
        return 0
    import torch
    from fa.torch_ops import chip_for_device
    dev = torch.device("cuda", torch.cuda.current_device())
    chip = chip_for_device(dev)
    results["env"].update(torch=torch.__version__, device=torch.cuda.get_device_name(dev),
                          capability=list(torch.cuda.get_device_capability(dev)), chip=chip,
                          devices=torch.cuda.device_count())
    print(f"env: {results['env']}", flush=True)
    skip = set(filter(None, args.skip.split(",")))
    sections = [("correctness", lambda: section_correctness(chip, bundle, args.quick)),
                ("behaviour", lambda: section_behaviour(chip)),
                ("compile", section_compile),
                ("overhead", lambda: section_overhead(args.calls))]
    for name, fn in sections:
        if name in skip:
            continue
        t = time.perf_counter()
        try:
            results[name] = fn()
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            results[name] = {"error": f"{type(e).__name__}: {e}",
                             "traceback": traceback.format_exc()}
            fail(f"section {name} raised {type(e).__name__}: {e}")
        results.setdefault("seconds", {})[name] = time.perf_counter() - t
        save()
    from fa import dispatch
    results["dispatch_sources"] = dict(dispatch.sources)
    save()
    print(f"\nwrote {args.out}; {len(failures)} failure(s)")
    for f in failures:
        print(f"  {f[:300]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
