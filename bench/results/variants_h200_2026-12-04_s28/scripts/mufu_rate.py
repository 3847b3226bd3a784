"""Throughput of MUFU instructions on this GPU (results per clock per SM), via Triton inline PTX.
Each program: BLOCK elements, 8 independent chains per element, ITERS steps of x = op(x) * a + b."""
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, ITERS: tl.constexpr, ASM: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x0 = tl.load(x_ptr + offs)
    x1 = x0 + 0.1; x2 = x0 + 0.2; x3 = x0 + 0.3; x4 = x0 + 0.4; x5 = x0 + 0.5; x6 = x0 + 0.6; x7 = x0 + 0.7
    for _ in range(ITERS):
        x0 = tl.inline_asm_elementwise(ASM, "=r,r", [x0], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x1 = tl.inline_asm_elementwise(ASM, "=r,r", [x1], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x2 = tl.inline_asm_elementwise(ASM, "=r,r", [x2], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x3 = tl.inline_asm_elementwise(ASM, "=r,r", [x3], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x4 = tl.inline_asm_elementwise(ASM, "=r,r", [x4], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x5 = tl.inline_asm_elementwise(ASM, "=r,r", [x5], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x6 = tl.inline_asm_elementwise(ASM, "=r,r", [x6], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
        x7 = tl.inline_asm_elementwise(ASM, "=r,r", [x7], dtype=tl.float32, is_pure=True, pack=1) * 0.5 - 0.25
    tl.store(y_ptr + offs, x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7)

OPS = {
    "ex2.approx.f32": "ex2.approx.f32 $0, $1;",
    "ex2.approx.ftz.f32": "ex2.approx.ftz.f32 $0, $1;",
    "tanh.approx.f32": "tanh.approx.f32 $0, $1;",
    "rcp.approx.ftz.f32": "rcp.approx.ftz.f32 $0, $1;",
    "mov (FMA only)": "mov.b32 $0, $1;",
}
sms = torch.cuda.get_device_properties(0).multi_processor_count
BLOCK = 1024; n = sms * 8 * BLOCK; ITERS = 512
x = torch.rand(n, device="cuda"); y = torch.empty_like(x)
for name, asm in OPS.items():
    f = lambda: k[(n // BLOCK,)](x, y, ITERS=ITERS, ASM=asm, BLOCK=BLOCK, num_warps=8)
    f(); torch.cuda.synchronize()
    ms = triton.testing.do_bench(f, warmup=5, rep=50)
    ops = n * 8 * ITERS
    clk = 1.98e9  # max SM clock; the ratio between ops is what matters
    print(f"{name:22s} {ms:.3f} ms  {ops / (ms * 1e-3) / sms / clk:.2f} results/clk/SM at 1.98 GHz", flush=True)
