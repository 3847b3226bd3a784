"""The kv_lens / paged-KV kernels (bench/kernels_kv_cache.mlir) on the GPU, launched directly
through fa_runtime: every kernel against a float64 reference that gathers the pages itself.

Kernels (here, with the compiler), one directory per chip:
  fa-opt bench/kernels_kv_cache.mlir \
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=KDIR})' -o /dev/null
On the GPU machine (torch, no compiler):
  python3 bench/check_kv_cache.py --kernels KDIR [--kernels KDIR2] [--out FILE] [--few]

What the cases exercise: lengths 0, 1, a prime, a page boundary, the capacity and past it
(clamped), GQA, Nq > 1 (causal per sequence, bottom-right at the sequence's length), page
tables in shuffled order, page ids outside the pool (clamped, check_indices=False), and NaN in
every pool row that is no key of its sequence (stale cache rows: the kernel must not let them
reach the output, 0 * NaN being NaN).
"""
import argparse
import datetime
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402

import fa_runtime  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def band(manifest, nq, length, device):
    """[Nq, Nk] visibility of one sequence: keys < length, the window around the diagonal
    length - Nq (bottom-right per sequence)."""
    i = torch.arange(nq, device=device)[:, None]
    j = torch.arange(length, device=device)[None, :]
    dist = j - (i + (length - nq))
    left, right = manifest["window"]
    keep = torch.ones_like(dist, dtype=torch.bool)
    if right >= 0:
        keep &= dist <= right
    if left >= 0:
        keep &= dist >= -left
    return keep


def reference(manifest, q, keys, values, lengths):
    """out, lse in float64: per sequence b, attention of q[b] over keys[b][:L_b]."""
    B, Hq, Nq, D = q.shape
    scale = manifest["scale"]
    out = torch.zeros(B, Hq, Nq, D, dtype=torch.float64, device=q.device)
    lse = torch.full((B, Hq, Nq), float("-inf"), dtype=torch.float64, device=q.device)
    for b in range(B):
        L = lengths[b]
        if L == 0:
            continue
        k, v = keys[b][:, :L].double(), values[b][:, :L].double()  # [Hkv, L, D]
        r = Hq // k.shape[0]
        k, v = k.repeat_interleave(r, 0), v.repeat_interleave(r, 0)
        s = torch.matmul(q[b].double(), k.transpose(-1, -2)) * scale
        s = s.masked_fill(~band(manifest, Nq, L, q.device), float("-inf"))
        m = s.amax(-1, keepdim=True)
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        p = torch.exp(s - m)
        l_ = p.sum(-1, keepdim=True)
        out[b] = torch.where(l_ > 0, torch.matmul(p, v) / l_.clamp_min(1e-300), 0.0)
        lse[b] = (m + torch.log(l_)).squeeze(-1)
    return out, lse


def make_case(manifest, case, dtype, device, gen):
    """Inputs of one case: q, pools or contiguous K/V with NaN in every row that is no key,
    kv_lens, page_table; and per sequence the keys/values the reference reads."""
    B, Hq, Hkv, Nq = case["B"], case["Hq"], case["Hkv"], case["Nq"]
    D = manifest["head_dim"]
    S = manifest.get("page_size", 0)
    pages_per_seq = case["max_pages"] if S else 0
    cap = pages_per_seq * S if S else case["Nk"]
    want = case["lens"]
    lengths = [min(max(x, 0), cap) for x in want] if manifest.get("kv_lens") else [cap] * B
    q = torch.randn(B, Hq, Nq, D, generator=gen, device=device).to(dtype)
    keys, values = [], []
    kv_lens = torch.tensor(want, dtype=torch.int32, device=device) if manifest.get("kv_lens") else None
    if not S:
        k = torch.randn(B, Hkv, cap, D, generator=gen, device=device).to(dtype)
        v = torch.randn(B, Hkv, cap, D, generator=gen, device=device).to(dtype)
        for b in range(B):
            keys.append(k[b].clone())
            values.append(v[b].clone())
            k[b, :, lengths[b]:] = float("nan")
            v[b, :, lengths[b]:] = float("nan")
        return dict(q=q, k=k, v=v, kv_lens=kv_lens), keys, values, lengths
    P = B * pages_per_seq + case.get("spare_pages", 3)
    pool_k = torch.full((P, Hkv, S, D), float("nan"), device=device).to(dtype)
    pool_v = torch.full((P, Hkv, S, D), float("nan"), device=device).to(dtype)
    # The last page stays spare: a page id past the pool (bad_page) clamps to it.
    perm = torch.randperm(P - 1, generator=gen, device=device)
    table = perm[: B * pages_per_seq].reshape(B, pages_per_seq).to(torch.int32).clone()
    bad = case.get("bad_page")  # (b, index, id): an id outside the pool, clamped by the kernel
    if bad:
        table[bad[0], bad[1]] = bad[2]
    for b in range(B):
        kb = torch.randn(Hkv, cap, D, generator=gen, device=device).to(dtype)
        vb = torch.randn(Hkv, cap, D, generator=gen, device=device).to(dtype)
        ids = [min(max(int(x), 0), P - 1) for x in table[b].tolist()]
        for j in range(pages_per_seq):
            rows = min(max(lengths[b] - j * S, 0), S)
            if rows:
                pool_k[ids[j], :, :rows] = kb[:, j * S:j * S + rows]
                pool_v[ids[j], :, :rows] = vb[:, j * S:j * S + rows]
        keys.append(kb)
        values.append(vb)
    return dict(q=q, k=pool_k, v=pool_v, kv_lens=kv_lens, page_table=table), keys, values, lengths


CASES = [
    dict(B=3, Hq=8, Hkv=2, Nq=1, Nk=700, max_pages=24, lens=[0, 1, 383]),
    dict(B=2, Hq=4, Hkv=4, Nq=37, Nk=1024, max_pages=20, lens=[640, 1024]),
    dict(B=4, Hq=6, Hkv=1, Nq=5, Nk=300, max_pages=9, lens=[300, 129, 16, 5000]),
    dict(B=2, Hq=8, Hkv=2, Nq=130, Nk=512, max_pages=8, lens=[257, 511], bad_page=(1, 0, 10 ** 6)),
    dict(B=2, Hq=2, Hkv=2, Nq=3, Nk=256, max_pages=4, lens=[-7, 200]),
]


def run(kdir, few, only, device, splits=(1,)):
    results = []
    gen = torch.Generator(device=device)
    for path in sorted(glob.glob(os.path.join(kdir, "*.json"))):
        if only and not any(o in os.path.basename(path) for o in only.split(",")):
            continue
        manifest = json.load(open(path))
        kernel = fa_runtime.Kernel.load(path)
        dtype = DTYPES[manifest["dtype"]]
        S = manifest.get("page_size", 0)
        for ci, case in enumerate(CASES[:2] if few else CASES):
            case = dict(case)
            if S:  # enough pages for the case's capacity at this page size
                case["max_pages"] = max(1, math.ceil(case["Nk"] / S))
            if not manifest.get("kv_lens"):
                case["lens"] = [0] * case["B"]
            gen.manual_seed(1000 + ci)
            args, keys, values, lengths = make_case(manifest, case, dtype, device, gen)
            call = {k: v for k, v in args.items() if v is not None and k not in ("q", "k", "v")}
            ref, ref_lse = reference(manifest, args["q"], keys, values, lengths)
            for S in (splits if manifest.get("split_kv") else (None,)):
                results.append(check_launch(kernel, manifest, args, call, ci, lengths, ref, ref_lse,
                                            dtype, S))
    return results


def check_launch(kernel, manifest, args, call, ci, lengths, ref, ref_lse, dtype, S):
    """One launch (a split-KV kernel's at num_splits S: twice, into outputs full of NaN, the
    second bitwise equal to the first, so the first left its arrival counters at zero)
    against the reference."""
    B, Hq, Nq, D = args["q"].shape
    runs = []
    for _ in range(1 if S is None else 2):
        extra = {}
        if S is not None:
            extra["num_splits"] = S
            extra["out"] = torch.full_like(args["q"], float("nan"))
            if manifest["lse"]:
                extra["lse"] = torch.full((B, Hq, Nq), float("nan"), device=args["q"].device)
        res = kernel(args["q"], args["k"], args["v"], check_indices=False, **call, **extra)
        runs.append(res if isinstance(res, tuple) else (res, None))
    torch.cuda.synchronize()
    out, lse = runs[0]
    err = (out.double() - ref).abs().max().item()
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    ok = math.isfinite(err) and err <= tol
    lse_err = None
    if lse is not None:
        finite = torch.isfinite(ref_lse)
        same_inf = torch.equal(torch.isinf(lse.double()), ~finite)
        lse_err = (lse.double()[finite] - ref_lse[finite]).abs().max().item() if finite.any() else 0.0
        ok = ok and same_inf and lse_err <= 1e-3
    repeat = None
    if len(runs) > 1:
        repeat = torch.equal(runs[1][0], out) and (
            lse is None or torch.equal(runs[1][1], lse))
        ok = ok and repeat
    print(f"{'ok  ' if ok else 'FAIL'} {manifest['chip']:7s} {manifest['kernel']:40s} case {ci} "
          + (f"S {S} " if S is not None else "")
          + f"lens {lengths} err {err:.2e}" + (f" lse {lse_err:.2e}" if lse_err is not None else "")
          + ("" if repeat is None else f" repeat {'equal' if repeat else 'DIFFERS'}"),
          flush=True)
    return dict(kernel=manifest["kernel"], chip=manifest["chip"], case=ci,
                lengths=lengths, num_splits=S, max_abs_err=err, lse_err=lse_err,
                repeat_equal=repeat, ok=ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", action="append", required=True, help="a fa-dump-kernel directory")
    ap.add_argument("--out", help="JSON results")
    ap.add_argument("--few", action="store_true", help="two cases per kernel (compute-sanitizer)")
    ap.add_argument("--only", help="comma-separated substrings: only kernels whose name has one")
    ap.add_argument("--splits", default="1",
                    help="split-KV kernels (\"split_kv\": true): the num_splits to check, "
                         "comma-separated")
    a = ap.parse_args()
    device = torch.device("cuda")
    results = []
    for kdir in a.kernels:
        results += run(kdir, a.few, a.only, device, tuple(int(x) for x in a.splits.split(",")))
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)}/{len(results)} right")
    if a.out:
        json.dump(dict(date=datetime.datetime.now().isoformat(), device=torch.cuda.get_device_name(),
                       results=results), open(a.out, "w"), indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
