"""Where the host time of one decode call goes (1 x 4k, split-kv kernel, S = 16)."""
import sys, time
sys.path.insert(0, "python"); sys.path.insert(0, "bench")
import torch, fa
from fa import torch_ops
from fa_runtime.manifest import output_shapes
import fa_runtime.driver as drv
fa.load_bundle(".dev/sk/dbundle")
q = torch.randn(1, 32, 1, 128, device="cuda", dtype=torch.float16)
k = torch.randn(1, 8, 4096, 128, device="cuda", dtype=torch.float16)
v = torch.randn_like(k)
fa.attention(q, k, v, causal=True)
kern = torch_ops._kernel(q, v, False, None, None, None, False, True, split_kv=True)
qp = q.view(1, 8, 4, 128)
kern(qp, k, v, num_splits=16)
torch.cuda.synchronize()
plan = kern.check(qp, k, v, None, None, num_splits=16)
s = plan.sizes
stream = torch.cuda.current_stream(q.device).cuda_stream
out = torch.empty(1, 8, 4, 128, device="cuda", dtype=torch.float16)
maps = kern.tensor_maps(qp, k, v, s)
ws = [drv.split_kv_workspace(0, stream, n, 1 << 20) for n in ("split_o", "split_lse", "split_counter")]
ptrs = [maps.data_ptr(), maps.data_ptr() + 128, maps.data_ptr() + 256, out.data_ptr()] + [w.data_ptr() for w in ws]


def t(name, fn, n=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    print(f"{name:40s} {(time.perf_counter() - t0) / n * 1e6:8.2f} us", flush=True)


t("fa.attention", lambda: fa.attention(q, k, v, causal=True))
t("torch_ops._run_split_kernel", lambda: torch_ops._run_split_kernel(q, k, v, True, None, None, None, False))
t("Kernel.__call__", lambda: kern(qp, k, v, num_splits=16))
t("Kernel._launch", lambda: kern._launch(ptrs, s, stream, 0))
t("current_stream fast", lambda: drv.current_stream(torch, q.device))
t("Kernel.check", lambda: kern.check(qp, k, v, None, None, num_splits=16))
t("output_shapes", lambda: output_shapes(kern.manifest, s))
t("torch.empty", lambda: torch.empty((1, 8, 4, 128), device=q.device, dtype=torch.float16))
t("current_stream", lambda: torch.cuda.current_stream(q.device).cuda_stream)
t("_cuda_getCurrentRawStream", lambda: torch._C._cuda_getCurrentRawStream(0))
t("tensor_maps", lambda: kern.tensor_maps(qp, k, v, s))
t("grid", lambda: kern.grid(s, 0))
t("split_kv_workspace x3", lambda: [drv.split_kv_workspace(0, stream, n, 100) for n in ("split_o", "split_lse", "split_counter")])
t("q.contiguous().view", lambda: q.contiguous().view(1, 8, 4, 128))
t("plan_kernel_splits", lambda: fa.decode.plan_kernel_splits(1, 32, 8, 1, 4096, 132) if hasattr(fa, "decode") else None)
t("_kernel memo", lambda: torch_ops._kernel(q, v, False, None, None, None, False, True, split_kv=True))
t("check_inputs", lambda: torch_ops.check_inputs((q.shape, "f16", q.device), (k.shape, "f16", k.device), (v.shape, "f16", v.device), causal=True, window=None, scale=None, softcap=None, kv_lens=None, page_table=None))
t("chip_for_device", lambda: torch_ops.chip_for_device(q.device))
