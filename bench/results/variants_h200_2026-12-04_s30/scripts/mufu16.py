"""Session 30: throughput of the packed MUFU forms on the H200 (results per clock per SM), as session
28's mufu_rate.py (8 independent chains per element, ITERS steps), and the SASS each becomes.
A packed op counts two results."""
import os, subprocess, torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, ITERS: tl.constexpr, ASM: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x0 = tl.load(x_ptr + offs)
    x1 = x0 ^ 1; x2 = x0 ^ 2; x3 = x0 ^ 3; x4 = x0 ^ 4; x5 = x0 ^ 5; x6 = x0 ^ 6; x7 = x0 ^ 7
    for _ in range(ITERS):
        x0 = tl.inline_asm_elementwise(ASM, "=r,r", [x0], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x1 = tl.inline_asm_elementwise(ASM, "=r,r", [x1], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x2 = tl.inline_asm_elementwise(ASM, "=r,r", [x2], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x3 = tl.inline_asm_elementwise(ASM, "=r,r", [x3], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x4 = tl.inline_asm_elementwise(ASM, "=r,r", [x4], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x5 = tl.inline_asm_elementwise(ASM, "=r,r", [x5], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x6 = tl.inline_asm_elementwise(ASM, "=r,r", [x6], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
        x7 = tl.inline_asm_elementwise(ASM, "=r,r", [x7], dtype=tl.int32, is_pure=True, pack=1) ^ 0x3C003C00
    tl.store(y_ptr + offs, x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7)

OPS = {  # name: (asm, results per op)
    "ex2.approx.ftz.f32": ("ex2.approx.ftz.f32 $0, $1;", 1),
    "ex2.approx.f16x2": ("ex2.approx.f16x2 $0, $1;", 2),
    "ex2.approx.ftz.bf16x2": ("ex2.approx.ftz.bf16x2 $0, $1;", 2),
    "tanh.approx.f32": ("tanh.approx.f32 $0, $1;", 1),
    "tanh.approx.f16x2": ("tanh.approx.f16x2 $0, $1;", 2),
    "tanh.approx.bf16x2": ("tanh.approx.bf16x2 $0, $1;", 2),
    "xor only": ("mov.b32 $0, $1;", 1),
}
sms = torch.cuda.get_device_properties(0).multi_processor_count
BLOCK = 1024; n = sms * 8 * BLOCK; ITERS = 512
x = torch.randint(0, 1 << 14, (n,), device="cuda", dtype=torch.int32); y = torch.empty_like(x)
out = os.environ.get("OUT", ".")
for name, (asm, per) in OPS.items():
    try:
        f = lambda: k[(n // BLOCK,)](x, y, ITERS=ITERS, ASM=asm, BLOCK=BLOCK, num_warps=8)
        ck = k[(n // BLOCK,)](x, y, ITERS=ITERS, ASM=asm, BLOCK=BLOCK, num_warps=8); torch.cuda.synchronize()
        ms = triton.testing.do_bench(f, warmup=5, rep=50)
        ops = n * 8 * ITERS * per
        cub = os.path.join(out, name.replace(" ", "_") + ".cubin")
        open(cub, "wb").write(ck.asm["cubin"])
        sass = subprocess.run(["cuobjdump", "-sass", cub], capture_output=True, text=True).stdout
        mufu = sorted({l.split(";")[0].split()[1] for l in sass.splitlines() if "MUFU" in l for _ in [0] if len(l.split()) > 1 and "MUFU" in l.split()[1]})
        cnt = sum(1 for l in sass.splitlines() if "MUFU" in l)
        print(f"{name:24s} {ms:.3f} ms  {ops / (ms * 1e-3) / sms / 1.98e9:.2f} results/clk/SM at 1.98 GHz; SASS {cnt} MUFU lines {mufu}", flush=True)
        os.remove(cub)
    except Exception as e:
        print(f"{name}: failed: {str(e)[:300]}", flush=True)
