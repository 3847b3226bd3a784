"""Kernel-only time of backward kernels from several builds (comma-separated kernel
directories, the first the reference), interleaved in one process, with cudnn's backward.
Session 17: the landed kernel (cp.async Q/dO) against TMA Q/dO rings of 2 and 3 buffers.
  python3 cmp.py DIR1,DIR2,... OUT.json [NAMES] [--grad]
--grad: each kernel through Kernel.grad (delta, the zeroed dq_accum and, for deterministic
kernels, dq_semaphore, the launch, dq's conversion) instead of the launch alone."""
import json
import sys

sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import common  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from check_backward_kernel import launch_pointers  # noqa: E402
from fa_runtime import Kernel  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

grad = "--grad" in sys.argv
argv = [a for a in sys.argv if a != "--grad"]
dirs = argv[1].split(",")
names = argv[3].split(",") if len(argv) > 3 else (
    "bwd_f16_d128_full", "bwd_f16_d128_causal", "bwd_bf16_d128_full", "bwd_bf16_d128_causal",
    "bwd_f16_d64_full", "bwd_f16_d64_causal")
rows = []
for name in names:
    for n in (1024, 4096, 16384):
        d = 128 if "d128" in name else 64
        causal = "causal" in name
        B, H = 16384 // n, 16
        dt = torch.bfloat16 if "bf16" in name else torch.float16
        q, k, v, do = (torch.randn(B, H, n, d, device="cuda", dtype=dt) for _ in range(4))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            o, lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, is_causal=causal)[:2]
        lse = lse.float().contiguous()
        delta = (do.float() * o.float()).sum(-1)
        dq_acc = torch.zeros(B, H, n, d, device="cuda", dtype=torch.float32)
        dk, dv = torch.empty_like(k), torch.empty_like(v)
        s = torch.cuda.current_stream().cuda_stream
        tensors = dict(q=q, k=k, v=v, do=do, lse=lse, delta=delta, dq_accum=dq_acc, dk=dk, dv=dv)
        sizes = dict(B=B, Hq=H, Hkv=H, Nq=n, Nk=n)

        def mk(kern):
            if grad:
                return lambda: kern.grad(q, k, v, o, lse, do)
            ptrs = launch_pointers(kern, tensors, **sizes)
            return lambda: kern.launch_ptrs(*ptrs, stream=s, **sizes)
        fns = [mk(Kernel.load(f"{dd}/{name}_kernel.json")) for dd in dirs]
        qg, kg, vg = (t_.detach().requires_grad_() for t_ in (q, k, v))
        with sdpa_kernel([getattr(SDPBackend, __import__("os").environ.get("PEER", "CUDNN") + "_ATTENTION")]):
            out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
        fns.append(lambda: torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True))
        ts = [[] for _ in fns]
        for f in fns:
            f()
        torch.cuda.synchronize()
        for rep in range(9):
            for i, f in enumerate(fns):
                ts[i].append(common.time_once(f))
        med = [sorted(t)[len(t) // 2] for t in ts]
        fl = 2.5 * 4.0 * B * H * n * n * d * (0.5 if causal else 1)
        row = {"kernel": name, "N": n, "ms": [round(m, 4) for m in med],
               "tflops": [round(fl / m / 1e9) for m in med],
               "x_first": [round(med[0] / m, 3) for m in med[:-1]],
               "x_cudnn": [round(med[-1] / m, 3) for m in med[:-1]]}
        print(json.dumps(row), flush=True)
        rows.append(row)
json.dump({"dirs": dirs, "grad": grad, "rows": rows}, open(argv[2], "w"), indent=1)
