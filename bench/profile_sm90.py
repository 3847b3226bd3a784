"""One attention forward of one implementation, bracketed for a profiler.

Usage (on the GPU machine), under Nsight Compute:
    ncu --clock-control none --profile-from-start off --set full -o REPORT \
        python3 bench/profile_sm90.py --which ours --k90 DIR90 --dtype bf16 --d 128 --seqlen 8192 [--causal]
--which ours | ours80 | cudnn | flash. The inputs follow ANCHORS.md's sweep (16k tokens, hidden
2048). Two warm-up calls run before cudaProfilerStart, so only the third call's kernels (one
kernel for ours; whatever the SDPA backend launches for the peers) are profiled.
bench/profile_sm90.sh runs it for ours and cudnn and prints the comparison.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from common import DT, load, peer_fns  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--which", choices=("ours", "ours80", "cudnn", "flash"), required=True)
    ap.add_argument("--k90")
    ap.add_argument("--k80")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seqlen", type=int, default=8192)
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args()
    n, d = a.seqlen, a.d
    B, H = max(1, 16384 // n), 2048 // d
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=DT[a.dtype]) for _ in range(3))
    if a.which in ("ours", "ours80"):
        kern = load(a.k90 if a.which == "ours" else a.k80, a.dtype, d, a.causal)
        fn = lambda: kern(q, k, v)  # noqa: E731
    else:
        fn = peer_fns(q, k, v, a.causal)[a.which]
    fn()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled {a.which} {a.dtype} d{d} B{B} H{H} N{n} causal={a.causal}")


if __name__ == "__main__":
    main()
