"""Session 29: softcap's error with tanh.approx.f32 (base) and tanh.approx.f16x2 (h2) kernels.
(1) the instruction alone: max |tanh_approx(x) - tanh(x)| over x in [-12, 12] (2^22 points),
    f32 and f16x2 (f32 argument rounded to f16, result widened), via Triton inline PTX;
(2) the kernels: max / mean |o - ref| against an f64 reference (B1 H8 N2048 d128 bf16, softcap 30,
    scores of std 8 and 30), beside the floor of bf16 output rounding and FlexAttention's error."""
import os, sys, json
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench")); sys.path.insert(0, os.path.join(ROOT, "python"))
import torch, triton, triton.language as tl
import common

@triton.jit
def tanh_k(x_ptr, y_ptr, ASM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise(ASM, "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)

ASMS = {"tanh.approx.f32": "tanh.approx.f32 $0, $1;",
        "tanh.approx.f16x2": "{ .reg .b32 h; .reg .b16 l, u; cvt.rn.f16x2.f32 h, $1, $1; "
                             "tanh.approx.f16x2 h, h; mov.b32 {l, u}, h; cvt.f32.f16 $0, l; }"}
out = {}
x = torch.linspace(-12, 12, 1 << 22, device="cuda", dtype=torch.float32)
exact = torch.tanh(x.double())
for name, asm in ASMS.items():
    y = torch.empty_like(x)
    tanh_k[(x.numel() // 1024,)](x, y, ASM=asm, BLOCK=1024)
    e = (y.double() - exact).abs()
    rel = e / exact.abs().clamp_min(1e-30)
    small = x.abs() < 1
    out[name] = dict(max_abs=e.max().item(), max_rel_abs_ge_0_1=rel[exact.abs() >= 0.1].max().item(),
                     max_abs_x_lt_1=e[small].max().item())
    print(f"{name}: max abs err {e.max().item():.3e}, max rel err (|tanh| >= 0.1) "
          f"{out[name]['max_rel_abs_ge_0_1']:.3e}, max abs err |x| < 1 {out[name]['max_abs_x_lt_1']:.3e}", flush=True)

def ref64(q, k, v, causal, cap):
    s = torch.matmul(q.double(), k.double().transpose(-1, -2)) / q.shape[-1] ** 0.5
    s = cap * torch.tanh(s / cap)
    if causal:
        n, m = s.shape[-2:]
        s = s.masked_fill(torch.ones(n, m, device=s.device, dtype=torch.bool).tril(m - n).logical_not(), float("-inf"))
    return torch.softmax(s, -1) @ v.double()

from torch.nn.attention.flex_attention import flex_attention, create_block_mask
flex = torch.compile(flex_attention)
B, H, N, D = 1, 8, 2048, 128
rows = []
for causal in (False, True):
    c = "causal" if causal else "full"
    kerns = {b: common.load_named(os.path.join(HERE, "k", b), "var_softcap_" + c) for b in ("base", "h2")}
    for std in (8, 30):
        g = torch.Generator(device="cuda"); g.manual_seed(std)
        q = torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16, generator=g) * std
        k = torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16, generator=g)
        v = torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16, generator=g)
        r = ref64(q, k, v, causal, 30.0)
        errs = {"bf16 rounding of the exact result": (r.to(torch.bfloat16).double() - r).abs()}
        for b, kern in kerns.items():
            errs[b] = (kern(q, k, v).double() - r).abs()
        def smod(s, b_, h, i, j):
            return 30.0 * torch.tanh(s / 30.0)
        bm = create_block_mask(lambda b_, h, i, j: i >= j, 1, 1, N, N) if causal else None
        errs["flex (torch.tanh)"] = (flex(q, k, v, score_mod=smod, block_mask=bm).double() - r).abs()
        for name, e in errs.items():
            row = dict(variant="softcap_" + c, score_std=std, impl=name, max_abs=e.max().item(), mean_abs=e.mean().item())
            rows.append(row)
            print(f"softcap_{c} std {std}: {name:36s} max {row['max_abs']:.3e} mean {row['mean_abs']:.3e}", flush=True)
json.dump(dict(device=torch.cuda.get_device_name(), instruction=out, kernels=rows),
          open(os.path.join(os.environ.get("OUT", "."), "softcap_error.json"), "w"), indent=1)
