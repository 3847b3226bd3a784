"""fa.flex.attention (score_mod / mask_mod written in Python, traced into the kernels) on the
GPU: each case against fa.flex.reference (the same Python functions run on numpy arrays,
float64) with a negative control (the captured tensors perturbed, or the function dropped),
then the time of a few variants against our plain kernel (fa.attention), FlexAttention
(torch.compile'd flex_attention with the same Python functions and a block mask) and torch
SDPA's cudnn / flash backends on the plain problem, in one process.

The GPU machine has no compiler, so the kernels are traced and compiled here first:
    python3 bench/flex_api.py compile DIR          # both chips, fa.flex.save(DIR)
    python3 -m fa.precompile --chip sm_90a --chip sm_80 --out PLAIN f16,d128,full f16,d64,full \
        bf16,d128,causal,lse bf16,d128,full,lse bf16,d128,causal,grad bf16,d128,full,grad \
        bf16,d128,full,softcap=30
    FA_BUNDLE=PLAIN python3 bench/flex_api.py check DIR [--json FILE] [--no-timing]   # GPU
(FA_CHIP=sm_80 runs the sm_80 kernels.)
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import fa.flex as flex  # noqa: E402


def cases(lib, make):
    """name -> (B, Hq, Hkv, Nq, Nk, D, causal, dtype, score_mod, mask_mod, captures); `make`
    builds a capture (shape, kind) with `lib` (numpy or torch)."""
    out = {}

    # ALiBi with a captured f32 [H] slope table, causal, GQA.
    slopes = make((8,), "slopes")

    def alibi(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)
    out["alibi_causal"] = (2, 8, 2, 1000, 1000, 128, True, "bf16", alibi, None, [slopes])

    # Gemma 2's softcap as a score_mod (no capture), full, Nq != Nk.
    def softcap(score, b, h, q_idx, kv_idx):
        return 30.0 * flex.tanh(score / 30.0)
    out["softcap_full"] = (1, 4, 4, 700, 1300, 128, False, "f16", softcap, None, [])

    # Document masking: a captured i32 [N] id table, full.
    docs = make((1024,), "docs")

    def document(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]
    out["document_full"] = (1, 8, 8, 1024, 1024, 128, False, "bf16", None, document, [docs])

    # Prefix-LM: the first 200 keys visible to every row, causal elsewhere (mask_mod only).
    def prefix_lm(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) | (kv_idx < 200)
    out["prefix_lm"] = (2, 4, 2, 777, 777, 64, False, "f16", None, prefix_lm, [])

    # A relative-position bias read from a captured f16 [2N - 1] table at kv - q + N - 1,
    # with a sliding window written as a mask_mod, causal.
    n = 640
    table = make((2 * n - 1,), "table")

    def relpos(score, b, h, q_idx, kv_idx):
        return score + table[kv_idx - q_idx + (n - 1)]

    def window(b, h, q_idx, kv_idx):
        return q_idx - kv_idx <= 128
    out["relpos_window"] = (1, 4, 4, n, n, 64, True, "bf16", relpos, window, [table])

    # Per-(batch, head) bias matrix [B, H] and a per-batch key length [B] (i64), both read by
    # the modifiers, floor division and modulo on positions.
    bh = make((2, 4), "bh")
    lens = make((2,), "lens")

    def bias_bh(score, b, h, q_idx, kv_idx):
        stripe = flex.where((kv_idx // 16) % 2 == 0, 0.25, -0.25)
        return score * 0.5 + bh[b, h] + stripe

    def key_len(b, h, q_idx, kv_idx):
        return kv_idx < lens[b]
    out["bias_bh_lens"] = (2, 4, 4, 300, 520, 128, False, "f16", bias_bh, key_len, [bh, lens])
    return out


def numpy_capture(shape, kind, seed=1):
    import numpy as np
    rng = np.random.default_rng(seed)
    if kind == "slopes":
        return np.array([2.0 ** (-8.0 * (h + 1) / shape[0]) for h in range(shape[0])],
                        np.float32)
    if kind == "docs":
        return np.sort(rng.integers(0, 4, shape)).astype(np.int32)
    if kind == "table":
        return rng.standard_normal(shape).astype(np.float16)
    if kind == "bh":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "lens":
        return np.array([317, 0], np.int64)[:shape[0]]  # one sequence sees no key
    raise ValueError(kind)


def compile_all(out):
    import fa
    made = cases(None, numpy_capture)
    for chip in ("sm_90a", "sm_80"):
        for name, (B, Hq, Hkv, Nq, Nk, D, causal, dt, sm, mm, caps) in made.items():
            traced = flex.trace(sm, mm)
            for lse, grad in ((False, False), (True, False), (False, True)):
                kern = flex.kernel(traced, chip, dt, D, D, causal, lse=lse, grad=grad)
                print(f"{chip} {name} lse={lse} grad={grad}: {kern.name}, params "
                      f"{[p['name'] for p in kern.manifest['params']]}", flush=True)
            if name in LEARNABLE:  # the backward that also forms the capture's gradient
                at = learnable_positions(traced, caps[LEARNABLE[name]])
                flex.kernel(traced, chip, dt, D, D, causal, grad=True, capture_grads=at)
    for chip in ("sm_90a", "sm_80"):  # the timing's kernels
        for name, (sm, mm, causal) in timing_cases(None, numpy_capture).items():
            for lse, grad in ((False, False), (True, False), (False, True)):
                flex.kernel(flex.trace(sm, mm), chip, "bf16", 128, 128, causal, lse=lse,
                            grad=grad)
            if name == "alibi_causal":  # the slopes learnable
                flex.kernel(flex.trace(sm, mm), chip, "bf16", 128, 128, causal, grad=True,
                            capture_grads=(0,))
    print(f"{flex.save(out)} kernels in {out}")
    del fa


N_TIME, H_TIME = 8192, 16

# The cases whose float capture (by its position in the case's list) is made
# learnable in the capture-gradient check (score_mod adds it to the score).
# Not bias_bh_lens: its bh[b, h] is the same for every key of a row, which the
# softmax cancels, so its gradient is 0 up to rounding (a relative error is
# meaningless there).
LEARNABLE = {"alibi_causal": 0, "relpos_window": 0}


def learnable_positions(traced, capture):
    """The position of `capture` (by identity) in traced.captures, as a tuple."""
    return tuple(i for i, c in enumerate(traced.captures) if c is capture)


def timing_cases(lib, make):
    slopes = make((H_TIME,), "slopes")
    docs = make((N_TIME,), "docs")

    def alibi(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)

    def softcap(score, b, h, q_idx, kv_idx):
        return 30.0 * flex.tanh(score / 30.0)

    def document(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]
    return {"alibi_causal": (alibi, None, True), "softcap_full": (softcap, None, False),
            "document_full": (None, document, False)}


def check_all(directory, json_path, timing):
    import numpy as np
    import torch
    import fa
    print(f"loaded {flex.load(directory)} kernels", flush=True)
    dev = torch.device("cuda")
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}
    numpy_made = cases(None, numpy_capture)
    torch_made = cases(torch, lambda shape, kind: torch.from_numpy(
        numpy_capture(shape, kind)).to(dev))
    gen = torch.Generator().manual_seed(5)
    rows, failures = [], 0
    for name, (B, Hq, Hkv, Nq, Nk, D, causal, dt, sm, mm, caps) in torch_made.items():
        q = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtypes[dt])
        k = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtypes[dt])
        v = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtypes[dt])
        out, lse = flex.attention(q, k, v, sm, mm, causal=causal, return_lse=True)
        torch.cuda.synchronize()
        _, _, _, _, _, _, _, _, nsm, nmm, _ = numpy_made[name]
        ref, rlse = flex.reference(q.float().cpu().numpy(), k.float().cpu().numpy(),
                                   v.float().cpu().numpy(), nsm, nmm, causal=causal)
        err = float(np.abs(out.float().cpu().numpy() - ref).max())
        fin = np.isfinite(rlse)
        lse_np = lse.cpu().numpy()
        lerr = float(np.abs(lse_np[fin] - rlse[fin]).max()) if fin.any() else 0.0
        dead_ok = bool((lse_np[~fin] == -np.inf).all()) and bool(
            (out.float().cpu().numpy()[~fin] == 0).all())
        tol = 2e-2 if dt == "bf16" else 4e-3
        ok = err <= tol and lerr <= 1e-3 and dead_ok and bool(torch.isfinite(out).all())
        # Negative control: the captures perturbed (the kernel reads them at run time), or,
        # without captures, the plain attention's result against the modified reference.
        for c in caps:
            c.copy_((c.float() * 1.5 + 1).to(c.dtype) if c.is_floating_point()
                    else torch.roll(c, 7))
        if caps:
            bad = flex.attention(q, k, v, sm, mm, causal=causal)
        else:
            bad = fa.attention(q, k, v, causal=causal)
        for c, nc in zip(caps, numpy_made[name][10]):
            c.copy_(torch.from_numpy(nc).to(dev))
        caught = float(np.abs(bad.float().cpu().numpy() - ref).max()) > 10 * max(err, 1e-3)
        same_with_block_mask = None
        if mm is not None and sm is None:
            # FlexAttention's spelling: a BlockMask from create_block_mask; its mask_mod is
            # traced, so the kernel and the result are the same.
            try:
                from torch.nn.attention.flex_attention import create_block_mask
                bm = create_block_mask(mm, B, None, Nq, Nk, device=dev)
                again = flex.attention(q, k, v, block_mask=bm, causal=causal)
                # (out came from the lse kernel: the same arithmetic, compared loosely)
                same_with_block_mask = float((again.float() - out.float()).abs().max()) <= 1e-3
                ok = ok and same_with_block_mask
            except ImportError as e:
                print(f"no create_block_mask: {e}")
        failures += (not ok) + (not caught)
        rows.append(dict(case=name, dtype=dt, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk, D=D,
                         same_with_block_mask=same_with_block_mask,
                         causal=causal, max_err=err, lse_err=lerr, dead_rows_ok=dead_ok,
                         ok=ok, negative_control_caught=caught))
        print(f"{'ok  ' if ok and caught else 'FAIL'} {name:15s} {dt:5s} max|out-ref| "
              f"{err:.2e} lse {lerr:.2e} dead rows {dead_ok} control "
              f"{'caught' if caught else 'MISSED'}", flush=True)
    grad_rows = []
    for name, (B, Hq, Hkv, Nq, Nk, D, causal, dt, sm, mm, caps) in torch_made.items():
        q = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtypes[dt])
        k = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtypes[dt])
        v = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtypes[dt])
        do = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtypes[dt])
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        out = flex.attention(qg, kg, vg, sm, mm, causal=causal)
        (out.float() * do.float()).sum().backward()
        torch.cuda.synchronize()
        got = (qg.grad, kg.grad, vg.grad)
        ref = torch_reference_grads(q, k, v, do, sm, mm, causal)
        plain = torch_reference_grads(q, k, v, do, None, None, causal)

        def rel(a, b):
            return ((a.double() - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
        errs = [rel(g, r) for g, r in zip(got, ref)]
        tol = 3e-2 if dt == "bf16" else 1e-2
        finite = all(bool(torch.isfinite(g).all()) for g in got)
        ok = finite and max(errs) <= tol
        # Negative control: the gradients of the attention without the modifiers differ.
        caught = max(rel(g, r) for g, r in zip(got, plain)) > 3 * tol
        failures += (not ok) + (not caught)
        grad_rows.append(dict(case=name, dtype=dt, dq=errs[0], dk=errs[1], dv=errs[2],
                              ok=ok, negative_control_caught=caught))
        print(f"{'ok  ' if ok and caught else 'FAIL'} grad {name:15s} {dt:5s} dq {errs[0]:.2e} "
              f"dk {errs[1]:.2e} dv {errs[2]:.2e} control {'caught' if caught else 'MISSED'}",
              flush=True)
    # Gradients of a learnable capture (grad_captures): the slope table, the f16
    # relative-position table, the [B, H] bias, each requiring grad, against torch
    # autograd in float64 (the same functions on the same tensors).
    for name, idx in LEARNABLE.items():
        B, Hq, Hkv, Nq, Nk, D, causal, dt, sm, mm, caps = torch_made[name]
        c = caps[idx]
        c.requires_grad_()
        q = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtypes[dt])
        k = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtypes[dt])
        v = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtypes[dt])
        do = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtypes[dt])
        try:
            out = flex.attention(q, k, v, sm, mm, causal=causal)
            (got,) = torch.autograd.grad(out, c, do)
            torch.cuda.synchronize()
            ref = torch_reference_capture_grad(q, k, v, do, sm, mm, causal, c)
            err = ((got.double() - ref).abs().max() /
                   ref.abs().max().clamp_min(1e-30)).item()
            ok = bool(torch.isfinite(got).all()) and err <= (3e-2 if dt == "bf16" else 1e-2)
            caught = ref.abs().max().item() > 0  # a gradient that can be wrong
        except Exception as e:  # noqa: BLE001
            print(f"capture grad {name}: {type(e).__name__}: {e}")
            err, ok, caught = float("nan"), False, False
        finally:
            c.requires_grad_(False)
        failures += (not ok) + (not caught)
        grad_rows.append(dict(case=name, dtype=dt, capture_grad=err, ok=ok,
                              negative_control_caught=caught))
        print(f"{'ok  ' if ok and caught else 'FAIL'} capture grad {name:15s} {dt:5s} "
              f"rel err {err:.2e} ({list(c.shape)} {c.dtype})", flush=True)
    timings = time_all(dev) if timing else []
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(date=time.strftime("%Y-%m-%d"), device=torch.cuda.get_device_name(),
                           chip=os.environ.get("FA_CHIP", "default"), checks=rows,
                           grad_checks=grad_rows, timing=timings), f, indent=1)
    print(f"{len(rows) + len(grad_rows)} cases, {failures} failures (checks and negative controls)")
    return failures


def torch_reference_capture_grad(q, k, v, do, sm, mm, causal, capture):
    """d sum(out * do) / d capture of the float64 reference (torch autograd; the
    functions read `capture`, a leaf that requires grad)."""
    import torch
    out = torch_reference_out(q.double(), k.double(), v.double(), sm, mm, causal)
    (g,) = torch.autograd.grad((out * do.double()).sum(), capture)
    return g.double()


def torch_reference_out(qd, kd, vd, sm, mm, causal):
    """The attention of float64 qd, kd, vd with the functions run on torch
    tensors (fa.flex's functions dispatch to torch there), differentiable;
    rows that see no key give 0."""
    import torch
    r = qd.shape[1] // kd.shape[1]
    kr, vr = kd.repeat_interleave(r, 1), vd.repeat_interleave(r, 1)
    B, Hq, Nq, D = qd.shape
    Nk = kd.shape[2]
    s = torch.einsum("bhid,bhjd->bhij", qd, kr) / D ** 0.5
    dev = qd.device
    b = torch.arange(B, device=dev).view(B, 1, 1, 1)
    h = torch.arange(Hq, device=dev).view(1, Hq, 1, 1)
    i = torch.arange(Nq, device=dev).view(1, 1, Nq, 1)
    j = torch.arange(Nk, device=dev).view(1, 1, 1, Nk)
    if sm is not None:
        s = sm(s, b, h, i, j).double().expand(B, Hq, Nq, Nk)
    visible = torch.ones((B, Hq, Nq, Nk), dtype=torch.bool, device=dev)
    if causal:
        visible = visible & (j - i - (Nk - Nq) <= 0)
    if mm is not None:
        visible = visible & mm(b, h, i, j)
    s = s.masked_fill(~visible, float("-inf"))
    m = s.amax(-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = torch.exp(s - m)
    l_ = p.sum(-1, keepdim=True)
    return torch.einsum("bhij,bhjd->bhid", p, vr) / torch.where(l_ > 0, l_, torch.ones_like(l_))


def torch_reference_grads(q, k, v, do, sm, mm, causal):
    """dq, dk, dv of sum(out * do) by torch autograd in float64 on the GPU
    (torch_reference_out)."""
    import torch
    qd, kd, vd = (t.double().requires_grad_() for t in (q, k, v))
    out = torch_reference_out(qd, kd, vd, sm, mm, causal)
    return torch.autograd.grad(out, (qd, kd, vd), do.double())


def _ms(fn, reps=20, samples=5):
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / reps)
    return sorted(times)[len(times) // 2]


def time_all(dev):
    """B 1, H 16, N 8192, D 128, bf16: back-to-back calls through each public API (host path
    included), median of 5 x 20 (forward + backward: 5 x 5). TFLOP/s of the full problem (4 B H N^2 D, halved when
    causal: ANCHORS.md) whatever the mask hides, so the columns compare as times."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import fa
    made = timing_cases(torch, lambda shape, kind: torch.from_numpy(
        numpy_capture(shape, kind)).to(dev))
    q, k, v = (torch.randn((1, H_TIME, N_TIME, 128), device=dev, dtype=torch.bfloat16)
               for _ in range(3))
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        flex_compiled = torch.compile(flex_attention)
    except Exception as e:  # noqa: BLE001
        flex_compiled = None
        print(f"FlexAttention unavailable: {e}")
    rows = []
    for name, (sm, mm, causal) in made.items():
        flops = 4 * H_TIME * N_TIME * N_TIME * 128 / (2 if causal else 1)
        ms = {"fa_flex": _ms(lambda: flex.attention(q, k, v, sm, mm, causal=causal)),
              "fa_plain": _ms(lambda: fa.attention(q, k, v, causal=causal))}
        if name.startswith("softcap"):  # the same softcap built in (fa.attention's softcap=)
            try:
                ms["fa_builtin_softcap"] = _ms(lambda: fa.attention(q, k, v, causal=causal,
                                                                    softcap=30.0))
            except Exception as e:  # noqa: BLE001
                print(f"built-in softcap: {e}")
        for label, backend in (("cudnn_plain", SDPBackend.CUDNN_ATTENTION),
                               ("flash_plain", SDPBackend.FLASH_ATTENTION)):
            try:
                with sdpa_kernel([backend]):
                    ms[label] = _ms(lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal))
            except Exception as e:  # noqa: BLE001
                print(f"{label}: {e}")
        if flex_compiled is not None:
            try:
                def full_mask(b, h, q_idx, kv_idx):
                    keep = q_idx >= 0
                    if causal:
                        keep = keep & (kv_idx <= q_idx)
                    if mm is not None:
                        keep = keep & mm(b, h, q_idx, kv_idx)
                    return keep
                bm = create_block_mask(full_mask, 1, None, N_TIME, N_TIME, device=dev)
                ms["flexattention"] = _ms(lambda: flex_compiled(q, k, v, score_mod=sm,
                                                                block_mask=bm))
            except Exception as e:  # noqa: BLE001
                print(f"FlexAttention {name}: {e}")
        # Forward + backward (loss.backward() through each API; backward FLOPs = 2.5x).
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        do = torch.randn_like(q)

        def train(call):
            def step():
                out = call(qg, kg, vg)
                torch.autograd.grad(out, (qg, kg, vg), do)
            return step
        try:
            ms["fa_flex_fwd_bwd"] = _ms(train(lambda a, b_, c: flex.attention(
                a, b_, c, sm, mm, causal=causal)), reps=5)
            ms["fa_plain_fwd_bwd"] = _ms(train(lambda a, b_, c: fa.attention(
                a, b_, c, causal=causal)), reps=5)
            if "flexattention" in ms:
                ms["flexattention_fwd_bwd"] = _ms(train(lambda a, b_, c: flex_compiled(
                    a, b_, c, score_mod=sm, block_mask=bm)), reps=5)
            if name == "alibi_causal":  # the slope table learnable too (grad_captures)
                slopes = sm.__closure__[0].cell_contents if sm.__closure__ else None
                if isinstance(slopes, torch.Tensor) and slopes.is_floating_point():
                    slopes.requires_grad_()
                    try:
                        ms["fa_flex_fwd_bwd_learnable"] = _ms(lambda: torch.autograd.grad(
                            flex.attention(qg, kg, vg, sm, mm, causal=causal),
                            (qg, kg, vg, slopes), do), reps=5)
                    finally:
                        slopes.requires_grad_(False)
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                ms["cudnn_plain_fwd_bwd"] = _ms(train(lambda a, b_, c:
                                                      F.scaled_dot_product_attention(
                                                          a, b_, c, is_causal=causal)), reps=5)
        except Exception as e:  # noqa: BLE001
            print(f"fwd+bwd {name}: {e}")
        row = dict(case=name, causal=causal, ms=ms,
                   tflops={x: flops * (3.5 if x.endswith("fwd_bwd") else 1) / t / 1e9
                           for x, t in ms.items()},
                   flex_over_plain=ms["fa_plain"] / ms["fa_flex"])
        if "flexattention" in ms:
            row["ours_over_flexattention"] = ms["flexattention"] / ms["fa_flex"]
        if "cudnn_plain" in ms:
            row["ours_over_cudnn_plain"] = ms["cudnn_plain"] / ms["fa_flex"]
        rows.append(row)
        print(f"{name:14s} " + " ".join(f"{x} {t:.3f} ms" for x, t in ms.items()) +
              f" | ours/plain {row['flex_over_plain']:.3f}x" +
              (f", vs FlexAttention {row['ours_over_flexattention']:.2f}x"
               if "ours_over_flexattention" in row else ""), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("compile", "check"))
    ap.add_argument("dir")
    ap.add_argument("--json")
    ap.add_argument("--no-timing", action="store_true")
    a = ap.parse_args()
    if a.mode == "compile":
        compile_all(a.dir)
        return 0
    return 1 if check_all(a.dir, a.json, not a.no_timing) else 0


if __name__ == "__main__":
    sys.exit(main())
