"""Kernel-only comparison of backward kernel builds on the GPU, interleaved in one process with a
peer's backward (torch SDPA flash = FlashAttention-2, or cudnn), and an Nsight Compute target.

Kernels (here, with the compiler), one directory per build:
  fa-opt bench/kernels_backward.mlir \\
    '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=KDIR})' -o /dev/null
On the GPU machine:
  python3 bench/compare_backward.py --dirs OLD,NEW [--peer flash|cudnn] [--names a,b] [--grad]
      [--seqlens 1024,4096,16384] [--out FILE]
  ncu --kernel-name regex:'bwd|flash' python3 bench/compare_backward.py --ncu-target KDIR \\
      --names bwd_f16_d128_full --seqlens 4096

Each (kernel, N) uses B = 16384 / N, H = 16, Hq = Hkv, the forward's o and lse from torch flash.
"kernel" times the launch alone (delta and a zeroed dq_accum prepared once); --grad times
Kernel.grad (delta, dq_accum, the launch, dq's conversion). Medians of 9 interleaved rounds;
backward FLOPs = 2.5 x the forward's (halved when causal). Ratios: x_first = the first build's
time / this build's, x_peer = the peer's / this build's.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import common  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from check_backward_kernel import launch_pointers  # noqa: E402
from fa_runtime import Kernel  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

PEERS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
DEFAULT_NAMES = ("bwd_f16_d128_full", "bwd_f16_d128_causal", "bwd_bf16_d128_full",
                 "bwd_bf16_d128_causal", "bwd_f16_d64_full", "bwd_f16_d64_causal")


class Problem:
    """The inputs of one (kernel name, N) case and the launches on them."""

    def __init__(self, name, n):
        self.d = 128 if "d128" in name else 64
        self.causal = "causal" in name
        self.B, self.H, self.n = 16384 // n, 16, n
        dt = torch.bfloat16 if "bf16" in name else torch.float16
        self.q, self.k, self.v, self.do = (
            torch.randn(self.B, self.H, n, self.d, device="cuda", dtype=dt) for _ in range(4))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            self.o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
                self.q, self.k, self.v, is_causal=self.causal)[:2]
        self.lse = lse.float().contiguous()
        self.sizes = dict(B=self.B, Hq=self.H, Hkv=self.H, Nq=n, Nk=n)

    def flops(self):
        return 2.5 * 4.0 * self.B * self.H * self.n * self.n * self.d * (
            0.5 if self.causal else 1)

    def ours(self, kern, grad=False):
        if grad:
            return lambda: kern.grad(self.q, self.k, self.v, self.o, self.lse, self.do)
        tensors = dict(q=self.q, k=self.k, v=self.v, do=self.do, lse=self.lse,
                       delta=(self.do.float() * self.o.float()).sum(-1),
                       dq_accum=torch.zeros(self.q.shape, device="cuda", dtype=torch.float32),
                       dk=torch.empty_like(self.k), dv=torch.empty_like(self.v))
        ptrs = launch_pointers(kern, tensors, **self.sizes)
        stream = torch.cuda.current_stream().cuda_stream
        return lambda: kern.launch_ptrs(*ptrs, stream=stream, **self.sizes)

    def peer(self, backend):
        qg, kg, vg = (t.detach().requires_grad_() for t in (self.q, self.k, self.v))
        with sdpa_kernel([backend]):
            out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=self.causal)
        return lambda: torch.autograd.grad(out, (qg, kg, vg), self.do, retain_graph=True)


def compare(dirs, names, seqlens, peer, grad, rounds=9):
    rows = []
    for name in names:
        for n in seqlens:
            p = Problem(name, n)
            fns = [p.ours(Kernel.load(f"{d}/{name}_kernel.json"), grad) for d in dirs]
            fns.append(p.peer(PEERS[peer]))
            for f in fns:
                f()
            torch.cuda.synchronize()
            ts = [[] for _ in fns]
            for _ in range(rounds):
                for i, f in enumerate(fns):
                    ts[i].append(common.time_once(f))
            med = [sorted(t)[len(t) // 2] for t in ts]
            row = {"kernel": name, "N": n, "ms": [round(m, 4) for m in med],
                   "tflops": [round(p.flops() / m / 1e9) for m in med],
                   "x_first": [round(med[0] / m, 3) for m in med[:-1]],
                   "x_peer": [round(med[-1] / m, 3) for m in med[:-1]]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def ncu_target(kdir, name, n, peer, launches=3):
    """`launches` launches of our kernel, then as many of the peer's backward."""
    p = Problem(name, n)
    ours = p.ours(common.load_named(kdir, name))
    theirs = p.peer(PEERS[peer])
    for f in [ours] * launches + [theirs] * launches:
        f()
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dirs", help="comma-separated kernel directories, the first the reference")
    ap.add_argument("--ncu-target", metavar="KDIR", help="launch once set for Nsight Compute")
    ap.add_argument("--names", default=",".join(DEFAULT_NAMES))
    ap.add_argument("--seqlens", default="1024,4096,16384")
    ap.add_argument("--peer", choices=sorted(PEERS), default="cudnn")
    ap.add_argument("--grad", action="store_true", help="time Kernel.grad, not the launch alone")
    ap.add_argument("--out", help="JSON results")
    a = ap.parse_args()
    names = a.names.split(",")
    seqlens = [int(x) for x in a.seqlens.split(",")]
    if a.ncu_target:
        ncu_target(a.ncu_target, names[0], seqlens[0], a.peer)
        return 0
    if not a.dirs:
        ap.error("--dirs or --ncu-target is required")
    dirs = a.dirs.split(",")
    rows = compare(dirs, names, seqlens, a.peer, a.grad)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "dirs": dirs, "peer": a.peer,
                       "grad": a.grad, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
