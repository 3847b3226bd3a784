"""Decode steps captured in a CUDA graph: fa.attention (in-kernel split-KV) vs cudnn SDPA,
both captured, replayed back to back; and eager for reference. f16, d128, GQA 32:8, 1 row."""
import sys, time, json
sys.path.insert(0, "python"); sys.path.insert(0, "bench")
import torch, fa
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
fa.load_bundle(".dev/sk/dbundle")
rows = []
for B, Nk in ((1, 4096), (1, 32768), (8, 4096), (8, 32768), (64, 4096)):
    q = torch.randn(B, 32, 1, 128, device="cuda", dtype=torch.float16)
    k = torch.randn(B, 8, Nk, 128, device="cuda", dtype=torch.float16)
    v = torch.randn_like(k)
    ref = fa.attention(q, k, v, causal=True)

    def ours():
        return fa.attention(q, k, v, causal=True)

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    r = {"B": B, "Nk": Nk}
    for name, fn in (("ours", ours), ("cudnn", cudnn)):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g):
                out = fn()
        except Exception as e:  # noqa: BLE001
            r[f"{name}_graph_error"] = f"{type(e).__name__}: {e}"[:300]
            print(name, B, Nk, "capture failed:", r[f"{name}_graph_error"], flush=True)
            continue
        g.replay(); torch.cuda.synchronize()
        r[f"{name}_graph_err"] = (out.float() - ref.float()).abs().max().item()
        for mode, call in (("graph", g.replay), ("eager", fn)):
            for _ in range(10):
                call()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(200):
                call()
            torch.cuda.synchronize()
            r[f"{name}_{mode}_us"] = (time.perf_counter() - t) / 200 * 1e6
    if "ours_graph_us" in r and "cudnn_graph_us" in r:
        r["graph_cudnn_over_ours"] = r["cudnn_graph_us"] / r["ours_graph_us"]
    r["eager_cudnn_over_ours"] = r["cudnn_eager_us"] / r["ours_eager_us"]
    rows.append(r)
    print(json.dumps({a: (round(x, 3) if isinstance(x, float) else x) for a, x in r.items()}),
          flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=1)
