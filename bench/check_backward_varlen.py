"""The varlen backward kernel (fa.attention_grad with varlen(...), sm_90a, SM90/BackwardKernel
with per-sequence CTAs) on the GPU through fa_runtime's Kernel.grad: gradients of packed
sequences against float64 autograd run per sequence, then its time against our plain kernel on
the same tokens as one padded batch (equal lengths) and against torch SDPA's backward (flash,
cudnn) on that batch, in the same process.

Kernels (here, with the compiler):
  fa-opt bench/kernels_backward_varlen.mlir \
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=KDIR})' -o /dev/null
  fa-opt bench/kernels_backward.mlir \
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=PDIR})' -o /dev/null
On the GPU machine (torch, no compiler):
  python3 bench/check_backward_varlen.py --kernels KDIR [--plain PDIR] [--json FILE]
  compute-sanitizer python3 bench/check_backward_varlen.py --kernels KDIR --few

Each case packs sequences of the given (query, key) lengths into the kernel's layout (thd
[T, H, D], the default, or htd [1, H, T, D] with varlen-layout=htd), runs
Kernel.grad (its preprocess, the kernel, its postprocess; checked offsets), and compares dq, dk,
dv with the float64 reference of each sequence alone (relative to the reference's largest
magnitude; rows of key-less sequences and keys of row-less sequences must be exactly 0). A
negative control per dtype swaps two sequences' offsets and must fail.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import common  # noqa: E402
from check_backward_kernel import WINDOWS, flops, reference  # noqa: E402

# (query lengths, key lengths) per case; keys >= queries where causal rows should see keys,
# keys < queries gives rows that see none (zero gradients); 0-length sequences in between.
CASES = [
    ("equal", [300, 1, 129, 64, 700], None),
    ("empty_seqs", [0, 200, 0, 77], None),
    ("q_lt_k", [100, 37, 256], [300, 37, 500]),
    ("q_gt_k", [200, 64, 130], [70, 64, 1]),
    ("one_long", [1500], None),
    ("no_rows_or_keys", [50, 0, 80], [60, 40, 0]),
]
HEADS = [(4, 4), (8, 2)]


def pack(lengths, H, d, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    T = sum(lengths)
    return torch.randn(1, H, T, d, device="cuda", dtype=dtype, generator=g)


def offsets(lengths):
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return torch.tensor(cu, device="cuda", dtype=torch.int32), cu


def as_layout(kern, t):
    """A batch-1 plane tensor [1, H, T, ...] in the kernel's varlen layout (thd: [T, H, D],
    lse [H, T])."""
    if kern.varlen_layout != "thd":
        return t
    return t[0].transpose(0, 1).contiguous() if t.dim() == 4 else t[0].contiguous()


def from_layout(kern, t):
    """The kernel's gradient as the batch-1 planes [1, H, T, D]."""
    return t.transpose(0, 1).unsqueeze(0) if kern.varlen_layout == "thd" else t


def check(kdir, dt, d, mask, case, Hq, Hkv, seed=0, control=False):
    name = f"vbwd_{dt}_d{d}_{mask}"
    kern = common.load_named(kdir, name)
    dtype = common.DT[dt]
    _, lq, lk = case
    lk = lk or lq
    q, do = pack(lq, Hq, d, dtype, seed), pack(lq, Hq, d, dtype, seed + 1)
    k, v = pack(lk, Hkv, d, dtype, seed + 2), pack(lk, Hkv, d, dtype, seed + 3)
    cq, cq_list = offsets(lq)
    ck, ck_list = offsets(lk)
    scale = kern.manifest["scale"]
    o = torch.zeros_like(q)
    lse = torch.zeros(1, Hq, q.shape[2], device="cuda", dtype=torch.float32)
    ref = {n: torch.zeros(t.shape, device="cuda", dtype=torch.float64)
           for n, t in (("dq", q), ("dk", k), ("dv", v))}
    for s in range(len(lq)):
        a, b = cq_list[s], cq_list[s + 1]
        c, e = ck_list[s], ck_list[s + 1]
        if b == a:
            continue  # no rows: no gradient to or from this sequence
        if e == c:
            lse[:, :, a:b] = float("-inf")  # rows that see no key: out 0, gradients 0
            continue
        o64, lse64, rq, rk, rv = reference(q[:, :, a:b], k[:, :, c:e], v[:, :, c:e],
                                           do[:, :, a:b], WINDOWS[mask], scale, None)
        o[:, :, a:b] = o64.to(dtype)
        lse[:, :, a:b] = lse64.float()
        ref["dq"][:, :, a:b], ref["dk"][:, :, c:e], ref["dv"][:, :, c:e] = rq, rk, rv
    if control:
        # Two sequences' offsets swapped: the kernel reads other rows, the check must fail.
        perm = list(range(len(lq)))
        perm[0], perm[-1] = perm[-1], perm[0]
        cq, _ = offsets([lq[i] for i in perm])
        ck, _ = offsets([lk[i] for i in perm])
    grads = kern.grad(*(as_layout(kern, t) for t in (q, k, v, o, lse, do)), cu_seqlens_q=cq,
                      cu_seqlens_k=ck, check_indices=True)
    dq, dk, dv = (from_layout(kern, g) for g in grads)
    torch.cuda.synchronize()
    row = {"kernel": name, "case": case[0], "Hq": Hq, "Hkv": Hkv, "lq": lq, "lk": lk,
           "control": control, "layout": kern.varlen_layout}
    # Rows of a sequence without keys and keys of a sequence without rows have no
    # gradient: exactly 0. (Elsewhere the reference can be 0 by cancellation, e.g. a row
    # that sees one key has dS = P (dP - delta) = 0, where a kernel rounds.)
    structural = {n: torch.zeros(t.shape[2], dtype=torch.bool, device="cuda")
                  for n, t in (("dq", q), ("dk", k), ("dv", v))}
    for s in range(len(lq)):
        if ck_list[s + 1] == ck_list[s]:
            structural["dq"][cq_list[s]:cq_list[s + 1]] = True
        if cq_list[s + 1] == cq_list[s]:
            structural["dk"][ck_list[s]:ck_list[s + 1]] = True
            structural["dv"][ck_list[s]:ck_list[s + 1]] = True
    ok = True
    for nm, ours in (("dq", dq), ("dk", dk), ("dv", dv)):
        r = ref[nm]
        finite = bool(torch.isfinite(ours).all())
        err = (ours.double() - r).abs().max().item() / (r.abs().max().item() or 1.0)
        zero_ok = bool((ours[:, :, structural[nm]] == 0).all()) if not control else True
        row[nm] = err
        row[nm + "_zeros"] = zero_ok
        ok &= finite and zero_ok and err <= (1e-2 if dt == "f16" else 3e-2)
    row["ok"] = ok if not control else not ok
    tag = ("ok  " if row["ok"] else "FAIL") + (" (control: must differ)" if control else "")
    print(f"{tag} {name:22s} {case[0]:10s} H{Hq}/{Hkv}: dq {row['dq']:.2e} dk {row['dk']:.2e} "
          f"dv {row['dv']:.2e} zeros {row['dq_zeros'] and row['dk_zeros'] and row['dv_zeros']}",
          flush=True)
    return row


def bench(kdir, pdir, iters):
    """Equal lengths: the varlen kernel on B packed sequences of N tokens against our plain
    kernel on the [B, H, N, D] batch (both through Kernel.grad) and torch SDPA's backward on
    that batch, 16k tokens, H = 16."""
    rows = []
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                for n in (1024, 4096):
                    B, H = 16384 // n, 16
                    dtype = common.DT[dt]
                    mask = "causal" if causal else "full"
                    kv = common.load_named(kdir, f"vbwd_{dt}_d{d}_{mask}")
                    q, k, v, do = (torch.randn(B, H, n, d, device="cuda", dtype=dtype)
                                   for _ in range(4))
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
                            q, k, v, is_causal=causal)[:2]
                    lse = lse.float().contiguous()
                    packed = [as_layout(kv, t.transpose(0, 1).reshape(1, H, B * n, d))
                              for t in (q, k, v, o, do)]
                    lse_p = as_layout(kv, lse.transpose(0, 1).reshape(1, H, B * n))
                    cu, _ = offsets([n] * B)
                    fns = {"varlen": lambda: kv.grad(*packed[:4], lse_p, packed[4],
                                                     cu_seqlens_q=cu, cu_seqlens_k=cu,
                                                     max_seqlen_k=n, check_indices=False)}
                    if pdir:
                        kp = common.load_named(pdir, f"bwd_{dt}_d{d}_{mask}")
                        fns["plain"] = lambda: kp.grad(q, k, v, o, lse, do)
                    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
                    for peer, be in (("flash", SDPBackend.FLASH_ATTENTION),
                                     ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                        try:
                            with sdpa_kernel([be]):
                                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                            fns[peer] = (lambda out=out: torch.autograd.grad(
                                out, (qg, kg, vg), do, retain_graph=True))
                            fns[peer]()
                        except Exception as e:  # backend unavailable for this case
                            print(f"  {peer}: {e}", flush=True)
                            fns.pop(peer, None)
                    ms = common.time_interleaved(fns, iters)
                    f = flops(B, H, n, n, d, causal)
                    row = {"dtype": dt, "d": d, "causal": causal, "B": B, "H": H, "N": n,
                           "layout": kv.varlen_layout}
                    for key, t in ms.items():
                        row[f"{key}_ms"] = t
                        row[f"{key}_tflops"] = f / t / 1e9
                    for peer in ("plain", "flash", "cudnn"):
                        if peer in ms:
                            row[f"varlen/{peer}"] = ms[peer] / ms["varlen"]
                    print(json.dumps({k: (round(x, 3) if isinstance(x, float) else x)
                                      for k, x in row.items()}), flush=True)
                    rows.append(row)
    return rows


def bench_api(bundle):
    """What a user sees: forward + backward through fa.attention_varlen (thd tensors, the
    bundle's varlen and varlen,grad kernels, the transposes to the planes included) against
    torch SDPA's forward + backward (flash, cudnn) on the same tokens as a [B, H, N, D] batch,
    back-to-back calls between CUDA events (host path included)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import fa
    fa.load_bundle(bundle)
    rows = []
    for dt in ("f16", "bf16"):
        for causal in (False, True):
            for n in (1024, 4096):
                B, H, d = 16384 // n, 16, 128
                dtype = common.DT[dt]
                q, k, v, do = (torch.randn(B * n, H, d, device="cuda", dtype=dtype)
                               for _ in range(4))
                cu, _ = offsets([n] * B)
                leaves = [t.detach().requires_grad_() for t in (q, k, v)]

                def ours():
                    out = fa.attention_varlen(*leaves, cu, cu, max_seqlen_q=n, causal=causal)
                    torch.autograd.grad(out, leaves, do)
                fns = {"ours": ours}
                padded = [t.view(B, n, H, d).transpose(1, 2).detach().requires_grad_()
                          for t in (q, k, v)]
                dop = do.view(B, n, H, d).transpose(1, 2)
                for peer, be in (("flash", SDPBackend.FLASH_ATTENTION),
                                 ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    def run(be=be):
                        with sdpa_kernel([be]):
                            out = F.scaled_dot_product_attention(*padded, is_causal=causal)
                        torch.autograd.grad(out, padded, dop)
                    try:
                        run()
                        fns[peer] = run
                    except Exception as e:  # backend unavailable for this case
                        print(f"  {peer}: {e}", flush=True)
                ms = {name: common.time_back_to_back(fn) for name, fn in fns.items()}
                f = flops(B, H, n, n, d, causal) * 3.5 / 2.5  # forward + backward
                row = {"dtype": dt, "causal": causal, "B": B, "H": H, "N": n, "api": True}
                for name, t in ms.items():
                    row[f"{name}_ms"] = t
                    row[f"{name}_tflops"] = f / t / 1e9
                for peer in ("flash", "cudnn"):
                    if peer in ms:
                        row[f"ours/{peer}"] = ms[peer] / ms["ours"]
                print(json.dumps({k: (round(x, 3) if isinstance(x, float) else x)
                                  for k, x in row.items()}), flush=True)
                rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--plain", help="the plain kernels of bench/kernels_backward.mlir (sm_90a)")
    ap.add_argument("--json")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--iters", type=int, default=9)
    ap.add_argument("--api", metavar="BUNDLE",
                    help="also time fa.attention_varlen forward + backward (the bundle's "
                         "kernels) against SDPA")
    ap.add_argument("--few", action="store_true",
                    help="a few checks, no timing (under compute-sanitizer)")
    a = ap.parse_args()
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    rows = []
    if a.few:
        for mask in ("full", "causal", "w96_0"):
            for case in CASES[:4]:
                rows.append(check(a.kernels, "bf16", 128, mask, case, 8, 2))
        good = sum(r["ok"] for r in rows)
        print(f"{good}/{len(rows)} right", flush=True)
        sys.exit(0 if good == len(rows) else 1)
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for mask in ("full", "causal", "w96_0"):
                for case in CASES:
                    for Hq, Hkv in HEADS:
                        rows.append(check(a.kernels, dt, d, mask, case, Hq, Hkv))
        rows.append(check(a.kernels, dt, 128, "causal", CASES[0], 8, 2, control=True))
    good = sum(r["ok"] for r in rows)
    print(f"{good}/{len(rows)} right", flush=True)
    out = {"check": rows}
    if not a.no_time:
        out["bench"] = bench(a.kernels, a.plain, a.iters)
    if a.api:
        out["api"] = bench_api(a.api)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    sys.exit(0 if good == len(rows) else 1)


if __name__ == "__main__":
    main()
