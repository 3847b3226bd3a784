"""One backward launch of a kernel (for ncu), plus its time and cudnn's in this process."""
import os, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch, common
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
name = sys.argv[1]; n = int(sys.argv[2]); mode = sys.argv[3]
d = 128 if "d128" in name else 64
causal = "causal" in name
B, H = 16384 // n, 16
dt = torch.float16 if "f16" in name and "bf16" not in name else torch.bfloat16
kern = common.load_named(".dev/bp/k", name)
q, k, v, do = (torch.randn(B, H, n, d, device="cuda", dtype=dt) for _ in range(4))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    o, lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, is_causal=causal)[:2]
lse = lse.float().contiguous()
delta = (do.float() * o.float()).sum(-1)
dq_acc = torch.zeros(B, H, n, d, device="cuda", dtype=torch.float32)
dk, dv = torch.empty_like(k), torch.empty_like(v)
s = torch.cuda.current_stream().cuda_stream
def run():
    kern.launch_ptrs(q.data_ptr(), k.data_ptr(), v.data_ptr(), do.data_ptr(), lse.data_ptr(),
                     delta.data_ptr(), dq_acc.data_ptr(), dk.data_ptr(), dv.data_ptr(), stream=s,
                     B=B, Hq=H, Hkv=H, Nq=n, Nk=n)
f = 2.5 * 4.0 * B * H * n * n * d * (0.5 if causal else 1)
if mode == "prof":
    run(); run(); torch.cuda.synchronize()
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
    torch.autograd.grad(out, (qg, kg, vg), do); torch.cuda.synchronize()
else:
    t = common.time_ms(run, 15)
    qg, kg, vg = (t_.detach().requires_grad_() for t_ in (q, k, v))
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
    tc = common.time_ms(lambda: torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True), 15)
    print(f"{name} N={n}: kernel {t:.3f} ms {f/t/1e9:.0f} TF/s; cudnn bwd {tc:.3f} ms {f/tc/1e9:.0f} TF/s; ratio {tc/t:.3f}")
