"""Issue 16 item 6 on the GPU: the backward kernels of attention variants (softcap, score_mod
and mask_mod regions; bench/kernels_backward_variants.mlir), launched through fa_runtime's
Kernel.grad, against torch autograd of the same variant (bench_variants.masked_scores) in f32.

--check: every backward kernel of each chip's directory on shapes with tails, GQA and
         Nq != Nk; dq, dk, dv relative to the reference's largest magnitude (the tolerance of
         bench/check_backward_kernel.py); plus negative controls (gradients of a variant kernel
         checked against the plain variant's must fail).
--bench: B=1, H=16, N=16k, d128 bf16, sm_90a: each variant's backward kernel against our plain
         backward kernel (TFLOP/s of visible work, backward FLOPs = 2.5 x the forward's), and
         forward + backward (our variant forward kernels of bench/kernels_variants.mlir + the
         backward) against FlexAttention (torch.compile) forward + backward with the same
         modifiers.

  python3 bench/check_backward_variants.py --k90 DIR --k80 DIR [--fwd90 DIR] --check --bench --out PREFIX
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_variants as bv  # noqa: E402
import common  # noqa: E402
import torch  # noqa: E402

SHAPES = [  # B, Hq, Hkv, Nq, Nk
    (2, 8, 2, 1000, 1000),
    (1, 4, 4, 384, 1024),
    (1, 2, 1, 2304, 2304),
    (1, 4, 2, 333, 77),
    (1, 2, 1, 4096, 4096),  # document masking's first boundary is at 3000
]
# Small odd shapes for compute-sanitizer (--sanitize).
SANITIZE_SHAPES = [(1, 2, 1, 77, 333), (1, 2, 2, 129, 200)]


def variant_of(name):
    """The bench_variants variant of kernel bvar_<name> (a _d64 copy is the same variant)."""
    return bv.VARIANTS[name[:-4] if name.endswith("_d64") else name]


def reference(q, k, v, do, var, tensors, scale):
    """out, lse and dq, dk, dv of the variant by torch autograd in f32."""
    q32, k32, v32 = (t.float().requires_grad_() for t in (q, k, v))
    s, vf = bv.masked_scores(q32, k32, v32, var, tensors, scale)
    lse = torch.logsumexp(s, -1)
    safe = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse)
    o = torch.matmul(torch.exp(s - safe[..., None]), vf)
    o.backward(do.float())
    return o.detach(), lse.detach(), q32.grad, k32.grad, v32.grad


def captured(var, B, Hq, Nq, Nk, grad=True):
    """The tensors the variant's regions read: forward function argument N (after q, k, v)
    is argument N + 3 of the backward's (after q, k, v, o, lse, do)."""
    if not var.get("inputs"):
        return {}
    t = var["inputs"](B, Hq, Nq, Nk)
    return {f"arg{int(n[3:]) + 3}" if grad else n: x for n, x in t.items()}


def inputs(name, B, Hq, Hkv, Nq, Nk, gen, d, dtype):
    q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dtype, generator=gen)
    if "softcap" in name:
        q = q * 8  # scores of std 8: tanh(s / 30) far from linear
    k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dtype, generator=gen)
    v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dtype, generator=gen)
    do = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dtype, generator=gen)
    return q, k, v, do


def errors(grads, refs):
    return {nm: (ours.float() - ref).abs().max().item() / (ref.abs().max().item() or 1.0)
            for nm, ours, ref in zip(("dq", "dk", "dv"), grads, refs)}


def check(kdir, chip, rows, controls=True, shapes=SHAPES):
    gen = torch.Generator(device="cuda")
    names = sorted(f[5:-12] for f in os.listdir(kdir) if f.startswith("bvar_")
                   and f.endswith("_kernel.json"))
    for name in names:
        kern = common.load_named(kdir, "bvar_" + name)
        var = variant_of(name)
        d = kern.manifest["head_dim"]
        dtype = torch.float16 if kern.manifest["dtype"] == "f16" else torch.bfloat16
        tol = 1e-2 if dtype == torch.float16 else 3e-2
        for (B, Hq, Hkv, Nq, Nk) in shapes:
            gen.manual_seed(B * 1000 + Nq + Nk)
            q, k, v, do = inputs(name, B, Hq, Hkv, Nq, Nk, gen, d, dtype)
            tensors = captured(var, B, Hq, Nq, Nk)
            o, lse, *refs = reference(q, k, v, do, var, tensors, kern.manifest["scale"])
            grads = kern.grad(q, k, v, o.to(dtype), lse.contiguous(), do, **tensors)
            torch.cuda.synchronize()
            err = errors(grads, refs)
            finite = all(bool(torch.isfinite(g).all()) for g in grads)
            ok = finite and all(e <= tol for e in err.values())
            rows.append(dict(kind="check", chip=chip, variant=name, B=B, Hq=Hq, Hkv=Hkv,
                             Nq=Nq, Nk=Nk, ok=ok, finite=finite, **err))
            print(f"{'ok  ' if ok else 'FAIL'} {chip} {name:22s} B{B} H{Hq}/{Hkv} Nq{Nq} Nk{Nk}: "
                  + " ".join(f"{n} {e:.2e}" for n, e in err.items()), flush=True)
    if not controls:
        return
    # The check must catch a kernel whose gradients are another variant's.
    for name, wrong in (("alibi_causal", "plain_causal"), ("softcapmod_full", "plain_full"),
                        ("prefixlm", "plain_causal"), ("doc_causal", "plain_causal")):
        if name not in names:
            continue
        kern = common.load_named(kdir, "bvar_" + name)
        gen.manual_seed(7)
        B, Hq, Hkv, Nq, Nk = 1, 2, 1, 4096, 4096  # two documents; a 2048-key prefix
        q, k, v, do = inputs(name, B, Hq, Hkv, Nq, Nk, gen, 128, torch.bfloat16)
        tensors = captured(variant_of(name), B, Hq, Nq, Nk)
        o, lse, *_ = reference(q, k, v, do, variant_of(name), tensors, kern.manifest["scale"])
        _, _, *wrong_refs = reference(q, k, v, do, bv.VARIANTS[wrong], {}, kern.manifest["scale"])
        grads = kern.grad(q, k, v, o.to(torch.bfloat16), lse.contiguous(), do, **tensors)
        err = errors(grads, wrong_refs)
        caught = max(err.values()) > 3e-2
        rows.append(dict(kind="negative_control", chip=chip, variant=name, against=wrong,
                         caught=caught, **err))
        print(f"negative control {chip} {name} vs {wrong}: max err {max(err.values()):.2e} "
              f"{'caught' if caught else 'NOT CAUGHT'}", flush=True)


def flex_fwd_bwd(q, k, v, do, var):
    """FlexAttention forward + backward with the variant's modifiers (None if it cannot)."""
    qs, ks, vs = (t.detach().requires_grad_() for t in (q, k, v))
    fwd = bv.flex_fns(qs, ks, vs, var)
    if fwd is None:
        return None

    def step():
        out = fwd()
        torch.autograd.grad(out, (qs, ks, vs), do)
    return step


def bench(k90, fwd90, rows, save, N=16384, H=16, iters=5):
    B, d, dt = 1, 128, torch.bfloat16
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    q, k, v, do = inputs("plain", B, H, H, N, N, gen, d, dt)
    o = torch.randn_like(q)
    lse = torch.full((B, H, N), 12.0, device="cuda")  # timing only: any finite lse
    plain_ms = {}
    for c in ("full", "causal"):
        kern = common.load_named(k90, f"bvar_plain_{c}")
        plain_ms[c] = common.time_ms(lambda kern=kern: kern.grad(q, k, v, o, lse, do), iters)
    for name, var in bv.VARIANTS.items():
        if name.startswith("plain") or not common.has_kernel(k90, "bvar_" + name):
            continue
        kern = common.load_named(k90, "bvar_" + name)
        tensors = captured(var, B, H, N, N)
        t = common.time_ms(lambda: kern.grad(q, k, v, o, lse, do, **tensors), iters)
        c = "causal" if var.get("causal") else "full"
        pairs = bv.visible_pairs(var, N, N, H)
        plain_pairs = bv.visible_pairs(bv.VARIANTS[f"plain_{c}"], N, N, H)
        flops = 2.5 * 4 * d * pairs * B
        row = dict(kind="bench", variant=name, N=N, H=H, B=B, bwd_ms=t,
                   bwd_tflops=flops / t / 1e9,
                   plain_bwd_tflops=2.5 * 4 * d * plain_pairs * B / plain_ms[c] / 1e9)
        row["bwd_vs_plain"] = row["bwd_tflops"] / row["plain_bwd_tflops"]
        if fwd90 and common.has_kernel(fwd90, "var_" + name):
            fk = common.load_named(fwd90, "var_" + name)
            fwd_tensors = captured(var, B, H, N, N, grad=False)
            tf = common.time_ms(lambda: fk(q, k, v, **fwd_tensors), iters)
            row.update(fwd_ms=tf, fwd_bwd_ms=tf + t)
            f = flex_fwd_bwd(q, k, v, do, var) if not name.startswith("softcapmod") else None
            if f is not None:
                try:
                    tflex = common.time_ms(f, iters)
                    row.update(flex_fwd_bwd_ms=tflex, fwd_bwd_vs_flex=tflex / (tf + t))
                except Exception as e:  # noqa: BLE001
                    print(f"  flex {name} failed: {e}", flush=True)
        rows.append(row)
        save()
        print(f"bench {name}: bwd {row['bwd_tflops']:.0f} TFLOP/s ({t:.3f} ms), "
              f"{row['bwd_vs_plain']:.2f}x plain bwd"
              + (f"; fwd+bwd {row['fwd_bwd_ms']:.3f} ms" if "fwd_bwd_ms" in row else "")
              + (f", flex {row['flex_fwd_bwd_ms']:.3f} ms -> {row['fwd_bwd_vs_flex']:.2f}x"
                 if "fwd_bwd_vs_flex" in row else ""), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k90")
    ap.add_argument("--k80")
    ap.add_argument("--fwd90", help="bench/kernels_variants.mlir's sm_90a kernels")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--sanitize", action="store_true",
                    help="small shapes, no negative controls (under compute-sanitizer)")
    ap.add_argument("--out", default="backward_variants")
    a = ap.parse_args()
    rows = [dict(kind="device", name=torch.cuda.get_device_name(), torch=torch.__version__)]

    def save():
        with open(a.out + ".json", "w") as f:
            json.dump(rows, f, indent=1)
    if a.check:
        for chip, kdir in (("sm_90a", a.k90), ("sm_80", a.k80)):
            if kdir:
                check(kdir, chip, rows, controls=not a.sanitize,
                      shapes=SANITIZE_SHAPES if a.sanitize else SHAPES)
                save()
    if a.bench and a.k90:
        bench(a.k90, a.fwd90, rows, save)
    save()
    bad = [r for r in rows if (r.get("kind") == "check" and not r["ok"])
           or (r.get("kind") == "negative_control" and not r["caught"])]
    print(f"{len(bad)} failures", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
