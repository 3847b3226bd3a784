import sys, time, cProfile, pstats
sys.path.insert(0, "python"); sys.path.insert(0, "bench")
import torch, fa
fa.load_bundle(".dev/sk/dbundle")
q = torch.randn(1, 32, 1, 128, device="cuda", dtype=torch.float16)
k = torch.randn(1, 8, 4096, 128, device="cuda", dtype=torch.float16)
v = torch.randn_like(k)
for _ in range(20):
    fa.attention(q, k, v, causal=True)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(200):
    fa.attention(q, k, v, causal=True)
torch.cuda.synchronize()
print("fa.attention us/call", (time.perf_counter() - t) / 200 * 1e6)
from fa import torch_ops
kern = torch_ops._kernel(q, v, False, None, None, None, False, True, split_kv=True)
qp = q.view(1, 8, 4, 128)
t = time.perf_counter()
for _ in range(200):
    kern(qp, k, v, num_splits=16)
torch.cuda.synchronize()
print("Kernel.__call__ us/call", (time.perf_counter() - t) / 200 * 1e6)
t = time.perf_counter()
for _ in range(200):
    torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
torch.cuda.synchronize()
print("sdpa us/call", (time.perf_counter() - t) / 200 * 1e6)
pr = cProfile.Profile(); pr.enable()
for _ in range(200):
    fa.attention(q, k, v, causal=True)
pr.disable(); torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(25)
