"""The backward's preprocess and postprocess kernels (manifest "auxiliary_kernels",
Common/BackwardRowKernels, docs/Backward.md) on the GPU, launched alone through fa_runtime:

  preprocess   delta = rowsum(do * out) in f32 against float64 (and torch's f32 path's
               error beside it), dq_accum exactly zero, nothing written past either;
  postprocess  dq = dq_accum in q's dtype bitwise equal to torch's .to() (round to
               nearest even), nothing written past dq;

at row counts with tails (Nq 1, 63, 65, 1000). Then their time against the torch passes
they replace (do.float().mul_(o).sum(-1), torch.zeros, dq_accum.to), at 16k tokens x 16
heads, CUDA events around back-to-back calls.

Kernels (here, with the compiler):
  fa-opt bench/kernels_backward.mlir \
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=KDIR})' -o /dev/null
On the GPU machine:
  python3 bench/check_backward_row_kernels.py --kernels KDIR [--out FILE.json] [--no-time]
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402

import common  # noqa: E402
from fa_runtime import Kernel  # noqa: E402

SHAPES = [(1, 1, 1), (2, 3, 63), (1, 2, 65), (2, 4, 1000)]
GUARD = 64  # elements after each written buffer that must stay untouched


def guarded(n, dtype, fill):
    """A buffer of n elements followed by GUARD of `fill`: (view, whole)."""
    whole = torch.full((n + GUARD,), fill, device="cuda", dtype=dtype)
    return whole[:n], whole


def sizes_of(B, H, N):
    return dict(B=B, Hq=H, Hkv=H, Nq=N, Nk=N)


def run_pre(pre, do, o, delta, dq_accum, s):
    ptrs = pre.grad_pointers(dict(do=do, out=o, delta=delta, dq_accum=dq_accum), s)
    pre._launch(ptrs, s, torch.cuda.current_stream().cuda_stream, torch.cuda.current_device())


def run_post(post, dq_accum, dq, s):
    ptrs = post.grad_pointers(dict(dq_accum=dq_accum, dq=dq), s)
    post._launch(ptrs, s, torch.cuda.current_stream().cuda_stream, torch.cuda.current_device())


def check(kern, pre, post, dtype, D):
    results = []
    for B, H, N in SHAPES:
        s = sizes_of(B, H, N)
        do, o = (torch.randn(B, H, N, D, device="cuda", dtype=dtype) for _ in range(2))
        delta, delta_all = guarded(B * H * N, torch.float32, float("nan"))
        acc, acc_all = guarded(B * H * N * D, torch.float32, float("nan"))
        run_pre(pre, do, o, delta, acc, s)
        torch.cuda.synchronize()
        want = (do.double() * o.double()).sum(-1).reshape(-1)
        torch_f32 = do.float().mul_(o).sum(-1).reshape(-1)
        scale = want.abs().max().item() + 1e-30
        err = (delta.double() - want).abs().max().item() / scale
        torch_err = (torch_f32.double() - want).abs().max().item() / scale
        pre_ok = (err < 1e-5 and bool((acc == 0).all())
                  and bool(delta_all[-GUARD:].isnan().all())
                  and bool(acc_all[-GUARD:].isnan().all()))
        src = torch.randn(B * H * N * D, device="cuda", dtype=torch.float32) * 3
        dq, dq_all = guarded(B * H * N * D, dtype, 7.0)
        run_post(post, src, dq, s)
        torch.cuda.synchronize()
        post_ok = (torch.equal(dq.view(torch.int16), src.to(dtype).view(torch.int16))
                   and bool((dq_all[-GUARD:] == 7.0).all()))
        r = dict(kernel=kern.manifest["kernel"], shape=[B, H, N, D], delta_rel_err=err,
                 torch_f32_rel_err=torch_err, pre_ok=pre_ok, post_ok=post_ok)
        print(("ok  " if pre_ok and post_ok else "BAD ") + json.dumps(r), flush=True)
        results.append(r)
    return results


def time_against_torch(pre, post, dtype, D, N=1024):
    B, H = 16384 // N, 16
    s = sizes_of(B, H, N)
    do, o = (torch.randn(B, H, N, D, device="cuda", dtype=dtype) for _ in range(2))
    delta = torch.empty(B, H, N, device="cuda", dtype=torch.float32)
    acc = torch.empty(B, H, N, D, device="cuda", dtype=torch.float32)
    dq = torch.empty(B, H, N, D, device="cuda", dtype=dtype)

    def ours():
        run_pre(pre, do, o, delta, acc, s)
        run_post(post, acc, dq, s)

    def torch_passes():
        do.float().mul_(o).sum(-1)
        torch.zeros(B, H, N, D, device="cuda", dtype=torch.float32)
        acc.to(dtype)
    # Kernel time (median of single calls, the host hidden) and back-to-back calls
    # (the host path included), interleaved.
    t = {}
    for rnd in range(3):
        for name, fn in (("ours", ours), ("torch", torch_passes)):
            t.setdefault(name + "_kernel_ms", []).append(common.time_ms(fn, 9))
            t.setdefault(name + "_back_to_back_ms", []).append(common.time_back_to_back(fn))
    t = {k: round(sorted(v)[1], 4) for k, v in t.items()}
    t["tokens"], t["heads"] = 16384, 16
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out")
    ap.add_argument("--no-time", action="store_true")
    args = ap.parse_args()
    results, timings = [], []
    seen = set()
    for path in sorted(glob.glob(os.path.join(args.kernels, "*.json"))):
        kern = Kernel.load(path)
        if "auxiliary_kernels" not in kern.manifest:
            continue
        dtype = torch.float16 if kern.manifest["dtype"] == "f16" else torch.bfloat16
        D = kern.manifest["head_dim"]
        pre = kern._aux["attention_grad_preprocess"]
        post = kern._aux["attention_grad_postprocess"]
        results += check(kern, pre, post, dtype, D)
        if not args.no_time and (dtype, D) not in seen:
            seen.add((dtype, D))
            t = time_against_torch(pre, post, dtype, D)
            row = dict(dtype=str(dtype), D=D, **t)
            print("time " + json.dumps(row), flush=True)
            timings.append(row)
    bad = [r for r in results if not (r["pre_ok"] and r["post_ok"])]
    print(f"row kernels: {len(results) - len(bad)}/{len(results)} right")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "checks": results,
                       "time_ms": timings}, f, indent=1)
    sys.exit(1 if bad or not results else 0)


if __name__ == "__main__":
    main()
