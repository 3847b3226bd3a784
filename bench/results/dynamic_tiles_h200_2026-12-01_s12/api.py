"""Session 12, device: fa.attention (public API, bundle) for causal prefill: the dynamic-tiles
kernel that fa.attention now picks up to 2048 tokens against the previous choice (the default
kernel, DYNAMIC_TILES_MAX_TOKENS = 0), interleaved in one process, with cudnn and flash; outputs
against torch's math SDPA; two streams running the dynamic kernel at once (one counter each)."""
import json, sys, os
sys.path.insert(0, "python"); sys.path.insert(0, "bench")
import torch
import fa, fa.torch_ops as ops
from common import time_back_to_back
from torch.nn.attention import sdpa_kernel, SDPBackend
fa.load_bundle(sys.argv[1])
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": [], "checks": []}
torch.manual_seed(0)

def run(limit, *a, **k):
    ops.DYNAMIC_TILES_MAX_TOKENS = limit
    ops._fast.clear()
    return fa.attention(*a, **k)

ok = True
# Correctness through the API: dynamic (<= 2048) vs math SDPA in f32.
for dt in (torch.float16, torch.bfloat16):
    for d in (64, 128):
        for (B, H, Hkv, N) in ((2, 8, 2, 1000), (1, 4, 4, 77), (3, 6, 3, 2048), (4, 16, 16, 512)):
            q = torch.randn(B, H, N, d, device="cuda", dtype=dt)
            k = torch.randn(B, Hkv, N, d, device="cuda", dtype=dt)
            v = torch.randn(B, Hkv, N, d, device="cuda", dtype=dt)
            o, lse = run(2048, q, k, v, causal=True, return_lse=True)
            kk = k.float().repeat_interleave(H // Hkv, 1); vv = v.float().repeat_interleave(H // Hkv, 1)
            with sdpa_kernel(SDPBackend.MATH):
                ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk, vv, is_causal=True)
            s = (q.float() @ kk.transpose(-1, -2)) / d ** 0.5
            s = s.masked_fill(torch.ones(N, N, device="cuda", dtype=torch.bool).tril().logical_not(), float("-inf"))
            lref = torch.logsumexp(s, -1)
            err = (o.float() - ref).abs().max().item(); lerr = (lse - lref).abs().max().item()
            tol = 2e-2 if dt == torch.bfloat16 else 4e-3
            good = err < tol and lerr < 1e-3
            ok &= good
            out["checks"].append(dict(dtype=str(dt), d=d, B=B, H=H, Hkv=Hkv, N=N, err=err, lse_err=lerr, ok=good))
            print(f"check {dt} d{d} B{B} H{H}/{Hkv} N{N}: err {err:.2e} lse {lerr:.2e} {'OK' if good else 'FAIL'}")
used = [getattr(k, "takes_tile_counter", None) for k in ops._fast.values()]
print("kernels of the last check take a tile counter:", used)
out["dynamic_used"] = used
# Two streams at once: each has its own counter; results equal to a serial run.
q = torch.randn(8, 16, 1024, 128, device="cuda", dtype=torch.bfloat16)
ref = run(2048, q, q, q, causal=True)
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
torch.cuda.synchronize()
res = []
for _ in range(20):
    with torch.cuda.stream(s1):
        a = fa.attention(q, q, q, causal=True)
    with torch.cuda.stream(s2):
        b = fa.attention(q, q, q, causal=True)
    res.append((a, b))
torch.cuda.synchronize()
same = all(torch.equal(a, ref) and torch.equal(b, ref) for a, b in res)
ok &= same
print("two streams, 20 x 2 launches at once, bitwise equal to the serial run:", same)
out["two_streams_equal"] = same
# Speed: what a user sees (20 back-to-back fa.attention calls), interleaved.
for dt in (torch.bfloat16,):
    for d in (64, 128):
        H = 32 if d == 64 else 16
        for N in (256, 512, 1024, 2048, 4096):
            B = 16384 // N
            q = torch.randn(B, H, N, d, device="cuda", dtype=dt)
            k = torch.randn(B, H, N, d, device="cuda", dtype=dt)
            v = torch.randn(B, H, N, d, device="cuda", dtype=dt)
            flops = 4 * B * H * N * N * d / 2
            t = {"new": [], "prev": [], "cudnn": [], "flash": []}
            def sdpa(be):
                with sdpa_kernel(be):
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            for _ in range(5):
                for name, limit in (("new", 2048), ("prev", 0)):
                    ops.DYNAMIC_TILES_MAX_TOKENS = limit
                    ops._fast.clear()
                    t[name].append(time_back_to_back(lambda: fa.attention(q, k, v, causal=True)))
                t["cudnn"].append(time_back_to_back(lambda: sdpa(SDPBackend.CUDNN_ATTENTION)))
                t["flash"].append(time_back_to_back(lambda: sdpa(SDPBackend.FLASH_ATTENTION)))
            med = {kk: sorted(vv)[2] for kk, vv in t.items()}
            row = dict(dtype=str(dt), d=d, N=N, B=B, H=H, **{f"{kk}_ms": vv for kk, vv in med.items()},
                       new_tflops=flops / med["new"] / 1e9)
            out["rows"].append(row)
            print(f"user bf16 d{d} N{N}: new {row['new_tflops']:.0f} TFLOP/s; new/prev {med['prev']/med['new']:.2f} "
                  f"new/cudnn {med['cudnn']/med['new']:.2f} new/flash {med['flash']/med['new']:.2f}")
json.dump(out, open(sys.argv[2], "w"), indent=1)
print("api all ok" if ok else "api FAIL")
