"""Kernel-only time of backward kernels from several builds, interleaved, with cudnn's bwd."""
import sys, json
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch, common
# Session 15's record: dq_accum_ptr was bench/check_backward_kernel.py's then (gone since
# session 17); ../backward_h200_2026-12-02_s17/cmp.py is the script to rerun.
from check_backward_kernel import dq_accum_ptr
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from fa_runtime import Kernel
dirs = sys.argv[1].split(",")
rows = []
for name in ("bwd_f16_d128_full", "bwd_f16_d128_causal", "bwd_bf16_d128_full", "bwd_f16_d64_full", "bwd_f16_d64_causal"):
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
        kerns = [Kernel.load(f"{dd}/{name}_kernel.json") for dd in dirs]
        def mk(kern):
            dqp = dq_accum_ptr(kern, dq_acc, B=B, Hq=H, Hkv=H, Nq=n, Nk=n)
            return lambda: kern.launch_ptrs(q.data_ptr(), k.data_ptr(), v.data_ptr(), do.data_ptr(), lse.data_ptr(),
                     delta.data_ptr(), dqp, dk.data_ptr(), dv.data_ptr(), stream=s,
                     B=B, Hq=H, Hkv=H, Nq=n, Nk=n)
        fns = [mk(kk) for kk in kerns]
        qg, kg, vg = (t_.detach().requires_grad_() for t_ in (q, k, v))
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
        fns.append(lambda: torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True))
        ts = [[] for _ in fns]
        for f in fns: f()
        torch.cuda.synchronize()
        for rep in range(7):
            for i, f in enumerate(fns):
                ts[i].append(common.time_once(f))
        med = [sorted(t)[len(t)//2] for t in ts]
        fl = 2.5 * 4.0 * B * H * n * n * d * (0.5 if causal else 1)
        row = {"kernel": name, "N": n, "ms": [round(m, 4) for m in med],
               "tflops": [round(fl / m / 1e9) for m in med],
               "x_first": [round(med[0] / m, 3) for m in med[:-1]],
               "x_cudnn": [round(med[-1] / m, 3) for m in med[:-1]]}
        print(json.dumps(row), flush=True); rows.append(row)
json.dump({"dirs": dirs, "rows": rows}, open(sys.argv[2], "w"), indent=1)
