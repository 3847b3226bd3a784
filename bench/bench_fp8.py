"""FP8 (E4M3) attention of the fa sm_90a kernel on an H100/H200: correctness, accuracy, speed.

Usage (on the GPU machine, no MLIR needed):
    python3 bench/bench_fp8.py --k8 DIR8 --k90 DIR90 [--check] [--accuracy] [--bench] [--out F.json]
    python3 bench/bench_fp8.py --k8 DIR8 --k8-every DIR8E --growth
DIR8 from  fa-opt bench/kernels_fp8.mlir  '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=DIR8})'
DIR90 from fa-opt bench/kernels_sm90.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=DIR90})'
(our f16 kernels, the speed and accuracy baseline).

--check: ours fp8 against an emulation of what the kernel computes (f64, the online softmax per
  128-key block with P rounded to e4m3 as the kernel rounds it) and against the f64 reference on
  the dequantized inputs; d128/d256, causal or not, GQA, odd lengths, Nq != Nk, lse, f16/bf16 out.
  The emulation rescales as each kernel's manifest says (rescale_threshold: conditional
  rescaling moves the max of a warp's 16 rows only when one of them grows past the threshold).
--growth: scores that grow along the keys, conditional rescaling (DIR8) against the same kernels
  rescaling every step (DIR8E: rescale-threshold=-1), both against the f64 reference.
--accuracy: FlashAttention-3's protocol: Q, K, V ~ N(0, 1) with 0.1% of the entries ~ N(0, 100);
  RMSE of the output against an FP64 reference, for our f16 kernel, per-tensor FP8, and per-tensor
  FP8 after incoherent processing (Q and K times one random-sign Hadamard matrix along D).
--bench: TFLOP/s (FLOPs = 4 B H N^2 D, halved when causal; 16k tokens, hidden 2048) of ours fp8
  (kernel only, V^T given), ours f16, cudnn f16 and flash f16 in this one process; the
  quantization (per-tensor amax, scale, cast of q, k, v, V^T) timed alone and with the kernel;
  back-to-back calls through Kernel.__call__ (host path included).
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from common import load_named, peer_fns, time_back_to_back, time_ms  # noqa: E402
from fa_runtime.driver import transpose_v_fp8  # noqa: E402

E4M3_MAX = 448.0
F8 = torch.float8_e4m3fn
OUT_DT = {"f16": torch.float16, "bf16": torch.bfloat16}


def fp8_name(out, d, causal, lse=False, granularity="tensor"):
    g = "" if granularity == "tensor" else "_" + granularity
    return f"attn_fp8{g}_{out}_d{d}_{'causal' if causal else 'full'}" + ("_lse" if lse else "")


def quantize(x, granularity="tensor", block=128):
    """delta = amax / 448 per tensor ([1]), per (batch, head) ([B, H]) or per block of `block`
    rows ([B, H, ceil(N / block)]), an f32 device tensor (no host sync); x / delta rounded to
    nearest even and saturated to +-448. Returns (x8, delta)."""
    a = x.abs().float()
    # / 448 as a device tensor: torch turns a division by a Python number into a multiply by
    # its rounded reciprocal (an ulp off), the kernels and fa-quantize-fp8 divide.
    e4m3_max = torch.full((), E4M3_MAX, device=x.device)
    if granularity == "tensor":
        delta = (a.amax() / e4m3_max).clamp_min(2.0 ** -126).reshape(1)
    elif granularity == "head":
        delta = (a.amax(dim=(-1, -2)) / e4m3_max).clamp_min(2.0 ** -126)
    else:
        B, H, N, D = x.shape
        nb = -(-N // block)
        pad = torch.nn.functional.pad(a.amax(-1), (0, nb * block - N))
        delta = (pad.view(B, H, nb, block).amax(-1) / e4m3_max).clamp_min(2.0 ** -126)
    return (x.float() / rows_of(delta, x.shape, block)).clamp(-E4M3_MAX, E4M3_MAX).to(F8), delta


def rows_of(delta, shape, block=128):
    """The descale of every row, [B, H, N, 1] (broadcast for per tensor / head)."""
    B, H, N, D = shape
    if delta.dim() == 1:
        return delta.view(1, 1, 1, 1)
    if delta.dim() == 2:
        return delta.view(B, H, 1, 1)
    return delta.repeat_interleave(block, dim=-1)[..., :N].unsqueeze(-1)


def dequantize(x8, delta):
    """x8 (e4m3) times its descales, in f64."""
    return x8.double() * rows_of(delta, x8.shape).double()


def hadamard(x, signs):
    """x * signs along D, then the normalized Walsh-Hadamard transform along D (fast: log2(D)
    butterfly stages): an orthogonal map, so (Hq)(Hk)^T = q k^T."""
    d = x.shape[-1]
    y = (x.float() * signs).reshape(-1, d)
    h = 1
    while h < d:
        y = y.view(-1, d // (2 * h), 2, h)
        a, b = y[:, :, 0, :], y[:, :, 1, :]
        y = torch.stack((a + b, a - b), dim=2)
        h *= 2
    return (y.reshape(x.shape) / math.sqrt(d)).to(x.dtype)


def reference64(q, k, v, causal, scale=None):
    """f64 attention (bottom-right causal, GQA); fully masked rows 0 / lse -inf."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    qf, kf, vf = (t.double() for t in (q, k, v))
    kf, vf = kf.repeat_interleave(r, 1), vf.repeat_interleave(r, 1)
    s = qf @ kf.transpose(-1, -2) * (scale if scale else 1 / math.sqrt(D))
    if causal:
        i = torch.arange(Nq, device=q.device)[:, None]
        j = torch.arange(Nk, device=q.device)[None, :]
        s = s.masked_fill(j > i + (Nk - Nq), float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    o = (p @ vf) / torch.where(l == 0, torch.ones_like(l), l)
    return o, (m + torch.log(l)).squeeze(-1)


def warp_vote(ask, rows=16):
    """Conditional rescaling's vote: a warp holds 16 consecutive query rows (a wgmma m64 tile
    is 4 warps), and all of them move their max when any of them asks. ask: [..., Nq, 1]."""
    n = ask.shape[-2]
    a = ask[..., 0]
    pad = -n % rows
    if pad:
        a = torch.cat([a, a.new_zeros(*a.shape[:-1], pad)], -1)
    g = a.view(*a.shape[:-1], -1, rows).any(-1, keepdim=True)
    return g.expand(*g.shape[:-1], rows).reshape(a.shape)[..., :n, None]


def emulate(q8, k8, v8, qd, kd, vd, causal, block_kv=128, threshold=-1):
    """What the kernel computes, in f64: per 128-key block the running max (log2 units), P =
    exp2(t - m) rounded to e4m3 (RNE, saturating) for the P V product, f32-exact row sums.
    Descales of any granularity (quantize): the scores of (query block, key block) are scaled
    by their q and k descales, the P V product of key block j by its v descale. threshold >= 0
    (the manifest's rescale_threshold): conditional rescaling, the rows of a warp move their
    max only when one of them sees a block max above its running max + threshold (so P may
    reach 2^threshold); -1: every block moves it."""
    B, Hq, Nq, D = q8.shape
    Hkv, Nk = k8.shape[1], k8.shape[2]
    r = Hq // Hkv
    c = (1 / math.sqrt(D)) * math.log2(math.e)
    qf = dequantize(q8, qd)
    kf = dequantize(k8, kd).repeat_interleave(r, 1)
    vrow = rows_of(vd, v8.shape).double()
    vf = (v8.double() * vrow).repeat_interleave(r, 1)
    t = (qf @ kf.transpose(-1, -2)) * c
    if causal:
        i = torch.arange(Nq, device=q8.device)[:, None]
        j = torch.arange(Nk, device=q8.device)[None, :]
        t = t.masked_fill(j > i + (Nk - Nq), float("-inf"))
    m = torch.full((B, Hq, Nq, 1), float("-inf"), dtype=torch.float64, device=q8.device)
    l = torch.zeros_like(m)
    acc = torch.zeros(B, Hq, Nq, D, dtype=torch.float64, device=q8.device)
    for j0 in range(0, Nk, block_kv):
        tb = t[..., j0:j0 + block_kv]
        step = tb.amax(-1, keepdim=True)
        mn = torch.maximum(m, step)
        if threshold >= 0:
            mn = torch.where(warp_vote(step > m + threshold), mn, m)
        mu = torch.where(torch.isinf(mn), torch.zeros_like(mn), mn)
        alpha = torch.exp2(m - mu)
        p = torch.exp2(tb - mu)
        l = alpha * l + p.sum(-1, keepdim=True)
        p8 = p.float().clamp(max=E4M3_MAX).to(F8).double()
        acc = alpha * acc + p8 @ vf[..., j0:j0 + block_kv, :]
        # One e4m3 ulp of each p (2^(e-3), 2^-9 below the normals) times |v|: how far the
        # kernel may land from this emulation where its f32 p (ex2.approx, FMA) rounds to the
        # other neighbour of a p that lies near a rounding boundary.
        ulp = torch.exp2(torch.floor(torch.log2(p8.clamp(min=2.0 ** -6))) - 3)
        ulp = torch.where(p8 > 0, ulp, torch.zeros_like(ulp))
        flip = alpha * flip + ulp @ vf[..., j0:j0 + block_kv, :].abs() if j0 else \
            ulp @ vf[..., j0:j0 + block_kv, :].abs()
        m = mn
    norm = torch.where(l == 0, torch.ones_like(l), l)
    o = acc / norm
    bound = flip / norm
    return o, (m / math.log2(math.e)).squeeze(-1) + torch.log(l).squeeze(-1), bound


def run_fp8(kern, q8, k8, v8, qd, kd, vd, lse=False, v_t=None):
    """Our fp8 kernel: descales [1], [B, H] or [B, H, blocks] as its manifest asks."""
    return kern(q8, k8, v8 if v_t is None else None, q_descale=qd, k_descale=kd, v_descale=vd,
                v_t=v_t)


def check_one(k8dir, out, d, B, Hq, Hkv, Nq, Nk, causal, lse=False, granularity="tensor",
              scaled=None, perturb=None, emulate_threshold=None):
    """One case; `perturb` (a negative control) changes the descales the kernel gets (not the
    emulation's): the check must then fail. The emulation rescales as the kernel's manifest
    says (rescale_threshold) unless `emulate_threshold` overrides it (a negative control)."""
    q = torch.randn(B, Hq, Nq, d, device="cuda")
    k = torch.randn(B, Hkv, Nk, d, device="cuda")
    v = torch.randn(B, Hkv, Nk, d, device="cuda")
    if scaled if scaled is not None else granularity != "tensor":
        # Magnitudes that differ by up to 8x between heads and 128-row blocks, so that a descale
        # applied to the wrong head or block shows; q and k only shrink (larger scores would
        # measure the tensor cores' FP8 accumulation, which is not f32-exact, not our kernel).
        def blocks(x, lo, hi):
            Bx, H, N, _ = x.shape
            f = torch.exp2(torch.empty(Bx, H, -(-N // 128), device="cuda").uniform_(lo, hi))
            return x * rows_of(f, x.shape)
        q, k, v = blocks(q, -3, 0), blocks(k, -3, 0), blocks(v, -3, 3)
    (q8, qd), (k8, kd), (v8, vd) = (quantize(x, granularity) for x in (q, k, v))
    kern = load_named(k8dir, fp8_name(out, d, causal, lse, granularity))
    kq, kk, kv = (perturb(x) for x in (qd, kd, vd)) if perturb else (qd, kd, vd)
    res = run_fp8(kern, q8, k8, v8, kq, kk, kv, lse)
    o, olse = res if lse else (res, None)
    torch.cuda.synchronize()
    threshold = kern.manifest.get("rescale_threshold", -1) if emulate_threshold is None \
        else emulate_threshold
    em, _, bound = emulate(q8, k8, v8, qd, kd, vd, causal, threshold=threshold)
    ref, rlse = reference64(dequantize(q8, qd), dequantize(k8, kd), dequantize(v8, vd), causal)
    of = o.double()
    nan = bool(torch.isnan(of).any())
    diff = (of - em).abs()
    emu_err = diff.max().item()
    emu_rmse = (diff ** 2).mean().sqrt().item()
    rmse = ((of - ref) ** 2).mean().sqrt().item()
    # The emulation rounds P as the kernel does. What remains: f32 accumulation order and the
    # output's rounding (an f16 / bf16 ulp of |o|), and p values that round to the other e4m3
    # neighbour (ex2.approx and the FMA vs f64): at most `bound` per element, rare on average.
    out_ulp = 2.0 ** -10 if out == "f16" else 2.0 ** -7
    within = bool((diff <= bound + out_ulp * (em.abs() + 1) + 1e-4).all())
    # Beyond the flips, the residual is the tensor cores' accumulation of e4m3 products, which
    # is not f32-exact on Hopper (DeepSeek-V3 measured about 14 bits): 5e-4 to 1e-3 RMSE here
    # for |o| ~ 0.02-0.3, against 2e-3 to 4e-3 for the P rounding the emulation models and
    # ~|o| for a kernel that pairs P with the wrong keys.
    # Relative to v's magnitude (the scaled cases multiply v by up to 8).
    rmse_tol = (2e-3 if out == "f16" else 3e-3) * max(1.0, (v.float() ** 2).mean().sqrt().item())
    ok = not nan and within and emu_rmse <= rmse_tol
    tol = rmse_tol
    row = dict(out=out, d=d, causal=causal, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk,
               granularity=granularity, rescale_threshold=threshold,
               emu_max_err=emu_err, emu_rmse=emu_rmse, rmse_tol=tol, within_flip_bound=within,
               rmse_vs_dequant_ref=rmse, nan=nan)
    msg = ""
    if lse:
        fin = torch.isfinite(rlse)
        lerr = (olse.double()[fin] - rlse[fin]).abs().max().item() if bool(fin.any()) else 0.0
        inf_ok = bool(torch.all(torch.isneginf(olse[~fin])).item())
        # |lse error| <= the largest score error, and a score's error is the tensor cores'
        # accumulation of e4m3 products (about 14 bits kept, DeepSeek-V3): bounded here by
        # 2^-12 of the scaled sum of |products|, which grows with D (d256 measured 1.5e-3).
        qa = dequantize(q8, qd).abs()
        ka = dequantize(k8, kd).abs()
        abs_dot = (qa @ ka.repeat_interleave(Hq // Hkv, 1).transpose(-1, -2)).amax().item()
        ltol = max(1e-3, 2.0 ** -12 * abs_dot / math.sqrt(d))
        ok = ok and lerr <= ltol and inf_ok
        row.update(lse_err=lerr, lse_tol=ltol, masked_rows_inf=inf_ok)
        msg = f" lse err {lerr:.2e} (tol {ltol:.1e}) masked -inf {inf_ok}"
    row["ok"] = ok
    print(f"check fp8->{out} {granularity} d{d} causal={causal}{' lse' if lse else ''} "
          f"t={threshold} B{B} "
          f"Hq{Hq} Hkv{Hkv} "
          f"Nq{Nq} Nk{Nk}: vs emulation RMSE {emu_rmse:.2e} (tol {tol:.0e}) max {emu_err:.2e} "
          f"within bound {within}, RMSE vs dequantized f64 "
          f"{rmse:.2e}{msg} {'OK' if ok else 'FAIL'}", flush=True)
    return row


def check(k8dir, dims=(64, 128, 256)):
    torch.manual_seed(0)
    rows = []
    shapes = ((2, 8, 2, 1000, 1000), (1, 4, 4, 77, 333), (2, 6, 3, 333, 77), (1, 2, 1, 1, 1),
              (3, 4, 1, 129, 200), (1, 2, 2, 255, 257), (2, 16, 16, 2048, 2048))
    for d in dims:
        for causal in (False, True):
            for sh in shapes:
                rows.append(check_one(k8dir, "f16", d, *sh, causal))
            rows.append(check_one(k8dir, "bf16", d, 2, 4, 2, 1000, 1000, causal))
            rows.append(check_one(k8dir, "f16", d, 2, 4, 2, 300, 517, causal, lse=True))
            rows.append(check_one(k8dir, "f16", d, 2, 4, 2, 517, 300, causal, lse=True))
            for g in ("head", "block"):
                for sh in ((2, 8, 2, 1000, 1000), (1, 4, 4, 77, 333), (2, 6, 3, 333, 77),
                           (1, 2, 2, 255, 257), (1, 4, 1, 2048, 2048)):
                    rows.append(check_one(k8dir, "f16", d, *sh, causal, granularity=g))
                rows.append(check_one(k8dir, "f16", d, 2, 4, 2, 517, 300, causal, lse=True,
                                      granularity=g))
    # Negative controls: descales of the next head / block (rolled) must fail the check.
    for g, dim in (("head", -1), ("block", -1), ("head", 0)):
        r = check_one(k8dir, "f16", dims[0], 2, 8, 2, 1000, 1000, False, granularity=g,
                      perturb=lambda x, dim=dim: x.roll(1, dims=dim).contiguous())
        r["negative_control"] = True
        r["ok"] = not r["ok"]
        print(f"  negative control ({g}, rolled along {dim}): "
              f"{'caught' if r['ok'] else 'NOT CAUGHT'}", flush=True)
        rows.append(r)
    # Negative control of the emulation itself: where the kernel rescales conditionally, an
    # emulation that rescales every block must be measurably farther from it (P rounded to
    # e4m3 at other scales) than the emulation that follows the warps' votes.
    d = next((x for x in (128, 256, 64) if x in dims), dims[0])
    if load_named(k8dir, fp8_name("f16", d, False)).manifest.get("rescale_threshold", -1) >= 0:
        follows = next(r for r in rows if r["d"] == d and not r["causal"] and r["Nq"] == 1000
                       and r["granularity"] == "tensor" and r["out"] == "f16")
        r = check_one(k8dir, "f16", d, 2, 8, 2, 1000, 1000, False, emulate_threshold=-1)
        r["negative_control_emulation"] = True
        r["ok"] = r["emu_rmse"] > 3 * follows["emu_rmse"]
        print(f"  emulation control: every-step emulation RMSE {r['emu_rmse']:.2e} against "
              f"{follows['emu_rmse']:.2e} following the votes: "
              f"{'caught' if r['ok'] else 'NOT CAUGHT'}", flush=True)
        rows.append(r)
    return rows


def growth(k8dir, k0dir, dims=(128, 256)):
    """Conditional rescaling where the running max rises often and far (key j scaled by
    1 + 6 j / Nk before quantization): the kernels of k8dir against the same kernels built
    to rescale every step (k0dir), on the same inputs, both against the f64 reference on the
    dequantized inputs. Large scores put the tensor cores' fp8 accumulation in the error (the
    emulation does not model it), so the check is relative: RMSE at most 1.25x the
    every-step kernel's, lse within the same tolerance."""
    torch.manual_seed(1)
    rows = []
    for d in dims:
        for causal in (False, True):
            for g, (B, Hq, Hkv, Nq, Nk), lse in (("tensor", (1, 4, 2, 1000, 3000), False),
                                                  ("head", (1, 4, 2, 1000, 3000), False),
                                                  ("tensor", (2, 4, 2, 300, 2000), True)):
                name = fp8_name("f16", d, causal, lse, g)
                k8, k0 = load_named(k8dir, name), load_named(k0dir, name)
                t8 = k8.manifest.get("rescale_threshold", -1)
                t0 = k0.manifest.get("rescale_threshold", -1)
                if t0 != -1 or t8 == -1:
                    # Two every-step builds (the default) would compare a kernel with itself.
                    raise SystemExit(f"--growth: {name}: --k8 must rescale conditionally and "
                                     f"--k8-every every step (rescale_threshold {t8} and {t0}); "
                                     f"build --k8 with fa-to-ptx{{rescale-threshold=8}}")
                q = torch.randn(B, Hq, Nq, d, device="cuda")
                k = torch.randn(B, Hkv, Nk, d, device="cuda")
                k = k * (1 + 6.0 * torch.arange(Nk, device="cuda") / Nk)[:, None]
                v = torch.randn(B, Hkv, Nk, d, device="cuda")
                (q8, qd), (k8_, kd), (v8, vd) = (quantize(x, g) for x in (q, k, v))
                ref, rlse = reference64(dequantize(q8, qd), dequantize(k8_, kd),
                                        dequantize(v8, vd), causal)
                err = {}
                for tag, kern in (("t", k8), ("every", k0)):
                    res = run_fp8(kern, q8, k8_, v8, qd, kd, vd, lse)
                    o, ol = res if lse else (res, None)
                    of = o.double()
                    err[tag] = ((of - ref) ** 2).mean().sqrt().item()
                    if lse:
                        fin = torch.isfinite(rlse)
                        err[tag + "_lse"] = (ol.double()[fin] - rlse[fin]).abs().max().item()
                    err[tag + "_nan"] = bool(torch.isnan(of).any())
                ok = (not err["t_nan"] and err["t"] <= 1.25 * err["every"] + 1e-4 and
                      (not lse or err["t_lse"] <= 1.25 * err["every_lse"] + 1e-3))
                row = dict(d=d, causal=causal, granularity=g, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk,
                           lse=lse, rescale_threshold=t8, rmse=err["t"],
                           rmse_every_step=err["every"], ok=ok,
                           **({"lse_err": err["t_lse"], "lse_err_every_step": err["every_lse"]}
                              if lse else {}))
                rows.append(row)
                print(f"growth {name} t={t8}: RMSE vs f64 {err['t']:.2e}, every step "
                      f"{err['every']:.2e} ({err['t'] / err['every']:.2f}x)"
                      + (f", lse err {err['t_lse']:.1e} / {err['every_lse']:.1e}" if lse else "")
                      + f" {'OK' if ok else 'FAIL'}", flush=True)
    return rows


def accuracy(k8dir, k90dir):
    """FA3's protocol (B 1? they do not say; here B 2, H 16, N 4096, D 128, not causal)."""
    torch.manual_seed(0)
    B, H, N, D = 2, 16, 4096, 128

    def outlier(shape):
        x = torch.randn(shape, device="cuda")
        mask = torch.rand(shape, device="cuda") < 1e-3
        return torch.where(mask, torch.randn(shape, device="cuda") * 10.0, x)

    q, k, v = (outlier((B, H, N, D)) for _ in range(3))
    ref, _ = reference64(q, k, v, False)
    rows = {}
    f16 = load_named(k90dir, "attn_f16_d128_full")
    o = f16(q.half(), k.half(), v.half())
    rows["ours f16"] = ((o.double() - ref) ** 2).mean().sqrt().item()
    kern = load_named(k8dir, fp8_name("f16", D, False))
    (q8, qd), (k8, kd), (v8, vd) = quantize(q), quantize(k), quantize(v)
    o = run_fp8(kern, q8, k8, v8, qd, kd, vd)
    rows["ours fp8 per-tensor"] = ((o.double() - ref) ** 2).mean().sqrt().item()
    signs = torch.randint(0, 2, (D,), device="cuda").float() * 2 - 1
    qh, kh = hadamard(q, signs), hadamard(k, signs)
    (q8, qd), (k8, kd) = quantize(qh), quantize(kh)
    o = run_fp8(kern, q8, k8, v8, qd, kd, vd)
    rows["ours fp8 per-tensor + incoherent"] = ((o.double() - ref) ** 2).mean().sqrt().item()
    for g in ("head", "block"):
        kern = load_named(k8dir, fp8_name("f16", D, False, granularity=g))
        for inc in (False, True):
            (q8, qd), (k8, kd), (v8, vd) = (quantize(x, g) for x in
                                            ((qh, kh, v) if inc else (q, k, v)))
            o = run_fp8(kern, q8, k8, v8, qd, kd, vd)
            rows[f"ours fp8 per-{g}" + (" + incoherent" if inc else "")] = \
                ((o.double() - ref) ** 2).mean().sqrt().item()
    for name, e in rows.items():
        print(f"accuracy {name}: RMSE {e:.2e}", flush=True)
    return rows


def bench(k8dir, k90dir, seqlens, iters, dims):
    rows = []
    for d in dims:
        for causal in (False, True):
            for n in seqlens:
                B, H = 16384 // n, 2048 // d
                flops = 4 * B * H * n * n * d / (2 if causal else 1)
                q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16)
                           for _ in range(3))
                kern = load_named(k8dir, fp8_name("f16", d, causal))
                (q8, qd), (k8, kd), (v8, vd) = quantize(q), quantize(k), quantize(v)
                v_t = transpose_v_fp8(v8, kern.manifest["v_key_order"])

                def quant():
                    a, b, c = quantize(q), quantize(k), quantize(v)
                    return transpose_v_fp8(c[0], kern.manifest["v_key_order"])

                kb = load_named(k8dir, fp8_name("f16", d, causal, granularity="block"))
                (qb8, qbd), (kb8, kbd), (vb8, vbd) = (quantize(x, "block") for x in (q, k, v))
                vb_t = transpose_v_fp8(vb8, kb.manifest["v_key_order"])
                fns = {"fp8": lambda: run_fp8(kern, q8, k8, None, qd, kd, vd, v_t=v_t),
                       "fp8_block": lambda: run_fp8(kb, qb8, kb8, None, qbd, kbd, vbd, v_t=vb_t),
                       "fp8+vT": lambda: run_fp8(kern, q8, k8, v8, qd, kd, vd),
                       "quant": quant,
                       "fp8+quant": lambda: (quant(), run_fp8(kern, q8, k8, None, qd, kd, vd,
                                                              v_t=v_t))}
                f16name = f"attn_f16_d{d}_{'causal' if causal else 'full'}"
                if k90dir and os.path.exists(os.path.join(k90dir, f16name + "_kernel.json")):
                    f16 = load_named(k90dir, f16name)
                    fns["ours_f16"] = lambda: f16(q, k, v)
                fns.update(peer_fns(q, k, v, causal))
                row = dict(d=d, causal=causal, seqlen=n, B=B, H=H)
                for name, fn in fns.items():
                    ms = time_ms(fn, iters)
                    row[name + "_ms"] = ms
                    row[name + "_tflops"] = flops / ms / 1e9
                row["fp8_b2b_ms"] = time_back_to_back(fns["fp8"])
                row["fp8_b2b_tflops"] = flops / row["fp8_b2b_ms"] / 1e9
                for name in ("ours_f16", "cudnn", "flash"):
                    if name + "_ms" in row:
                        row["fp8_vs_" + name] = row[name + "_ms"] / row["fp8_ms"]
                print(f"bench d{d} causal={causal} N{n}: " + " ".join(
                    f"{k_[:-7]} {v_:.0f}" for k_, v_ in row.items() if k_.endswith("_tflops"))
                    + " TFLOP/s; fp8 / ours f16 {:.2f}x, / cudnn {:.2f}x".format(
                        row.get("fp8_vs_ours_f16", float("nan")), row.get("fp8_vs_cudnn",
                                                                          float("nan"))),
                    flush=True)
                rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k8", required=True)
    ap.add_argument("--k90")
    ap.add_argument("--k8-every", help="the fp8 kernels built with rescale-threshold=-1: "
                    "--growth compares the kernels of --k8 with them")
    ap.add_argument("--growth", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--accuracy", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out")
    a = ap.parse_args()
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    if a.check:
        res["check"] = check(a.k8, [int(x) for x in a.dims.split(",")])
        for r in res["check"]:
            if not r["ok"]:
                print("FAILED:", r, flush=True)
        bad = [r for r in res["check"] if not r["ok"]]
        print(f"check: {len(res['check']) - len(bad)}/{len(res['check'])} OK", flush=True)
    if a.growth:
        res["growth"] = growth(a.k8, a.k8_every)
        print(f"growth: {sum(r['ok'] for r in res['growth'])}/{len(res['growth'])} OK",
              flush=True)
    if a.accuracy:
        res["accuracy"] = accuracy(a.k8, a.k90)
    if a.bench:
        res["bench"] = bench(a.k8, a.k90, [int(x) for x in a.seqlens.split(",")], a.iters,
                             [int(x) for x in a.dims.split(",")])
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
