#!/usr/bin/env python3
r"""The backward pass on the GPU (issue 12): loss.backward() through fa.attention
(the backward kernel through fa::attention's autograd) against torch SDPA's
flash (FlashAttention-2) and cudnn backends, in one process.

Bundle, on the build machine (the kernels this script uses, both chips, about
a minute; FA_CHIP=sm_80 then runs the sm_80 ones on the H200):

    PYTHONPATH=python FA_CAPI_LIBRARY=build/lib/libFAPythonCAPI.so \
      python3 -m fa.precompile --chip sm_90a --chip sm_80 --out .dev/gbundle \
      $(python3 bench/bench_backward.py --print-specs)
    python3 bench/bench_backward.py --bundle .dev/gbundle --check-bundle-only

(--print-specs and --check-bundle-only need no torch.) On the GPU machine:

    python3 bench/bench_backward.py --bundle .dev/gbundle --out $OUT/backward

Sections (each recorded even when another fails; one failing case does not
stop a section):
  correctness  f16/bf16 x D 64/128 x causal, full, windows (256, 0) and (128, 64),
               GQA 8:2 and MHA, odd lengths (1000, 127), Nq != Nk both ways,
               fully masked rows (causal, Nq > Nk), decoding-shaped q (Nq = 1),
               softcap, a loss that also uses lse, [B, N, H, D]-transposed
               inputs: dq, dk, dv of fa.attention(...).backward(g) against
               autograd through the attention in float64 on the GPU. Pass: each
               max abs error <= 2 x torch's own error + one ulp of the
               gradient's scale (its largest entry); torch's error is that of
               SDPA flash where it computes the same attention (no window, no
               softcap, causal only with Nq = Nk), else of SDPA's memory-efficient
               kernel with the band as an explicit mask (no softcap), else of the
               same float64 math run in the input dtype (as FlashAttention's own
               tests; looser); fully masked rows' dq exactly 0. The table also
               gives each error in ulps of the gradient's scale.
  opcheck      torch.library.opcheck on fa::attention (with inputs that require
               grad: the backward through AOTAutograd) and fa::attention_backward;
               torch.compile(fullgraph=True) of fwd+bwd against eager.
  speed        f16/bf16 x D 64/128 x causal or not x N 512 .. 16k at 16k tokens
               (B = 16384 / N), H = 16, and a GQA case (16:4): backward alone
               (torch.autograd.grad of a kept forward) and forward+backward, for
               ours (fa.attention + autograd), ours kernel-only (fa_runtime's
               Kernel.grad: delta, dq_accum, the launch, dq's conversion), SDPA
               flash, SDPA cudnn (a peer is skipped where it refuses the case).
               CUDA events around back-to-back calls, median of rounds after a
               warm-up. TFLOP/s: forward 4 B H N^2 D (halved when causal),
               backward 2.5x, fwd+bwd 3.5x (shared/ANCHORS.md). Ratios:
               peer time / our time (> 1: ours is faster).
  memory       N = 16k, B = 1, H = 16, D = 128, causal, f16: the peak of
               torch.cuda.max_memory_allocated over forward+backward above what
               was allocated before, ours vs flash vs cudnn, with the sizes of
               the O(N D) tensors and of what one N^2 score matrix would take.
Writes OUT.json, OUT.md (tables) and OUT_speed.png (if matplotlib is here).
Exits 1 if a correctness check failed or a section raised.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import fa  # noqa: E402

# ---------------------------------------------------------------------------
# The cases (pure Python: --print-specs and --check-bundle-only need no torch)

DTYPES = ("f16", "bf16")
HEAD_DIMS = (64, 128)
WINDOWS = ((256, 0), (128, 64))
SOFTCAP = 2.0  # small enough that tanh bends the scores of unit-variance inputs


def correctness_cases():
    cases = []
    for dt in DTYPES:
        for d in HEAD_DIMS:
            base = dict(dt=dt, d=d, causal=False, window=None, softcap=None)
            cases += [dict(base, B=2, Hq=8, Hkv=8, Nq=1000, Nk=1000),
                      dict(base, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000, causal=True),
                      dict(base, B=3, Hq=4, Hkv=4, Nq=127, Nk=127, causal=True),
                      dict(base, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000, window=WINDOWS[0]),
                      dict(base, B=2, Hq=4, Hkv=4, Nq=1000, Nk=1000, window=WINDOWS[1]),
                      dict(base, B=2, Hq=8, Hkv=2, Nq=256, Nk=512, causal=True),
                      dict(base, B=2, Hq=4, Hkv=4, Nq=512, Nk=256, causal=True),  # dead rows
                      dict(base, B=2, Hq=8, Hkv=2, Nq=512, Nk=256)]
    one = dict(dt="f16", d=128, causal=False, window=None, softcap=None)
    cases += [dict(one, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000, causal=True, softcap=SOFTCAP),
              dict(one, B=2, Hq=8, Hkv=2, Nq=500, Nk=700, causal=True, lse_grad=True),
              dict(one, dt="bf16", d=64, B=2, Hq=4, Hkv=4, Nq=1000, Nk=1000, window=WINDOWS[1],
                   lse_grad=True),
              dict(one, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000, causal=True, layout="bnhd"),
              dict(one, B=4, Hq=32, Hkv=8, Nq=1, Nk=3000)]
    return cases


SPEED_NS = (512, 1024, 2048, 4096, 8192, 16384)
TOKENS = 16384
SPEED_H = 16


def speed_cases():
    cases = [dict(dt=dt, d=d, causal=c, B=TOKENS // n, Hq=SPEED_H, Hkv=SPEED_H, N=n)
             for dt in DTYPES for d in HEAD_DIMS for c in (False, True) for n in SPEED_NS]
    cases.append(dict(dt="f16", d=128, causal=True, B=TOKENS // 4096, Hq=SPEED_H, Hkv=4, N=4096))
    return cases


MEMORY_CASE = dict(dt="f16", d=128, causal=True, B=1, Hq=16, Hkv=16, N=16384)


def needed_variants(chip):
    """Every kernel the sections launch on `chip`: the forward with lse and the
    backward of each case's attention, and the forward without lse (opcheck
    calls the op with return_lse=False)."""
    keys = set()
    for c in correctness_cases() + speed_cases() + [MEMORY_CASE]:
        keys.add((c["dt"], c["d"], c["causal"], c.get("window"), c.get("softcap")))
    out = []
    for dt, d, causal, window, softcap in sorted(keys, key=str):
        for kind in ("lse", "grad"):
            out.append(fa.Variant.make(dt, d, causal, window, None, softcap, kind == "lse", chip,
                                       grad=kind == "grad"))
    out.append(fa.Variant.make("f16", 64, True, chip=chip))  # opcheck's return_lse=False
    return out


def check_bundle(path, chips=("sm_90a",)):
    """The variants of `chips` missing from the bundle (a list of specs)."""
    b = fa.Bundle.load(path)
    have = set(b.variants())
    return [f"{v.chip}:{v.spec()}" for chip in chips for v in needed_variants(chip)
            if v not in have]


# ---------------------------------------------------------------------------
# Helpers (torch from here on)


def flops_fwd(B, H, Nq, Nk, d, causal):
    f = 4.0 * B * H * Nq * Nk * d
    return f / 2 if causal else f


def ulp(dt):
    return {"f16": 2.0 ** -10, "bf16": 2.0 ** -7}[dt]


def band(Nq, Nk, causal, window, device):
    """[Nq, Nk] bool: the keys each query sees (bottom-right aligned; causal =
    window (-1, 0)), or None for all."""
    import torch
    if causal and window is None:
        window = (-1, 0)
    if window is None:
        return None
    dist = (torch.arange(Nk, device=device)[None, :] - torch.arange(Nq, device=device)[:, None]
            - (Nk - Nq))
    visible = torch.ones(Nq, Nk, dtype=torch.bool, device=device)
    if window[1] >= 0:
        visible = visible & (dist <= window[1])
    if window[0] >= 0:
        visible = visible & (dist >= -window[0])
    return visible


def attention_math(q, k, v, causal=False, window=None, scale=None, softcap=None, dtype=None):
    """Attention with torch ops in `dtype` (float64 by default), differentiable:
    GQA by repeat_interleave, softcap c tanh(s / c), the band bottom-right
    aligned (causal = window (-1, 0)); fully masked rows give out 0 and lse
    -inf, and their gradients 0. Returns (out, lse)."""
    import torch
    dtype = dtype or torch.float64
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    q, k, v = q.to(dtype), k.to(dtype).repeat_interleave(r, 1), v.to(dtype).repeat_interleave(r, 1)
    s = (q @ k.transpose(-1, -2)) * (scale if scale is not None else 1 / math.sqrt(D))
    if softcap is not None:
        s = softcap * torch.tanh(s / softcap)
    visible = band(Nq, Nk, causal, window, q.device)
    if visible is not None:
        s = s.masked_fill(~visible, float("-inf"))
    dead = torch.isneginf(s.amax(-1, keepdim=True))
    s = s.masked_fill(dead, 0.0)  # a dead row: softmax over zeros, then zeroed
    lse = torch.logsumexp(s.float() if dtype != torch.float64 else s, -1)
    p = torch.softmax(s, -1).masked_fill(dead, 0.0)
    return p @ v, lse.masked_fill(dead.squeeze(-1), float("-inf"))


def grads_of(fn, q, k, v, g, gl=None):
    """(dq, dk, dv) of fn(q, k, v) -> (out, lse) for the output gradient g (and
    gl for lse), on leaf copies."""
    import torch
    qs, ks, vs = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out, lse = fn(qs, ks, vs)
    outs, gs = [out], [g.to(out.dtype)]
    if gl is not None:
        fin = torch.isfinite(lse)
        outs.append(torch.where(fin, lse, torch.zeros_like(lse)))
        gs.append(torch.where(fin, gl, torch.zeros_like(gl)).to(lse.dtype))
    return torch.autograd.grad(outs, (qs, ks, vs), gs)


def sdpa_fn(backend, causal, gqa, mask=None):
    """SDPA with one backend; `mask` ([Nq, Nk] bool, the keys seen) instead of
    is_causal for the bands it cannot express."""
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    def fn(q, k, v):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                  is_causal=causal and mask is None,
                                                  enable_gqa=gqa)
    return fn


def time_reps(fn, reps=3, rounds=5):
    """ms per call: the median of `rounds` rounds of `reps` back-to-back calls
    between two CUDA events, each after a warm-up call (common.time_back_to_back)."""
    from common import time_back_to_back
    return statistics.median(time_back_to_back(fn, reps) for _ in range(rounds))


failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg, flush=True)


def guarded(section, fn, *args):
    """Runs a section; an exception is a failure, recorded, not fatal."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        fail(f"section {section}: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {e}"}


# ---------------------------------------------------------------------------
# correctness


def case_name(c):
    what = "causal" if c["causal"] else "full"
    if c.get("window"):
        what = "window%s" % (tuple(c["window"]),)
    extra = "".join([f" softcap={c['softcap']}" if c.get("softcap") else "",
                     " +lse grad" if c.get("lse_grad") else "",
                     " [B,N,H,D]" if c.get("layout") == "bnhd" else ""])
    return (f"{c['dt']} d{c['d']} {what} B{c['B']} Hq{c['Hq']} Hkv{c['Hkv']} "
            f"Nq{c['Nq']} Nk{c['Nk']}{extra}")


def make_inputs(c, dev="cuda"):
    import torch
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[c["dt"]]
    shapes = [(c["B"], c["Hq"], c["Nq"], c["d"]), (c["B"], c["Hkv"], c["Nk"], c["d"]),
              (c["B"], c["Hkv"], c["Nk"], c["d"])]
    if c.get("layout") == "bnhd":  # [B, N, H, D] memory seen as [B, H, N, D]
        return [torch.randn(s[0], s[2], s[1], s[3], device=dev, dtype=dt).transpose(1, 2)
                for s in shapes]
    return [torch.randn(*s, device=dev, dtype=dt) for s in shapes]


def peer_fns(c, device, sdpa_ok):
    """(name, fn) of the fused torch peers that compute case c's attention,
    most accurate first: flash where is_causal means the same band, else the
    memory-efficient kernel with the band as a mask."""
    from torch.nn.attention import SDPBackend
    if not sdpa_ok or c.get("softcap") is not None:
        return []
    gqa = c["Hq"] != c["Hkv"]
    fns = []
    if c.get("window") is None and (not c["causal"] or c["Nq"] == c["Nk"]):
        fns.append(("flash", sdpa_fn(SDPBackend.FLASH_ATTENTION, c["causal"], gqa)))
    visible = band(c["Nq"], c["Nk"], c["causal"], c.get("window"), device)
    efficient = sdpa_fn(SDPBackend.EFFICIENT_ATTENTION, False, gqa, visible)
    fns.append(("efficient+mask", efficient))
    if gqa:  # where the kernel refuses enable_gqa: K and V repeated (autograd sums them back)
        r = c["Hq"] // c["Hkv"]
        plain = sdpa_fn(SDPBackend.EFFICIENT_ATTENTION, False, False, visible)
        fns.append(("efficient+mask, kv repeated",
                    lambda q, k, v: plain(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1))))
    return fns


def check_one(c):
    import torch
    q, k, v = make_inputs(c)
    kw = dict(causal=c["causal"], window=c.get("window"), softcap=c.get("softcap"))
    g = torch.randn(c["B"], c["Hq"], c["Nq"], c["d"], device="cuda", dtype=q.dtype)
    gl = torch.randn(c["B"], c["Hq"], c["Nq"], device="cuda") if c.get("lse_grad") else None

    def ours(qs, ks, vs):
        if gl is None:
            return fa.attention(qs, ks, vs, **kw), None
        return fa.attention(qs, ks, vs, return_lse=True, **kw)
    got = grads_of(ours, q, k, v, g, gl)
    ref = grads_of(lambda a, b, d: attention_math(a, b, d, **kw), q, k, v, g, gl)
    peer, theirs = None, None
    for name, fn in peer_fns(c, q.device, gl is None):
        try:
            grads = grads_of(lambda a, b, d: (fn(a, b, d), None), q, k, v, g)
        except RuntimeError as e:  # the backend refuses the case
            print(f"  {name} refuses {case_name(c)}: {str(e)[:120]}", flush=True)
            continue
        if all(bool(torch.isfinite(t).all().item()) for t in grads):
            peer, theirs = name, grads
            break
        print(f"  {name}: non-finite gradients on {case_name(c)}", flush=True)
    if theirs is None:
        peer = "math " + c["dt"]
        theirs = grads_of(lambda a, b, d: attention_math(a, b, d, dtype=q.dtype, **kw),
                          q, k, v, g, gl)
    row = dict(case=case_name(c), peer=peer, ok=True)
    for name, a, b, r in zip(("dq", "dk", "dv"), got, theirs, ref):
        err = (a.double() - r).abs().max().item()
        terr = (b.double() - r).abs().max().item()
        scale = r.abs().max().item()
        unit = ulp(c["dt"]) * scale
        tol = 2 * terr + unit
        ok = math.isfinite(err) and err <= tol
        row.update({f"{name}_err": err, f"{name}_peer_err": terr, f"{name}_tol": tol,
                    f"{name}_scale": scale, f"{name}_ulps": err / unit if unit else 0.0,
                    f"{name}_peer_ulps": terr / unit if unit else 0.0})
        row["ok"] &= ok
    if c["causal"] and c["Nq"] > c["Nk"]:  # rows above the diagonal see no key
        dead = got[0][:, :, :c["Nq"] - c["Nk"]]
        row["dead_rows_dq_zero"] = bool((dead == 0).all().item())
        row["ok"] &= row["dead_rows_dq_zero"]
    return row


def section_correctness():
    rows = []
    for c in correctness_cases():
        try:
            row = check_one(c)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            row = dict(case=case_name(c), ok=False, error=f"{type(e).__name__}: {e}")
        rows.append(row)
        if not row["ok"]:
            fail(f"correctness {row['case']}: {row.get('error') or row}")
        errs = " ".join(f"{n} {row[n + '_err']:.2e}/{row[n + '_peer_err']:.2e} "
                        f"({row[n + '_ulps']:.2g}/{row[n + '_peer_ulps']:.2g} ulp)"
                        for n in ("dq", "dk", "dv") if n + "_err" in row)
        print(f"{'OK  ' if row['ok'] else 'FAIL'} {row['case']}: ours/{row.get('peer', '-')} "
              f"{errs}", flush=True)
    n_ok = sum(r["ok"] for r in rows)
    print(f"correctness: {n_ok} passed, {len(rows) - n_ok} failed", flush=True)
    return dict(rows=rows, passed=n_ok, failed=len(rows) - n_ok)


# ---------------------------------------------------------------------------
# opcheck and torch.compile


def section_opcheck():
    import torch
    res = {}
    q, k, v = (t.requires_grad_() for t in make_inputs(
        dict(dt="f16", d=64, B=1, Hq=4, Hkv=2, Nq=128, Nk=160)))
    for lse in (False, True):
        name = f"opcheck fa::attention (causal, return_lse={lse}, requires grad)"
        try:
            torch.library.opcheck(torch.ops.fa.attention.default,
                                  (q, k, v, True, -1, -1, None, None, lse, False))
            res[name] = "ok"
        except Exception as e:  # noqa: BLE001
            res[name] = f"{type(e).__name__}: {str(e)[:500]}"
    with torch.no_grad():
        out, lse = fa.attention(q, k, v, causal=True, return_lse=True)
    g = torch.randn_like(out)
    name = "opcheck fa::attention_backward"
    try:
        torch.library.opcheck(torch.ops.fa.attention_backward.default,
                              (g, q.detach(), k.detach(), v.detach(), out, lse, None, True, -1,
                               -1, None, None, False))
        res[name] = "ok"
    except Exception as e:  # noqa: BLE001
        res[name] = f"{type(e).__name__}: {str(e)[:500]}"
    name = "torch.compile(fullgraph=True) fwd+bwd vs eager"
    try:
        step = torch.compile(lambda a, b, c: fa.attention(a, b, c, causal=True), fullgraph=True)
        eager = torch.autograd.grad(fa.attention(q, k, v, causal=True), (q, k, v), g)
        compiled = torch.autograd.grad(step(q, k, v), (q, k, v), g)
        # dq is accumulated with atomics: the order of the additions may differ.
        err = max((a - b).abs().max().item() for a, b in zip(eager, compiled))
        scale = max(a.abs().max().item() for a in eager)
        res[name] = "ok" if err <= 2 * ulp("f16") * scale else f"max difference {err}"
    except Exception as e:  # noqa: BLE001
        res[name] = f"{type(e).__name__}: {str(e)[:500]}"
    for n, r in res.items():
        print(f"{'OK  ' if r == 'ok' else 'FAIL'} {n}: {r}", flush=True)
        if r != "ok":
            fail(f"{n}: {r}")
    return res


# ---------------------------------------------------------------------------
# speed


def speed_fns(c):
    """name -> (backward-alone fn, fwd+bwd fn) for ours, ours kernel-only, and
    the SDPA backends that accept the case."""
    import torch
    from torch.nn.attention import SDPBackend
    from fa.torch_ops import _kernel
    q, k, v = (t.requires_grad_() for t in make_inputs(dict(c, Nq=c["N"], Nk=c["N"])))
    g = torch.randn_like(q)
    causal, gqa = c["causal"], c["Hq"] != c["Hkv"]
    fwds = {"ours": lambda: fa.attention(q, k, v, causal=causal)}
    for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        fwds[name] = (lambda f: lambda: f(q, k, v))(sdpa_fn(be, causal, gqa))
    fns = {}
    for name, fwd in fwds.items():
        try:
            out = fwd()
            torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
        except Exception as e:  # noqa: BLE001 (a peer refusing the case)
            print(f"  {name} skipped: {type(e).__name__}: {str(e)[:150]}", flush=True)
            continue
        fns[name] = ((lambda o: lambda: torch.autograd.grad(o, (q, k, v), g,
                                                            retain_graph=True))(out),
                     (lambda f: lambda: torch.autograd.grad(f(), (q, k, v), g))(fwd))
    with torch.no_grad():
        o, lse = fa.attention(q, k, v, causal=causal, return_lse=True)
    kern = _kernel(q, v, causal, None, None, None, False, False, grad=True)
    fns["ours_kernel"] = (lambda: kern.grad(q, k, v, o, lse, g), None)
    return fns


def section_speed(reps, rounds):
    import torch
    rows = []
    for c in speed_cases():
        B, H, N, d = c["B"], c["Hq"], c["N"], c["d"]
        fwd = flops_fwd(B, H, N, N, d, c["causal"])
        r = dict(c)
        try:
            fns = speed_fns(c)
            for name, (bwd_fn, both_fn) in fns.items():
                ms = time_reps(bwd_fn, reps, rounds)
                r[f"{name}_bwd_ms"], r[f"{name}_bwd_tflops"] = ms, 2.5 * fwd / ms / 1e9
                if both_fn is not None:
                    ms = time_reps(both_fn, reps, rounds)
                    r[f"{name}_fwdbwd_ms"], r[f"{name}_fwdbwd_tflops"] = ms, 3.5 * fwd / ms / 1e9
            for peer in ("flash", "cudnn"):
                for what in ("bwd", "fwdbwd"):
                    if f"{peer}_{what}_ms" in r and f"ours_{what}_ms" in r:
                        r[f"ours_vs_{peer}_{what}"] = r[f"{peer}_{what}_ms"] / r[f"ours_{what}_ms"]
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            r["error"] = f"{type(e).__name__}: {e}"
            fail(f"speed {c}: {r['error']}")
        rows.append(r)
        print(json.dumps({k: (round(x, 3) if isinstance(x, float) else x) for k, x in r.items()}),
              flush=True)
        torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------------------
# memory


def section_memory():
    import torch
    from torch.nn.attention import SDPBackend
    c = MEMORY_CASE
    B, H, N = c["B"], c["Hq"], c["N"]
    q, k, v = (t.requires_grad_() for t in make_inputs(dict(c, Nq=N, Nk=N)))
    g = torch.randn_like(q)
    one = q.numel() * q.element_size()
    res = dict(case=dict(c), sizes_MiB=dict(
        q_or_out_or_dq=one / 2**20, lse_or_delta=B * H * N * 4 / 2**20,
        dq_accum_f32=2 * one / 2**20, one_score_matrix_f32=B * H * N * N * 4 / 2**20))
    fwds = {"ours": lambda: fa.attention(q, k, v, causal=True)}
    for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        fwds[name] = (lambda f: lambda: f(q, k, v))(sdpa_fn(be, True, False))
    for name, fwd in fwds.items():
        try:
            torch.autograd.grad(fwd(), (q, k, v), g)  # warm-up (workspaces, JIT)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            grads = torch.autograd.grad(fwd(), (q, k, v), g)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - base
            del grads
            res[name] = dict(peak_above_inputs_MiB=peak / 2**20, in_units_of_q=peak / one)
        except Exception as e:  # noqa: BLE001
            res[name] = dict(error=f"{type(e).__name__}: {str(e)[:300]}")
        print(f"memory {name}: {res[name]}", flush=True)
    print(f"memory sizes (MiB): {res['sizes_MiB']}", flush=True)
    return res


# ---------------------------------------------------------------------------
# output


def fmt(x):
    return f"{x:.3g}" if isinstance(x, float) else ("" if x is None else str(x))


def table(rows, cols):
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def write_markdown(path, result):
    parts = [f"# bench_backward {result['env'].get('date')}", "",
             "```", json.dumps(result["env"], indent=1), "```", ""]
    corr = result.get("correctness", {})
    if corr.get("rows"):
        parts += [f"## correctness: {corr['passed']} passed, {corr['failed']} failed", "",
                  "max abs error against float64 of ours and of the peer (flash where it "
                  "computes the same attention, else the efficient kernel with a mask, else "
                  "the math in the input dtype), and in ulps of the gradient's largest entry",
                  "", table(corr["rows"], ["case", "ok", "peer", "dq_err", "dq_peer_err",
                                           "dq_ulps", "dq_peer_ulps", "dk_err", "dk_peer_err",
                                           "dk_ulps", "dv_err", "dv_peer_err", "dv_ulps"]), ""]
    if isinstance(result.get("opcheck"), dict):
        parts += ["## opcheck, torch.compile", ""] + \
            [f"- {k}: {v}" for k, v in result["opcheck"].items()] + [""]
    if isinstance(result.get("speed"), list):
        parts += ["## speed (TFLOP/s; ratios: peer time / our time)", "",
                  table(result["speed"], ["dt", "d", "causal", "B", "Hq", "Hkv", "N",
                                          "ours_bwd_tflops", "ours_kernel_bwd_tflops",
                                          "flash_bwd_tflops", "cudnn_bwd_tflops",
                                          "ours_vs_flash_bwd", "ours_vs_cudnn_bwd",
                                          "ours_fwdbwd_tflops", "flash_fwdbwd_tflops",
                                          "cudnn_fwdbwd_tflops", "ours_vs_flash_fwdbwd",
                                          "ours_vs_cudnn_fwdbwd"]), ""]
    mem = result.get("memory")
    if isinstance(mem, dict) and "case" in mem:
        parts += ["## peak memory of forward+backward above the inputs (MiB)", "",
                  table([dict(impl=n, **mem[n]) for n in ("ours", "flash", "cudnn") if n in mem],
                        ["impl", "peak_above_inputs_MiB", "in_units_of_q", "error"]), "",
                  "sizes (MiB): " + ", ".join(f"{k} {v:.4g}" for k, v in
                                              mem["sizes_MiB"].items()), ""]
    parts += ["failures: " + ("; ".join(result["failures"]) or "none")]
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def plot(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot", flush=True)
        return None
    panels = [(dt, d, c) for dt in DTYPES for d in HEAD_DIMS for c in (False, True)]
    fig, axes = plt.subplots(2, 4, figsize=(18, 8), sharey=True)
    for ax, (dt, d, causal) in zip(axes.flat, panels):
        sel = [r for r in rows if (r.get("dt"), r.get("d"), r.get("causal"), r.get("Hkv")) ==
               (dt, d, causal, SPEED_H)]
        for name in ("ours", "ours_kernel", "flash", "cudnn"):
            pts = [(r["N"], r[f"{name}_bwd_tflops"]) for r in sel if f"{name}_bwd_tflops" in r]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{dt} d{d} {'causal' if causal else 'full'}")
        ax.set_xlabel("N (B = 16k / N)")
    axes[0][0].set_ylabel("backward TFLOP/s")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def environment(args):
    import torch
    from fa.torch_ops import chip_for_device
    b = fa.bundle.loaded()[0]
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "torch": torch.__version__,
            "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
            "capability": list(torch.cuda.get_device_capability(0)),
            "chip": chip_for_device(torch.device("cuda:0")),
            "FA_CHIP": os.environ.get("FA_CHIP", ""), "bundle": os.path.abspath(args.bundle),
            "bundle_compiler": b.index.get("compiler"),
            "bundle_created": b.index.get("created"), "reps": args.reps, "rounds": args.rounds}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle directory (python -m fa.precompile)")
    ap.add_argument("--out", help="output path prefix: OUT.json, OUT.md, OUT_speed.png")
    ap.add_argument("--sections", default="correctness,opcheck,speed,memory")
    ap.add_argument("--reps", type=int, default=3, help="back-to-back calls per timed round")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds (the median is kept)")
    ap.add_argument("--print-specs", action="store_true",
                    help="print the variant specs the bundle needs (for fa.precompile) and exit")
    ap.add_argument("--check-bundle-only", action="store_true",
                    help="check that --bundle has every kernel (sm_90a and sm_80) and exit")
    args = ap.parse_args()
    if args.print_specs:
        print(" ".join(sorted({v.spec() for v in needed_variants("sm_90a")})))
        return 0
    if not args.bundle:
        ap.error("--bundle is required")
    if args.check_bundle_only:
        missing = check_bundle(args.bundle, ("sm_90a", "sm_80"))
        print(f"{args.bundle}: " + (f"missing {', '.join(missing)}" if missing else
                                    f"all {2 * len(needed_variants('sm_90a'))} kernels"))
        return 1 if missing else 0
    if not args.out:
        ap.error("--out is required")
    import torch
    fa.load_bundle(args.bundle)
    torch.manual_seed(0)
    result = {"env": environment(args)}
    print(json.dumps(result["env"]), flush=True)
    from fa.torch_ops import chip_for_device
    missing = check_bundle(args.bundle, (chip_for_device(torch.device("cuda:0")),))
    if missing:
        fail(f"the bundle lacks {', '.join(missing)}")
    sections = args.sections.split(",")
    t0 = time.perf_counter()
    if "correctness" in sections:
        result["correctness"] = guarded("correctness", section_correctness)
    if "opcheck" in sections:
        result["opcheck"] = guarded("opcheck", section_opcheck)
    if "speed" in sections:
        result["speed"] = guarded("speed", section_speed, args.reps, args.rounds)
    if "memory" in sections:
        result["memory"] = guarded("memory", section_memory)
    result["seconds"] = time.perf_counter() - t0
    result["failures"] = failures
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=1, default=str)
    write_markdown(args.out + ".md", result)
    if isinstance(result.get("speed"), list):
        guarded("plot", plot, args.out + "_speed.png", result["speed"])
    print(open(args.out + ".md").read())
    print(f"{result['seconds']:.0f} s; failures: {len(failures)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
