"""The backward kernels (fa.attention_grad -> SM90/BackwardKernel for chip=sm_90a, wgmma;
SM80/BackwardKernel for chip=sm_80, mma.sync) on the GPU, launched
directly through fa_runtime: correctness against float64 autograd, then kernel time against
torch SDPA's backward (flash = FlashAttention-2, cudnn) in the same process.

Kernels (here, with the compiler):
  fa-opt bench/kernels_backward.mlir \
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=KDIR})' -o /dev/null
On the GPU machine (torch, no compiler):
  python3 bench/check_backward_kernel.py --kernels KDIR [--out DIR] [--no-time]

The launch is what a runtime does for fa.attention_grad (docs/Backward.md): delta =
rowsum(dO * O) in f32, dq_accum zero-filled, the kernel, dq = dq_accum in q's dtype. "ours" times
all four; "kernel" the launch alone. Backward FLOPs = 2.5 x the forward's (4 B H Nq Nk D, halved
when causal), as FlashAttention reports them.
"""
import argparse
import datetime
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import common  # noqa: E402

WINDOWS = {"full": None, "causal": (-1, 0), "w96_0": (96, 0), "w64_32": (64, 32),
           "causal_sc20": (-1, 0), "full_s05": None}


def reference(q, k, v, do, window, scale, softcap):
    """out, lse and the gradients in float64 (autograd), fa.attention's semantics."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    r = Hq // Hkv
    kf = k64.repeat_interleave(r, dim=1)
    vf = v64.repeat_interleave(r, dim=1)
    s = torch.matmul(q64, kf.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    if window is not None:
        i = torch.arange(Nq, device=q.device)[:, None]
        j = torch.arange(Nk, device=q.device)[None, :]
        dist = j - (i + (Nk - Nq))
        left, right = window
        mask = torch.zeros_like(dist, dtype=torch.bool)
        if right >= 0:
            mask |= dist > right
        if left >= 0:
            mask |= dist < -left
        s = s.masked_fill(mask, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l_ = p.sum(-1, keepdim=True)
    o = torch.matmul(p, vf) / torch.where(l_ == 0, torch.ones_like(l_), l_)
    lse = (m + torch.log(l_)).squeeze(-1)
    dq, dk, dv = torch.autograd.grad(o, (q64, k64, v64), do.double())
    return o.detach(), lse.detach(), dq, dk, dv


def launch_pointers(kern, tensors, **sizes):
    """The kernel's pointer arguments in launch order (`tensors`: tensor name
    -> torch tensor): fa_runtime's Kernel.grad_pointers (tensor maps on
    sm_90a)."""
    return kern.grad_pointers(tensors, sizes)


def launch(kern, q, k, v, o, lse, do):
    """What a runtime does for the backward: returns (dq, dk, dv)."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    delta = (do.float() * o.float()).sum(-1)
    dq_acc = torch.zeros(B, Hq, Nq, D, device=q.device, dtype=torch.float32)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    sizes = dict(B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk)
    ptrs = launch_pointers(kern, dict(q=q, k=k, v=v, do=do, lse=lse, delta=delta,
                                      dq_accum=dq_acc, dk=dk, dv=dv), **sizes)
    kern.launch_ptrs(*ptrs, stream=torch.cuda.current_stream().cuda_stream, **sizes)
    return dq_acc.to(q.dtype), dk, dv


def check(kdir, dt, d, mask, B, Hq, Hkv, Nq, Nk, seed=0):
    name = f"bwd_{dt}_d{d}_{mask}"
    kern = common.load_named(kdir, name)
    torch.manual_seed(seed)
    dtype = common.DT[dt]
    q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dtype)
    k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dtype)
    v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dtype)
    do = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dtype)
    scale = kern.manifest["scale"]
    softcap = 20.0 if mask.endswith("sc20") else None
    o64, lse64, rq, rk, rv = reference(q, k, v, do, WINDOWS[mask], scale, softcap)
    o = o64.to(dtype)
    lse = lse64.float().contiguous()
    dq, dk, dv = launch(kern, q, k, v, o, lse, do)
    torch.cuda.synchronize()
    # The gradients of the same math on the rounded inputs in the input type's precision
    # (torch autograd in f32 with o rounded as a 16-bit forward rounds it) bound what a 16-bit
    # kernel can reach; errors are relative to the reference's largest magnitude.
    row = {"kernel": name, "B": B, "Hq": Hq, "Hkv": Hkv, "Nq": Nq, "Nk": Nk}
    ok = True
    for nm, ours, ref in (("dq", dq, rq), ("dk", dk, rk), ("dv", dv, rv)):
        finite = bool(torch.isfinite(ours).all())
        scale_ref = ref.abs().max().item() or 1.0
        err = (ours.double() - ref).abs().max().item() / scale_ref
        row[nm] = err
        tol = 1e-2 if dt == "f16" else 3e-2
        ok &= finite and err <= tol
    row["ok"] = ok
    print(f"{'ok  ' if ok else 'FAIL'} {name:24s} B{B} H{Hq}/{Hkv} Nq{Nq} Nk{Nk}: "
          f"dq {row['dq']:.2e} dk {row['dk']:.2e} dv {row['dv']:.2e}", flush=True)
    return row


def sweep(kdir):
    rows = []
    shapes = [(2, 4, 4, 128, 128), (1, 8, 2, 256, 256), (2, 4, 2, 127, 127), (1, 4, 4, 1000, 1000),
              (1, 4, 2, 256, 512), (1, 4, 2, 512, 256), (1, 2, 1, 70, 300), (1, 2, 2, 300, 70)]
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for mask in ("full", "causal", "w96_0", "w64_32"):
                for shp in shapes:
                    rows.append(check(kdir, dt, d, mask, *shp))
            if d == 64:
                for mask in ("causal_sc20", "full_s05"):
                    for shp in shapes[:4]:
                        rows.append(check(kdir, dt, d, mask, *shp))
    return rows


def flops(B, H, Nq, Nk, d, causal):
    f = 4.0 * B * H * Nq * Nk * d
    return 2.5 * (f / 2 if causal else f)


def bench(kdir, iters):
    rows = []
    tokens = 16384
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                for n in (1024, 4096, 16384):
                    B, H = tokens // n, 16
                    dtype = common.DT[dt]
                    kern = common.load_named(kdir, f"bwd_{dt}_d{d}_{'causal' if causal else 'full'}")
                    q, k, v, do = (torch.randn(B, H, n, d, device="cuda", dtype=dtype)
                                   for _ in range(4))
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
                            q, k, v, is_causal=causal)[:2]
                    lse = lse.float().contiguous()
                    row = {"dtype": dt, "d": d, "causal": causal, "B": B, "H": H, "N": n}
                    f = flops(B, H, n, n, d, causal)
                    delta = (do.float() * o.float()).sum(-1)
                    dq_acc = torch.zeros(B, H, n, d, device="cuda", dtype=torch.float32)
                    dk, dv = torch.empty_like(k), torch.empty_like(v)
                    stream = torch.cuda.current_stream().cuda_stream
                    ptrs = launch_pointers(
                        kern, dict(q=q, k=k, v=v, do=do, lse=lse, delta=delta,
                                   dq_accum=dq_acc, dk=dk, dv=dv),
                        B=B, Hq=H, Hkv=H, Nq=n, Nk=n)

                    def kernel_only():
                        kern.launch_ptrs(*ptrs, stream=stream, B=B, Hq=H, Hkv=H, Nq=n, Nk=n)
                    row["kernel_ms"] = common.time_ms(kernel_only, iters)
                    row["ours_ms"] = common.time_ms(lambda: launch(kern, q, k, v, o, lse, do),
                                                    iters)
                    for peer, be in (("flash", SDPBackend.FLASH_ATTENTION),
                                     ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                        try:
                            qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
                            with sdpa_kernel([be]):
                                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                            row[f"{peer}_ms"] = common.time_ms(
                                lambda: torch.autograd.grad(out, (qg, kg, vg), do,
                                                            retain_graph=True), iters)
                        except Exception as e:  # backend unavailable for this case
                            print(f"  {peer}: {e}", flush=True)
                    for key in ("kernel", "ours", "flash", "cudnn"):
                        if f"{key}_ms" in row:
                            row[f"{key}_tflops"] = f / row[f"{key}_ms"] / 1e9
                    for peer in ("flash", "cudnn"):
                        if f"{peer}_ms" in row:
                            row[f"ours/{peer}"] = row[f"{peer}_ms"] / row["ours_ms"]
                    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v)
                                      for k, v in row.items()}), flush=True)
                    rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--few", action="store_true",
                    help="three small cases, no timing (under compute-sanitizer)")
    ap.add_argument("--iters", type=int, default=7)
    args = ap.parse_args()
    info = {"date": datetime.datetime.now().isoformat(), "device": torch.cuda.get_device_name(),
            "torch": torch.__version__}
    print(json.dumps(info), flush=True)
    if args.few:
        rows = [check(args.kernels, "f16", 128, "causal", 1, 4, 2, 130, 190),
                check(args.kernels, "bf16", 64, "w64_32", 1, 2, 1, 200, 70),
                check(args.kernels, "f16", 64, "causal_sc20", 2, 2, 2, 127, 127)]
        print(f"correctness: {sum(r['ok'] for r in rows)}/{len(rows)} right", flush=True)
        return
    rows = [] if args.no_check else sweep(args.kernels)
    bad = [r for r in rows if not r["ok"]]
    print(f"correctness: {len(rows) - len(bad)}/{len(rows)} right", flush=True)
    timing = [] if args.no_time else bench(args.kernels, args.iters)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "backward_kernel.json"), "w") as f:
            json.dump({"info": info, "correctness": rows, "timing": timing}, f, indent=1)


if __name__ == "__main__":
    main()
