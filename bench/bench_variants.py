"""Issue 16 on the H200: attention variants compiled into our kernels (softcap, mask operands,
score_mod / mask_mod regions; bench/kernels_variants.mlir, bf16, head dim 128).

--check: each kernel (sm_90a and sm_80 PTX) against an f32 reference that applies the variant
         in fa.attention's order (scale, softcap, additive mask, score_mod, boolean mask /
         mask_mod / causal -> -inf), on shapes with tails, GQA and Nq != Nk; plus negative
         controls (a kernel checked against the wrong variant must fail).
--bench: B=1, H=16, N=16k, causal and not: TFLOP/s of visible work (4 * D * visible (i, j)
         pairs per head) of each variant against our plain kernel, FlexAttention
         (torch.compile(flex_attention) with the same score_mod / block mask) and cudnn's plain
         kernel; kernel-only (host path hidden) and back-to-back through the public API.

  python bench/bench_variants.py --k90 DIR --k80 DIR --check --bench --out PREFIX
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DT = torch.bfloat16
D = 128
TOL = 3e-2  # bf16 output, |o| ~ 1 (common.TOL)
PREFIX = 2048
WINDOW = 1024
NDOC = 16384  # the captured document-id tensor's static length


def doc_ids(n=NDOC, lengths=(3000, 5000, 4000, 4384)):
    """4 documents packed into one sequence of NDOC tokens."""
    ids = torch.cat([torch.full((m,), d, dtype=torch.int32) for d, m in enumerate(lengths)])
    return ids[:n].to("cuda")


DOCS = None


def docs():
    global DOCS
    if DOCS is None:
        DOCS = doc_ids()
    return DOCS


TABLE = None


def bias_table():
    """tablebias's captured per-key bias (NDOC values ~ N(0, 4))."""
    global TABLE
    if TABLE is None:
        g = torch.Generator(device="cuda")
        g.manual_seed(7)
        TABLE = torch.randn(NDOC, generator=g, device="cuda") * 2
    return TABLE


def alibi_slope(h):
    return torch.exp2(-0.5 * (h + 1).float())


# name -> what the variant is: causal, softcap, score_mod(s, b, h, i, j), mask_mod(b, h, i, j)
# (torch functions on broadcast index grids, also used as FlexAttention's modifiers), extra
# kernel tensors.
VARIANTS = {}
for c in ("full", "causal"):
    causal = c == "causal"
    VARIANTS[f"plain_{c}"] = dict(causal=causal)
    VARIANTS[f"softcap_{c}"] = dict(causal=causal, softcap=30.0)
    VARIANTS[f"softcapmod_{c}"] = dict(
        causal=causal, score_mod=lambda s, b, h, i, j: 30.0 * torch.tanh(s / 30.0))
    VARIANTS[f"alibi_{c}"] = dict(
        causal=causal, score_mod=lambda s, b, h, i, j: s + alibi_slope(h) * (j - i))
    # A reversed, doubled ALiBi through the other forms a kernel keeps per row (the key
    # distance's sums and differences with constants, an fma with a constant addend, a
    # negation, a difference with the score).
    VARIANTS[f"relpos_{c}"] = dict(
        causal=causal,
        score_mod=lambda s, b, h, i, j: s + (-2 * alibi_slope(h) * (j - i + 0.25) + 1.5))
    VARIANTS[f"doc_{c}"] = dict(causal=causal,
                                mask_mod=lambda b, h, i, j: docs()[i] == docs()[j],
                                inputs=lambda B, H, Nq, Nk: {"arg3": docs()})
VARIANTS["prefixlm"] = dict(causal=False, mask_mod=lambda b, h, i, j: (j < PREFIX) | (j <= i))
VARIANTS["windowmod"] = dict(causal=False,
                             mask_mod=lambda b, h, i, j: (j <= i) & (i - j <= WINDOW))
VARIANTS["window"] = dict(causal=False, window=(WINDOW, 0))
# Check-only (not in --bench's table): the other forms of sm_90a's split bias, a bias of the
# row alone (large: it cancels in the softmax) and one read from a captured table per key.
VARIANTS["rowbias_causal"] = dict(causal=True, check_only=True,
                                  score_mod=lambda s, b, h, i, j: s + 0.5 * i)
VARIANTS["tablebias_causal"] = dict(causal=True, check_only=True,
                                    score_mod=lambda s, b, h, i, j: s + bias_table()[j],
                                    inputs=lambda B, H, Nq, Nk: {"arg3": bias_table()})
VARIANTS["alibilse_full"] = dict(causal=False, check_only=True, lse=True,
                                 score_mod=VARIANTS["alibi_full"]["score_mod"])
VARIANTS["addmask_full"] = dict(causal=False, additive=True)
VARIANTS["boolmask_causal"] = dict(causal=True, boolean=True)


def masks_for(var, B, H, Nq, Nk, gen):
    """The mask operand tensors of a variant (random, fixed by `gen`)."""
    if var.get("additive"):
        return {"mask": (torch.randn(1, 1, Nq, Nk, generator=gen, device="cuda") * 2).to(DT)}
    if var.get("boolean"):
        return {"mask": torch.rand(B, 1, Nq, Nk, generator=gen, device="cuda") < 0.7}
    return {}


def masked_scores(q, k, v, var, tensors, scale=None):
    """The scores in f32 after the variant's modifiers in fa.attention's order (scale,
    softcap, additive mask, score_mod, then -inf where the boolean mask, mask_mod or the
    causal/window band hides a key), and v repeated over the query heads. Differentiable."""
    B, H, Nq, d = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    kf = k.float().repeat_interleave(H // Hkv, dim=1)
    vf = v.float().repeat_interleave(H // Hkv, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) * (scale or 1 / math.sqrt(d))
    b = torch.arange(B, device="cuda")[:, None, None, None]
    h = torch.arange(H, device="cuda")[None, :, None, None]
    i = torch.arange(Nq, device="cuda")[:, None]
    j = torch.arange(Nk, device="cuda")[None, :]
    if var.get("softcap"):
        s = var["softcap"] * torch.tanh(s / var["softcap"])
    if var.get("additive"):
        s = s + tensors["mask"].float()
    if var.get("score_mod"):
        s = var["score_mod"](s, b, h, i, j)
    keep = torch.ones_like(s, dtype=torch.bool)
    if var.get("boolean"):
        keep = keep & tensors["mask"]
    if var.get("mask_mod"):
        keep = keep & var["mask_mod"](b, h, i, j)
    dist = j - (i + (Nk - Nq))
    if var.get("causal"):
        keep = keep & (dist <= 0)
    if var.get("window"):
        left, right = var["window"]
        keep = keep & (dist >= -left) & (dist <= right)
    return s.masked_fill(~keep, float("-inf")), vf


def reference(q, k, v, var, tensors):
    """f32 attention with the variant's modifiers in fa.attention's order."""
    s, vf = masked_scores(q, k, v, var, tensors)
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    return torch.matmul(p, vf) / torch.where(l == 0, torch.ones_like(l), l)


def run(kern, q, k, v, tensors):
    return kern(q, k, v, **tensors)


# Small odd shapes for compute-sanitizer (--sanitize): tails, Nq != Nk both ways, GQA, one row.
SANITIZE_SHAPES = [(1, 2, 1, 77, 333), (1, 2, 2, 129, 200), (1, 4, 2, 333, 77), (1, 2, 1, 1, 1)]

CHECK_SHAPES = [  # B, Hq, Hkv, Nq, Nk
    (2, 8, 2, 1000, 1000),
    (1, 4, 4, 384, 1024),
    (1, 2, 1, 2304, 2304),
    (1, 2, 2, 4096, 4096),
]


def check(kdir, chip, rows, shapes=None, controls=True):
    gen = torch.Generator(device="cuda")
    for name, var in VARIANTS.items():
        if not common.has_kernel(kdir, "var_" + name):
            print(f"{chip} {name}: no kernel", flush=True)
            continue
        kern = common.load_named(kdir, "var_" + name)
        for (B, Hq, Hkv, Nq, Nk) in shapes or CHECK_SHAPES:
            if Nq != Nk and (var.get("mask_mod") or var.get("window")):
                pass  # absolute positions: still well defined
            gen.manual_seed(B * 1000 + Nq)
            q = torch.randn(B, Hq, Nq, D, device="cuda", dtype=DT, generator=gen)
            if "softcap" in name:
                q = q * 8  # scores of std 8: tanh(s / 30) far from linear
            k = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=DT, generator=gen)
            v = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=DT, generator=gen)
            tensors = masks_for(var, B, Hq, Nq, Nk, gen)
            if var.get("inputs"):
                tensors.update(var["inputs"](B, Hq, Nq, Nk))
            o = run(kern, q, k, v, tensors)
            lse = None
            if var.get("lse"):
                o, lse = o
            torch.cuda.synchronize()
            ref = reference(q, k, v, var, tensors)
            err = (o.float() - ref).abs().max().item()
            ok = err <= TOL and not math.isnan(err) and bool(torch.isfinite(o).all())
            row = dict(kind="check", chip=chip, variant=name, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq,
                       Nk=Nk, max_abs_err=err)
            if lse is not None:
                # The natural-log lse against the f32 scores' (biases up to slope * N: a
                # tolerance relative to its size beside the absolute one).
                ref_lse = torch.logsumexp(masked_scores(q, k, v, var, tensors)[0], -1)
                lse_err = ((lse.float() - ref_lse).abs() / (TOL + 1e-5 * ref_lse.abs())).max().item()
                row["lse_err_over_tol"] = lse_err
                ok = ok and lse_err <= 1 and not math.isnan(lse_err)
            row["ok"] = ok
            rows.append(row)
            print(f"check {chip} {name} B{B} Hq{Hq} Hkv{Hkv} Nq{Nq} Nk{Nk}: err {err:.2e} "
                  + (f"lse err/tol {row['lse_err_over_tol']:.2e} " if lse is not None else "")
                  + f"{'OK' if ok else 'FAIL'}", flush=True)
    # Negative controls: the check must catch a kernel that computes another variant.
    for name, wrong in () if not controls else (("alibi_causal", "plain_causal"), ("prefixlm", "plain_causal"),
                        ("doc_full", "plain_full"), ("softcapmod_full", "plain_full"),
                        ("relpos_full", "alibi_full")):
        if not common.has_kernel(kdir, "var_" + name) or name not in VARIANTS \
                or wrong not in VARIANTS:
            continue
        # 4096 rows span two documents; softcap needs large scores to act.
        B, Hq, Hkv, Nq, Nk = CHECK_SHAPES[3]
        q = torch.randn(B, Hq, Nq, D, device="cuda", dtype=DT) * (8 if "softcap" in name else 1)
        k = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=DT)
        v = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=DT)
        tensors = {}
        if VARIANTS[name].get("inputs"):
            tensors.update(VARIANTS[name]["inputs"](B, Hq, Nq, Nk))
        o = run(common.load_named(kdir, "var_" + name), q, k, v, tensors)
        err = (o.float() - reference(q, k, v, VARIANTS[wrong], {})).abs().max().item()
        caught = err > TOL
        rows.append(dict(kind="negative_control", chip=chip, variant=name, against=wrong,
                         max_abs_err=err, caught=caught))
        print(f"negative control {chip} {name} vs {wrong}: err {err:.2e} "
              f"{'caught' if caught else 'NOT CAUGHT'}", flush=True)


def visible_pairs(var, Nq, Nk, H):
    """Visible (i, j) pairs summed over heads (the FLOP convention's work)."""
    total = 0
    i = torch.arange(Nq, device="cuda")[:, None]
    j = torch.arange(Nk, device="cuda")[None, :]
    for hh in range(H if var.get("mask_mod") else 1):
        keep = torch.ones(Nq, Nk, dtype=torch.bool, device="cuda")
        dist = j - (i + (Nk - Nq))
        if var.get("causal"):
            keep &= dist <= 0
        if var.get("window"):
            keep &= (dist >= -var["window"][0]) & (dist <= var["window"][1])
        if var.get("mask_mod"):
            keep &= var["mask_mod"](None, torch.tensor(hh), i, j)
        total += int(keep.sum().item())
    return total if var.get("mask_mod") else total * H


def flex_fns(q, k, v, var):
    """FlexAttention with the variant's modifiers (None where it cannot express it)."""
    try:
        from torch.nn.attention.flex_attention import flex_attention, create_block_mask
    except Exception as e:
        print(f"  flex unavailable: {e}", flush=True)
        return None
    if var.get("additive") or var.get("boolean"):
        return None
    # One compiled flex_attention, recompiled per variant (each its own modifiers): lift
    # dynamo's recompile limit so that no variant falls back to the unfused path.
    torch._dynamo.config.recompile_limit = 64
    torch._dynamo.config.cache_size_limit = 64
    flex = flex_fns.compiled = getattr(flex_fns, "compiled", None) or torch.compile(flex_attention)
    N = q.shape[2]
    conds = []
    if var.get("causal"):
        conds.append(lambda b, h, i, j: i >= j)
    if var.get("window"):
        conds.append(lambda b, h, i, j: (i >= j) & (i - j <= var["window"][0]))
    if var.get("mask_mod"):
        conds.append(var["mask_mod"])
    mask_mod = None
    if conds:
        def mask_mod(b, h, i, j):
            keep = conds[0](b, h, i, j)
            for c in conds[1:]:
                keep = keep & c(b, h, i, j)
            return keep
    score_mod = None
    if var.get("softcap"):
        cap = var["softcap"]
        score_mod = lambda s, b, h, i, j: cap * torch.tanh(s / cap)  # noqa: E731
    elif var.get("score_mod"):
        sm = var["score_mod"]
        score_mod = lambda s, b, h, i, j: sm(s, b, h, i, j)  # noqa: E731
    block_mask = create_block_mask(mask_mod, None, None, N, N, device="cuda") if mask_mod else None
    return lambda: flex(q, k, v, score_mod=score_mod, block_mask=block_mask)


def bench(k90, rows, save, N=16384, H=16, iters=7, alts=()):
    B = 1
    q = torch.randn(B, H, N, D, device="cuda", dtype=DT)
    k = torch.randn(B, H, N, D, device="cuda", dtype=DT)
    v = torch.randn(B, H, N, D, device="cuda", dtype=DT)
    plain = {c: common.load_named(k90, f"var_plain_{c}") for c in ("full", "causal")}
    peers = {c: common.peer_fns(q, k, v, c == "causal").get("cudnn") for c in ("full", "causal")}
    cudnn = {c: common.time_ms(peers[c], iters) if peers[c] else float("nan")
             for c in ("full", "causal")}
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    for name, var in VARIANTS.items():
        if name.startswith("plain") or not common.has_kernel(k90, "var_" + name):
            continue
        if var.get("additive") or var.get("boolean") or var.get("check_only"):
            continue  # an N x N mask tensor, or a check-only variant
        kern = common.load_named(k90, "var_" + name)
        tensors = var["inputs"](B, H, N, N) if var.get("inputs") else {}
        ours = lambda: kern(q, k, v, **tensors)  # noqa: E731
        plain_c = "causal" if var.get("causal") else "full"
        # Our plain kernel and other builds of the same kernel (--alt) are
        # timed round-robin with ours (timed one after another, identical
        # kernels differed by up to 9%: bench/results/variants_h200_2026-12-04_s28).
        alt_fns = {alt_name: (lambda ak: lambda: ak(q, k, v, **tensors))(
                       common.load_named(alt_dir, "var_" + name))
                   for alt_name, alt_dir in alts
                   if common.has_kernel(alt_dir, "var_" + name)}
        times = common.time_interleaved(
            {"": ours, "plain": lambda c=plain_c: plain[c](q, k, v),
             **{"alt " + a: fn for a, fn in alt_fns.items()}}, max(iters, 15))
        t, t_plain = times.pop(""), times.pop("plain")
        t_b2b = common.time_back_to_back(ours)
        pairs = visible_pairs(var, N, N, H)
        flops = 4 * D * pairs * B
        alt_rows = {alt_name[4:]: dict(ms=ta, tflops=flops / ta / 1e9, vs_main=t / ta)
                    for alt_name, ta in times.items()}
        # Our plain kernel's rate on its own visible work (causal: half the pairs).
        plain_pairs = visible_pairs(VARIANTS[f"plain_{plain_c}"], N, N, H)
        plain_tflops = 4 * D * plain_pairs * B / t_plain / 1e9
        row = dict(kind="bench", variant=name, N=N, H=H, B=B, visible_fraction=pairs / (H * N * N),
                   ours_ms=t, ours_b2b_ms=t_b2b, ours_tflops=flops / t / 1e9,
                   plain_tflops=plain_tflops, vs_plain=flops / t / 1e9 / plain_tflops)
        if alt_rows:
            row["alts"] = alt_rows
        cd = cudnn[plain_c]
        row["cudnn_plain_tflops"] = 4 * D * plain_pairs * B / cd / 1e9 if cd == cd else None
        f = flex_fns(q, k, v, var) if not name.startswith("softcapmod") else None
        if f is not None:
            try:
                tf = common.time_ms(f, iters)
                row.update(flex_ms=tf, flex_tflops=flops / tf / 1e9, vs_flex=tf / t)
            except Exception as e:
                print(f"  flex {name} failed: {e}", flush=True)
        rows.append(row)
        save()
        print(f"bench {name}: ours {row['ours_tflops']:.0f} TFLOP/s ({t:.3f} ms, b2b "
              f"{t_b2b:.3f} ms), {row['vs_plain']:.2f}x plain"
              + (f", flex {row['flex_tflops']:.0f} -> {row['vs_flex']:.2f}x" if 'vs_flex' in row
                 else ""), flush=True)
        for alt_name, a in alt_rows.items():
            print(f"  alt {alt_name}: {a['tflops']:.0f} TFLOP/s ({a['ms']:.3f} ms), "
                  f"{a['vs_main']:.2f}x the main build", flush=True)
    if common.has_kernel(k90, "var_window") and common.has_kernel(k90, "var_windowmod"):
        w = [r for r in rows if r.get("kind") == "bench" and r["variant"] in ("window", "windowmod")]
        if len(w) == 2:
            a, b = sorted(w, key=lambda r: r["variant"])
            rows.append(dict(kind="window_vs_windowmod", builtin_ms=a["ours_ms"],
                             maskmod_ms=b["ours_ms"], ratio=b["ours_ms"] / a["ours_ms"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k90")
    ap.add_argument("--k80")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--sanitize", action="store_true",
                    help="each kernel once per small odd shape (under compute-sanitizer)")
    ap.add_argument("--out", default="variants")
    ap.add_argument("--alt", default="",
                    help="comma-separated NAME=DIR: other builds of the kernels, timed "
                         "round-robin with --k90's in the same process (rows' 'alts')")
    ap.add_argument("--only", default="",
                    help="comma-separated name prefixes: only those variants (and plain_*)")
    a = ap.parse_args()
    if a.only:
        keep = tuple(a.only.split(",")) + ("plain_",)
        for name in [n for n in VARIANTS if not n.startswith(keep)]:
            del VARIANTS[name]
    rows = []
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    if a.sanitize:
        for kdir, chip in ((a.k90, "sm_90a"), (a.k80, "sm_80")):
            if kdir:
                check(kdir, chip, rows, SANITIZE_SHAPES, controls=False)
    if a.check:
        if a.k90:
            check(a.k90, "sm_90a", rows)
        if a.k80:
            check(a.k80, "sm_80", rows)
    def save():
        with open(a.out + ".json", "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           rows=rows), f, indent=1)
    save()
    if a.bench and a.k90:
        alts = [tuple(x.split("=", 1)) for x in a.alt.split(",") if x]
        bench(a.k90, rows, save, alts=alts)
    save()
    bad = [r for r in rows if r.get("ok") is False or r.get("caught") is False]
    print(f"{len(bad)} failures", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
