"""ncu target: our sm_80 forward kernel (3 calls) then torch flash's forward (3 calls)."""
import sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch, common
from torch.nn.attention import SDPBackend, sdpa_kernel
kdir, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = 128 if "d128" in name else 64
causal = "causal" in name
B, H = 16384 // n, 2048 // d
dt = torch.bfloat16 if "bf16" in name else torch.float16
kern = common.load_named(kdir, name)
q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=dt) for _ in range(3))
out = torch.empty_like(q)
for _ in range(3):
    kern(q, k, v, out=out)
torch.cuda.synchronize()
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    for _ in range(3):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
torch.cuda.synchronize()
