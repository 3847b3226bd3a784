"""fa.attention's attn_mask through the public API on the GPU (what a user calls), against
fa.torch_ops.reference (the same semantics written with torch, float32) and, where they mean
the same thing, torch SDPA's math backend; then the masked kernel's time against the
unmasked one, both through fa.attention, in the same process.

Cases: a boolean padding mask [B, 1, 1, Nk] (keys past each sequence's length hidden; one
sequence of no key), a random per-key boolean mask [B, 1, 1, Nk] (both compiled with one mask
row that every query row reads, classified per key block), a boolean [Nq, Nk] block mask
with causal, an additive f16 / f32 bias [B, Hq, Nq, Nk] and
[1, Hq, Nq, Nk], rows that see no key (out 0), GQA, tails, both dtypes; each on the chip of
the device (FA_CHIP=sm_80 for the A100 kernels). Negative control: a mask whose key order
is reversed must fail the check.

Backward (--grad, session 34's masked backward kernels): loss.backward() through the same
calls, dq, dk, dv against fa.torch_ops.reference_grad in float64 with the mask (max
error relative to the largest reference gradient: 1e-2 f16, 3e-2 bf16; rows that see no
key get dq 0 exactly); the negative control differentiates the reversed-key mask.

    python3 -m fa.precompile --chip sm_90a --out BUNDLE \
        $(python3 bench/attn_mask_api.py --print-specs)
    FA_BUNDLE=BUNDLE python3 bench/attn_mask_api.py [--out FILE]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

CASES = [  # name, B, Hq, Hkv, Nq, Nk, D, causal, mask kind
    ("padding", 2, 8, 2, 1000, 1000, 128, False, "pad"),
    ("padding_causal", 2, 8, 8, 777, 777, 64, True, "pad"),
    ("padding_empty", 3, 4, 4, 200, 520, 64, False, "pad0"),
    ("keys_random", 2, 4, 2, 300, 700, 128, True, "keys"),
    ("block_bool_causal", 1, 4, 2, 300, 500, 128, True, "bool2d"),
    ("bias_f16_full", 2, 4, 4, 256, 384, 128, False, "f16:BH"),
    ("bias_f32_heads", 1, 8, 2, 500, 500, 64, True, "f32:1H"),
    ("dead_rows", 1, 2, 2, 129, 200, 128, False, "dead"),
]
SPECS = {"pad": "bool:B11", "pad0": "bool:B11", "keys": "bool:B11", "bool2d": "bool:11",
         "f16:BH": "f16:BH", "f32:1H": "f32:1H", "dead": "bool:11"}


def specs():
    out = []
    for dt in ("f16", "bf16"):
        for _, _, _, _, _, _, D, causal, kind in CASES:
            # The check asks for lse, its negative control does not.
            for lse in (",lse", ""):
                out.append(f"{dt},d{D},{'causal' if causal else 'full'}{lse},mask={SPECS[kind]}")
            out.append(f"{dt},d{D},{'causal' if causal else 'full'},grad,mask={SPECS[kind]}")
        out.append(f"{dt},d128,full")  # the timing's unmasked kernel
        out.append(f"{dt},d128,full,mask=bool:111")  # and its [1, 1, 1, Nk] mask
    return sorted(set(out))


def make_mask(kind, B, Hq, Nq, Nk, dtype, gen, dev):
    import torch
    if kind in ("pad", "pad0"):
        lens = torch.randint(Nk // 3, Nk + 1, (B,), generator=gen, device="cpu").to(dev)
        if kind == "pad0":
            lens[1] = 0  # a sequence whose rows see no key
        return (torch.arange(Nk, device=dev)[None, :] < lens[:, None]).view(B, 1, 1, Nk)
    if kind == "keys":
        return (torch.rand((B, 1, 1, Nk), generator=gen, device="cpu") < 0.7).to(dev)
    if kind in ("bool2d", "dead"):
        m = torch.rand((Nq, Nk), generator=gen, device="cpu").to(dev) < 0.7
        if kind == "dead":
            m[::7] = False  # rows that see no key
        return m
    dt, dims = kind.split(":")
    shape = (B if dims[0] == "B" else 1, Hq if dims[1] == "H" else 1, Nq, Nk)
    bias = torch.randn(shape, generator=gen, device="cpu").to(dev) * 2
    bias = bias.masked_fill((torch.rand(shape, generator=gen) < 0.05).to(dev), float("-inf"))
    return bias.to(torch.float16 if dt == "f16" else torch.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--print-specs", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--grad", action="store_true", help="check the backward too")
    ap.add_argument("--no-timing", action="store_true",
                    help="checks only (for compute-sanitizer)")
    args = ap.parse_args()
    if args.print_specs:
        print(" ".join(specs()))
        return
    import torch
    import fa
    from fa import torch_ops
    dev = "cuda"
    gen = torch.Generator().manual_seed(31)
    rows, failures = [], 0
    for dtype in (torch.float16, torch.bfloat16):
        for name, B, Hq, Hkv, Nq, Nk, D, causal, kind in CASES:
            q = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtype)
            k = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtype)
            v = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtype)
            mask = make_mask(kind, B, Hq, Nq, Nk, dtype, gen, dev)
            out, lse = fa.attention(q, k, v, causal=causal, attn_mask=mask, return_lse=True)
            ref, rlse = torch_ops.reference(q.float(), k.float(), v.float(), causal, None, None,
                                            None, True, attn_mask=mask)
            err = (out.float() - ref).abs().max().item()
            fin = torch.isfinite(rlse)
            lerr = (lse[fin] - rlse[fin]).abs().max().item() if fin.any() else 0.0
            ok = err <= (2e-2 if dtype == torch.bfloat16 else 4e-3) and lerr <= 1e-3 and \
                bool((lse[~fin] == float("-inf")).all()) and bool(torch.isfinite(out).all())
            # Negative control: the keys' order reversed in the mask.
            bad = fa.attention(q, k, v, causal=causal, attn_mask=mask.flip(-1))
            caught = (bad.float() - ref).abs().max().item() > 10 * max(err, 1e-3)
            failures += (not ok) + (not caught)
            rows.append(dict(case=name, dtype=str(dtype), max_err=err, lse_err=lerr, ok=ok,
                             negative_control_caught=caught))
            print(f"{'ok  ' if ok and caught else 'FAIL'} {name:20s} {str(dtype):15s} "
                  f"max|out-ref| {err:.2e} lse {lerr:.2e} "
                  f"control {'caught' if caught else 'MISSED'}", flush=True)
    grad_rows = []
    for dtype in ((torch.float16, torch.bfloat16) if args.grad else ()):
        for name, B, Hq, Hkv, Nq, Nk, D, causal, kind in CASES:
            q = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtype)
            k = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtype)
            v = torch.randn((B, Hkv, Nk, D), generator=gen).to(dev, dtype)
            do = torch.randn((B, Hq, Nq, D), generator=gen).to(dev, dtype)
            mask = make_mask(kind, B, Hq, Nq, Nk, dtype, gen, dev)

            def reference_grads(m):
                # float64, the backward written out (docs/Backward.md's math, dead rows 0).
                return torch_ops.reference_grad(q.double(), k.double(), v.double(), do.double(),
                                                causal, None, None, None, None, m)

            def ours(m):
                qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
                out = fa.attention(qg, kg, vg, causal=causal, attn_mask=m)
                (out * do).sum().backward()
                torch.cuda.synchronize()
                return qg.grad, kg.grad, vg.grad

            ref = reference_grads(mask)
            tol = 1e-2 if dtype == torch.float16 else 3e-2

            def errors(got):
                return [((g.double() - r).abs().max() / (r.abs().max().clamp_min(1e-30))).item()
                        for g, r in zip(got, ref)]
            got = ours(mask)
            errs = errors(got)
            # Rows with no visible key: dq exactly 0.
            dead = ~torch.isfinite(torch_ops.reference(
                q.float(), k.float(), v.float(), causal, None, None, None, True,
                attn_mask=mask)[1])
            zeros = bool((got[0].float()[dead] == 0).all()) if dead.any() else True
            finite = all(bool(torch.isfinite(g).all()) for g in got)
            ok = finite and zeros and max(errs) <= tol
            caught = max(errors(ours(mask.flip(-1)))) > tol
            failures += (not ok) + (not caught)
            grad_rows.append(dict(case=name, dtype=str(dtype), dq=errs[0], dk=errs[1],
                                  dv=errs[2], dead_rows_zero=zeros, ok=ok,
                                  negative_control_caught=caught))
            print(f"{'ok  ' if ok and caught else 'FAIL'} grad {name:15s} {str(dtype):15s} "
                  f"dq {errs[0]:.2e} dk {errs[1]:.2e} dv {errs[2]:.2e} zeros {zeros} "
                  f"control {'caught' if caught else 'MISSED'}", flush=True)
    # Speed: the same call with and without a [B, 1, 1, Nk] padding mask that hides nothing,
    # and with one that hides the second half of the keys against the unmasked call on that
    # first half alone (what skipping the hidden blocks can reach).
    timing = []
    for dtype in (() if args.no_timing else (torch.float16, torch.bfloat16)):
        B, H, N, D = 1, 16, 8192, 128
        q, k, v = (torch.randn((B, H, N, D), device=dev, dtype=dtype) for _ in range(3))
        k_half, v_half = k[:, :, :N // 2].contiguous(), v[:, :, :N // 2].contiguous()
        keep = torch.ones((B, 1, 1, N), device=dev, dtype=torch.bool)
        half = (torch.arange(N, device=dev) < N // 2).view(B, 1, 1, N)
        ms = {}
        for label, args_, kw in (("plain", (q, k, v), {}),
                                 ("masked", (q, k, v), {"attn_mask": keep}),
                                 ("plain_half_keys", (q, k_half, v_half), {}),
                                 ("masked_half", (q, k, v), {"attn_mask": half}),
                                 ("sdpa_masked", (q, k, v), {"attn_mask": keep}),
                                 ("sdpa_masked_half", (q, k, v), {"attn_mask": half})):
            # The peer: torch SDPA with the same boolean mask (torch picks its backend; flash
            # takes no mask, so it is memory-efficient attention or cudnn).
            call = torch.nn.functional.scaled_dot_product_attention \
                if label.startswith("sdpa") else fa.attention
            for _ in range(3):
                call(*args_, **kw)
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(20):
                call(*args_, **kw)
            end.record()
            torch.cuda.synchronize()
            ms[label] = start.elapsed_time(end) / 20
        flops = 4 * B * H * N * N * D
        visible = {"plain": flops, "masked": flops, "plain_half_keys": flops / 2,
                   "masked_half": flops / 2, "sdpa_masked": flops, "sdpa_masked_half": flops / 2}
        timing.append(dict(dtype=str(dtype), ms=ms,
                           tflops={x: visible[x] / ms[x] / 1e9 for x in ms},
                           masked_over_plain=ms["plain"] / ms["masked"],
                           masked_half_over_plain_half=ms["plain_half_keys"] / ms["masked_half"],
                           masked_over_sdpa_masked=ms["sdpa_masked"] / ms["masked"],
                           masked_half_over_sdpa=ms["sdpa_masked_half"] / ms["masked_half"]))
        print(f"{str(dtype):15s} plain {ms['plain']:.3f} ms, masked {ms['masked']:.3f} ms "
              f"({ms['plain'] / ms['masked']:.3f}x); half the keys: plain "
              f"{ms['plain_half_keys']:.3f} ms, masked {ms['masked_half']:.3f} ms "
              f"({ms['plain_half_keys'] / ms['masked_half']:.3f}x); torch SDPA masked "
              f"{ms['sdpa_masked']:.3f} / half {ms['sdpa_masked_half']:.3f} ms", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), chip=os.environ.get("FA_CHIP"),
                           checks=rows, grad_checks=grad_rows, timing=timing), f, indent=1)
    print(f"{len(rows) + len(grad_rows)} cases, {failures} failures (checks and negative "
          f"controls)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
