"""Packed variable-length sequences (fa.attention's varlen) on sm_90a: correctness and speed.

    python3 bench/bench_varlen.py --kdir DIR --check --bench --out results/run

DIR holds the kernels of bench/kernels_varlen.mlir (fa-dump-kernel). --check runs each varlen
kernel on packed sequences (unequal lengths, empty sequences, Nq != Nk per sequence, GQA) and
compares every sequence with the f32 reference of bench/common.py (bottom-right causal per
sequence), the lse too, and that rows of no sequence are left unwritten. --bench times, in one
process and interleaved, at 16k packed tokens: our varlen kernel, our padded (batched) kernel,
fa.attention_varlen (the public API,
kernels from a loaded bundle: FA_BUNDLE), torch's FlashAttention-2 varlen (aten._flash_attention_forward with cum_seq offsets) and, on the
padded batch, cudnn (torch SDPA). FLOPs are the useful ones (ANCHORS.md: 4 N^2 D per head per
sequence, halved when causal). Kernel time: CUDA events with the host path hidden; user time:
back-to-back calls through the public call (fa_runtime Kernel.__call__ / torch op).
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DT, LSE_TOL, TOL, load_named, reference, time_back_to_back, time_once  # noqa: E402

SENTINEL = 7.0


def token_major(kern):
    """Whether the varlen kernel takes [T, H, D] tensors (varlen_layout thd) or [1, H, T, D]."""
    return kern.manifest.get("varlen_layout", "htd") == "thd"


def to_kernel(x, thd):
    """A logical [1, H, T, D] (or lse [1, H, T]) tensor in the kernel's layout."""
    if not thd:
        return x
    return x[0].transpose(0, 1).contiguous() if x.dim() == 4 else x[0].contiguous()


def from_kernel(x, thd, rank):
    """The kernel's out ([T, H, D]) / lse ([H, T]) as the logical [1, H, T, D] / [1, H, T]."""
    if not thd:
        return x
    return x.transpose(0, 1).unsqueeze(0) if rank == 4 else x.unsqueeze(0)


def offsets(lengths):
    return torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()),
                        device="cuda", dtype=torch.int32)


def check_one(kdir, dt, d, causal, lq, lk, Hq, Hkv, pad_rows=0):
    kern = load_named(kdir, f"varlen_{dt}_d{d}_{'causal' if causal else 'full'}")
    Tq, Tk = sum(lq) + pad_rows, sum(lk)
    q = torch.randn(1, Hq, Tq, d, device="cuda", dtype=DT[dt])
    k = torch.randn(1, Hkv, Tk, d, device="cuda", dtype=DT[dt])
    v = torch.randn(1, Hkv, Tk, d, device="cuda", dtype=DT[dt])
    cq, ck = offsets(lq), offsets(lk)
    thd = token_major(kern)
    out = to_kernel(torch.full_like(q, SENTINEL), thd)
    lse = to_kernel(torch.full((1, Hq, Tq), SENTINEL, device="cuda"), thd)
    kern(to_kernel(q, thd), to_kernel(k, thd), to_kernel(v, thd), out=out, lse=lse,
         cu_seqlens_q=cq, cu_seqlens_k=ck, max_seqlen_q=max(lq))
    torch.cuda.synchronize()
    out, lse = from_kernel(out, thd, 4), from_kernel(lse, thd, 3)
    err = lerr = 0.0
    inf_ok = True
    qs = ks = 0
    for a, b in zip(lq, lk):
        if a and not b:
            # No key: out 0, lse -inf (the kernels' fully masked row).
            err = max(err, out[:, :, qs:qs + a].float().abs().max().item())
            inf_ok &= bool(torch.all(torch.isneginf(lse[:, :, qs:qs + a])).item())
        elif a:
            ro, rl = reference(q[:, :, qs:qs + a], k[:, :, ks:ks + b], v[:, :, ks:ks + b], causal)
            err = max(err, (out[:, :, qs:qs + a].float() - ro).abs().max().item())
            fin = torch.isfinite(rl)
            got = lse[:, :, qs:qs + a]
            if bool(fin.any()):
                lerr = max(lerr, (got[fin] - rl[fin]).abs().max().item())
            inf_ok &= bool(torch.all(torch.isneginf(got[~fin])).item())
        qs += a
        ks += b
    untouched = bool(torch.all(out[:, :, qs:] == SENTINEL).item()) and bool(
        torch.all(lse[:, :, qs:] == SENTINEL).item())
    nan = bool(torch.isnan(out[:, :, :qs]).any().item())
    ok = err <= TOL[dt] and lerr <= LSE_TOL and inf_ok and untouched and not nan
    print(f"check varlen {'thd' if thd else 'htd'} {dt} d{d} causal={causal} Hq{Hq} Hkv{Hkv} lq={lq} lk={lk} pad={pad_rows}: "
          f"err {err:.2e} lse err {lerr:.2e} -inf {inf_ok} untouched {untouched} "
          f"{'OK' if ok else 'FAIL'}", flush=True)
    return dict(layout="thd" if thd else "htd", dtype=dt, d=d, causal=causal, Hq=Hq, Hkv=Hkv, lq=lq, lk=lk, pad_rows=pad_rows,
                max_abs_err=err, lse_err=lerr, ok=ok)


def check(kdir):
    rows = []
    cases = [
        ([1000, 0, 129, 3000, 17], None, 8, 2, 0),        # unequal, an empty sequence, Nq = Nk
        ([128, 256, 640], [300, 256, 1000], 4, 4, 0),     # Nq != Nk per sequence
        ([77, 500], [0, 900], 8, 1, 0),                   # a sequence without keys (MQA)
        ([2048] * 3, None, 8, 8, 100),                    # rows past the last offset
        ([5000], None, 4, 2, 0),                          # one sequence
    ]
    for dt in ("bf16", "f16"):
        for d in (64, 128):
            for causal in (False, True):
                for lq, lk, hq, hkv, pad in cases:
                    rows.append(check_one(kdir, dt, d, causal, lq, lk or lq, hq, hkv, pad))
    return rows


def flash_varlen(q3, k3, v3, cq, ck, mq, mk, causal):
    return torch.ops.aten._flash_attention_forward(q3, k3, v3, cq, ck, mq, mk, 0.0, causal, False)


def bench_one(kdir, dt, d, causal, lengths, iters, label):
    H = 2048 // d
    Tq = sum(lengths)
    B, N = len(lengths), max(lengths)
    c = "causal" if causal else "full"
    var = load_named(kdir, f"varlen_{dt}_d{d}_{c}")
    pad = load_named(kdir, f"padded_{dt}_d{d}_{c}")
    thd = token_major(var)
    q = torch.randn(1, H, Tq, d, device="cuda", dtype=DT[dt])
    k, v = torch.randn_like(q), torch.randn_like(q)
    qv, kv, vv = (to_kernel(x, thd) for x in (q, k, v))
    out = to_kernel(torch.empty_like(q), thd)
    lse = to_kernel(torch.empty(1, H, Tq, device="cuda"), thd)
    cq = offsets(lengths)
    qp = torch.randn(B, H, N, d, device="cuda", dtype=DT[dt])
    kp, vp = torch.randn_like(qp), torch.randn_like(qp)
    outp, lsep = torch.empty_like(qp), torch.empty(B, H, N, device="cuda")
    q3, k3, v3 = (x[0].transpose(0, 1).contiguous() for x in (q, k, v))   # [T, H, D]
    fns = {
        "ours_varlen": lambda: var(qv, kv, vv, out=out, lse=lse, cu_seqlens_q=cq,
                                   cu_seqlens_k=cq, max_seqlen_q=N),
        "ours_padded": lambda: pad(qp, kp, vp, out=outp, lse=lsep),
        "flash_varlen": lambda: flash_varlen(q3, k3, v3, cq, cq, N, N, causal),
    }

    try:
        import fa
        fns["ours_api"] = lambda: fa.attention_varlen(q3, k3, v3, cq, cq, N, causal=causal,
                                                      return_lse=True)
    except ImportError:
        pass

    def cudnn():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qp, kp, vp, is_causal=causal)
    fns["cudnn_padded"] = cudnn
    for name in list(fns):
        try:
            fns[name]()
        except Exception as e:  # a peer that does not take these inputs
            print(f"  {name} failed: {e}", flush=True)
            del fns[name]
    torch.cuda.synchronize()
    kernel = {nm: [] for nm in fns}
    names = list(fns)
    for it in range(iters):
        r = it % len(names)
        for nm in names[r:] + names[:r]:
            kernel[nm].append(time_once(fns[nm]))
    kernel = {nm: sorted(t)[len(t) // 2] for nm, t in kernel.items()}
    user = {nm: time_back_to_back(fn) for nm, fn in fns.items()}
    useful = sum(4 * H * n * n * d / (2 if causal else 1) for n in lengths)
    padded = 4 * B * H * N * N * d / (2 if causal else 1)
    row = dict(layout="thd" if thd else "htd", dtype=dt, d=d, causal=causal, label=label, lengths=lengths, H=H, tokens=Tq,
               useful_flops=useful, padded_flops=padded)
    for nm in fns:
        row[f"{nm}_ms"] = kernel[nm]
        row[f"{nm}_user_ms"] = user[nm]
        row[f"{nm}_tflops"] = useful / (kernel[nm] * 1e-3) / 1e12
    row["ours_padded_own_tflops"] = padded / (kernel["ours_padded"] * 1e-3) / 1e12
    msg = " ".join(f"{nm} {kernel[nm]:.3f}ms ({row[nm + '_tflops']:.0f} TF, user {user[nm]:.3f})"
                   for nm in fns)
    print(f"bench {dt} d{d} {c} {label}: {msg}", flush=True)
    return row


def bench(kdir, iters):
    rows = []
    torch.manual_seed(0)
    mixed = [int(x) for x in torch.randint(256, 4097, (64,))]
    acc, mixed16k = 0, []
    for n in mixed:               # about 16k tokens of lengths 256..4096
        if acc + n > 16384:
            break
        mixed16k.append(n)
        acc += n
    for dt in ("bf16",):
        for d in (64, 128):
            for causal in (False, True):
                for n in (512, 1024, 2048, 4096, 8192):
                    rows.append(bench_one(kdir, dt, d, causal, [n] * (16384 // n), iters,
                                          f"equal {16384 // n}x{n}"))
                rows.append(bench_one(kdir, dt, d, causal, mixed16k, iters,
                                      f"mixed {len(mixed16k)} seqs 256..4096"))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kdir", required=True)
    p.add_argument("--check", action="store_true")
    p.add_argument("--bench", action="store_true")
    p.add_argument("--iters", type=int, default=12)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    res = dict(device=torch.cuda.get_device_name(), torch=torch.__version__)
    if a.check:
        res["check"] = check(a.kdir)
        bad = [r for r in res["check"] if not r["ok"]]
        print(f"checks: {len(res['check']) - len(bad)}/{len(res['check'])} right", flush=True)
    if a.bench:
        res["bench"] = bench(a.kdir, a.iters)
    if a.out:
        with open(a.out + ".json", "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
