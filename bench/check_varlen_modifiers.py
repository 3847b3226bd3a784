"""Packed variable-length sequences (varlen) with softcap, score_mod and mask_mod on sm_90a:
the forward (with lse) and backward kernels of bench/kernels_varlen_modifiers.mlir against a
float64 torch reference of each sequence alone (positions counted within the sequence, the
regions' batch argument the sequence index), with a negative control (two sequences'
offsets swapped).

Kernels (here, with the compiler):
  fa-opt bench/kernels_varlen_modifiers.mlir \\
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=KDIR})' -o /dev/null
On the GPU machine:
  python3 bench/check_varlen_modifiers.py --kernels KDIR [--json FILE]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import common  # noqa: E402

H, D, SOFTCAP = 8, 128, 30.0
VERBOSE = os.environ.get("VERBOSE") == "1"
CASES = [[300, 1, 129, 64, 700], [0, 200, 0, 77], [1024, 1000, 999]]


def layout(kern, t):
    if kern.varlen_layout != "thd":
        return t
    return t[0].transpose(0, 1).contiguous() if t.dim() == 4 else t[0].contiguous()


def unlayout(kern, t):
    if kern.varlen_layout != "thd":
        return t
    return t.transpose(0, 1).unsqueeze(0) if t.dim() == 3 else t.unsqueeze(0)


def reference(q, k, v, slopes, docs):
    """out, lse of one sequence (q [1, H, n, D] float64 ...), causal bottom-right."""
    n, m = q.shape[2], k.shape[2]
    s = torch.einsum("bhid,bhjd->bhij", q, k) / D ** 0.5
    s = SOFTCAP * torch.tanh(s / SOFTCAP)
    i = torch.arange(n, device=q.device).view(1, 1, n, 1)
    j = torch.arange(m, device=q.device).view(1, 1, 1, m)
    s = s + slopes.double().view(1, H, 1, 1) * (j - i).double()
    keep = (j - i <= m - n) & (docs[:n].view(1, 1, n, 1) == docs[:m].view(1, 1, 1, m))
    s = s.masked_fill(~keep, float("-inf"))
    mx = s.amax(-1, keepdim=True).detach()
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    p = torch.exp(s - mx)
    tot = p.sum(-1, keepdim=True)
    out = torch.einsum("bhij,bhjd->bhid", p, v) / torch.where(tot > 0, tot, torch.ones_like(tot))
    lse = torch.where(tot[..., 0] > 0, (mx + torch.log(tot))[..., 0],
                      torch.full_like(tot[..., 0], float("-inf")))
    return out, lse


def offsets(lengths):
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return torch.tensor(cu, device="cuda", dtype=torch.int32), cu


def check(kdir, lengths, seed, control=False):
    fwd, bwd = common.load_named(kdir, "vmod_fwd"), common.load_named(kdir, "vmod_bwd")
    g = torch.Generator(device="cuda").manual_seed(seed)
    T = sum(lengths)
    q, k, v, do = (torch.randn(1, H, T, D, device="cuda", dtype=torch.bfloat16, generator=g)
                   for _ in range(4))
    slopes = torch.tensor([2.0 ** (-(h + 1) / 2) for h in range(H)], device="cuda")
    docs = (torch.arange(4096, device="cuda") // 97 % 3).to(torch.int32)  # ids by position
    cq, cu = offsets(lengths)
    if control:
        swapped = list(lengths)
        swapped[0], swapped[-1] = swapped[-1], swapped[0]
        cq, _ = offsets(swapped)
    out, lse = fwd(*(layout(fwd, t) for t in (q, k, v)), cu_seqlens_q=cq, cu_seqlens_k=cq,
                   max_seqlen_q=max(lengths), arg5=slopes, arg6=docs)
    out, lse = unlayout(fwd, out), unlayout(fwd, lse)
    dq, dk, dv = (unlayout(bwd, t) for t in bwd.grad(
        *(layout(bwd, t) for t in (q, k, v, out, lse, do)), cu_seqlens_q=cq, cu_seqlens_k=cq,
        check_indices=True, arg8=slopes, arg9=docs))
    torch.cuda.synchronize()
    errs = {"out": 0.0, "lse": 0.0, "dq": 0.0, "dk": 0.0, "dv": 0.0}
    # Gradient errors relative to the case's largest reference magnitude (over all
    # sequences): a sequence of one row that sees one key has dS = P (dP - delta) = 0
    # exactly, where a kernel rounds, so its own maximum is no scale.
    refs = []
    for s in range(len(lengths)):
        a, b = cu[s], cu[s + 1]
        if a == b:
            continue
        qs, ks, vs = (t[:, :, a:b].double().requires_grad_() for t in (q, k, v))
        ro, rl = reference(qs, ks, vs, slopes, docs)
        rq, rk, rv = torch.autograd.grad(ro, (qs, ks, vs), do[:, :, a:b].double())
        scale = max(ro.abs().max().item(), 1e-30)
        errs["out"] = max(errs["out"], (out[:, :, a:b].double() - ro).abs().max().item() / scale)
        fin = torch.isfinite(rl)
        if fin.any():
            errs["lse"] = max(errs["lse"], (lse[:, :, a:b].double()[fin] - rl[fin]).abs().max().item())
        refs.append((s, a, b, rq, rk, rv))
    scales = {n: max([r[i].abs().max().item() for r in refs] + [1e-30])
              for i, n in ((3, "dq"), (4, "dk"), (5, "dv"))}
    for s, a, b, rq, rk, rv in refs:
        for n, got, ref in (("dq", dq, rq), ("dk", dk, rk), ("dv", dv, rv)):
            e = (got[:, :, a:b].double() - ref).abs().max().item() / scales[n]
            if VERBOSE and not control:
                print(f"  seq {s} [{a}, {b}) {n} err / case max {e:.2e} finite "
                      f"{bool(torch.isfinite(got[:, :, a:b]).all())}", flush=True)
            errs[n] = max(errs[n], e)
    ok = errs["out"] <= 2e-2 and errs["lse"] <= 1e-2 and max(
        errs[n] for n in ("dq", "dk", "dv")) <= 3e-2
    return ok, errs


def time_against_plain(kdir, pdir, lengths=(1024,) * 16):
    """ms of the modifier kernels and the plain varlen kernels (bench/kernels_varlen.mlir's
    varlen_bf16_d128_causal with lse, kernels_backward_varlen.mlir's vbwd_bf16_d128_causal,
    compiled into `pdir`) on the same packed tokens: back-to-back launches between CUDA
    events, median of 5 x 10."""
    fwd, bwd = common.load_named(kdir, "vmod_fwd"), common.load_named(kdir, "vmod_bwd")
    pf = common.load_named(pdir, "varlen_bf16_d128_causal")
    pb = common.load_named(pdir, "vbwd_bf16_d128_causal")
    T = sum(lengths)
    q, k, v, do = (torch.randn(1, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    slopes = torch.tensor([2.0 ** (-(h + 1) / 2) for h in range(H)], device="cuda")
    docs = (torch.arange(4096, device="cuda") // 97 % 3).to(torch.int32)
    cq, _ = offsets(lengths)
    lq = max(lengths)
    L = [layout(fwd, t) for t in (q, k, v, do)]
    out, lse = fwd(*L[:3], cu_seqlens_q=cq, cu_seqlens_k=cq, max_seqlen_q=lq, arg5=slopes,
                   arg6=docs)
    pout, plse = pf(*L[:3], cu_seqlens_q=cq, cu_seqlens_k=cq, max_seqlen_q=lq)
    fns = {
        "fwd_modifiers": lambda: fwd(*L[:3], cu_seqlens_q=cq, cu_seqlens_k=cq, max_seqlen_q=lq,
                                     arg5=slopes, arg6=docs),
        "fwd_plain": lambda: pf(*L[:3], cu_seqlens_q=cq, cu_seqlens_k=cq, max_seqlen_q=lq),
        "bwd_modifiers": lambda: bwd.grad(*L[:3], out, lse, L[3], cu_seqlens_q=cq,
                                          cu_seqlens_k=cq, max_seqlen_k=lq, arg8=slopes,
                                          arg9=docs),
        "bwd_plain": lambda: pb.grad(*L[:3], pout, plse, L[3], cu_seqlens_q=cq,
                                     cu_seqlens_k=cq, max_seqlen_k=lq),
    }
    ms = {}
    for name, fn in fns.items():
        fn()
        samples = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(10):
                fn()
            b.record()
            torch.cuda.synchronize()
            samples.append(a.elapsed_time(b) / 10)
        ms[name] = sorted(samples)[2]
    print(f"{len(lengths)} x {lengths[0]} tokens, H {H}, D {D}, causal bf16: " +
          " ".join(f"{k} {v:.3f} ms" for k, v in ms.items()) +
          f" | fwd modifiers / plain {ms['fwd_plain'] / ms['fwd_modifiers']:.3f}x, "
          f"bwd {ms['bwd_plain'] / ms['bwd_modifiers']:.3f}x", flush=True)
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--plain", help="the plain varlen kernels' dir: time against them")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows, failures = [], 0
    for n, lengths in enumerate(CASES):
        ok, errs = check(a.kernels, lengths, seed=n)
        bad, _ = check(a.kernels, lengths, seed=n, control=True) if len(set(lengths)) > 1 \
            else (False, None)
        failures += (not ok) + bad
        rows.append(dict(lengths=lengths, ok=ok, errs=errs, control_caught=not bad))
        print(f"{'ok  ' if ok and not bad else 'FAIL'} {lengths} " +
              " ".join(f"{k} {v:.2e}" for k, v in errs.items()) +
              f" control {'caught' if not bad else 'MISSED'}", flush=True)
    print(f"{len(rows)} cases, {failures} failures")
    timing = time_against_plain(a.kernels, a.plain) if a.plain else None
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), rows=rows, timing=timing), f,
                      indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
