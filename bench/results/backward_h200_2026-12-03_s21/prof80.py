"""ncu target: our sm_80 backward kernel (3 launches) then torch flash's backward (3 calls)."""
import sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch, common
from check_backward_kernel import launch_pointers
from torch.nn.attention import SDPBackend, sdpa_kernel
kdir, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = 128 if "d128" in name else 64
causal = "causal" in name
B, H = 16384 // n, 16
dt = torch.bfloat16 if "bf16" in name else torch.float16
kern = common.load_named(kdir, name)
q, k, v, do = (torch.randn(B, H, n, d, device="cuda", dtype=dt) for _ in range(4))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    o, lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, is_causal=causal)[:2]
lse = lse.float().contiguous()
delta = (do.float() * o.float()).sum(-1)
dq_acc = torch.zeros(B, H, n, d, device="cuda", dtype=torch.float32)
dk, dv = torch.empty_like(k), torch.empty_like(v)
sizes = dict(B=B, Hq=H, Hkv=H, Nq=n, Nk=n)
ptrs = launch_pointers(kern, dict(q=q, k=k, v=v, do=do, lse=lse, delta=delta, dq_accum=dq_acc,
                                  dk=dk, dv=dv), **sizes)
for _ in range(3):
    kern.launch_ptrs(*ptrs, stream=torch.cuda.current_stream().cuda_stream, **sizes)
torch.cuda.synchronize()
qr, kr, vr = (x.clone().requires_grad_() for x in (q, k, v))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    for _ in range(3):
        out = torch.nn.functional.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
        torch.autograd.grad(out, (qr, kr, vr), do)
torch.cuda.synchronize()
