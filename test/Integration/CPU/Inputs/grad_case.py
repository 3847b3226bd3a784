#!/usr/bin/env python3
"""Emit and check one fa.attention_grad case executed on the CPU.

    grad_case.py emit  <case options>             > case.mlir
    grad_case.py check <case options> runner.out

`emit` writes a module whose @main holds deterministic random q, k, v, dO (rounded
to the input type), the forward's out and lse computed here in float64 from the
documented semantics of fa.attention (out rounded to the input type, lse to f32),
calls fa.attention_grad once and prints dq, dk, dv (extended to f32) with
printMemrefF32. `check` rebuilds the same inputs and compares with an
independent float64 reference:

  * default: the analytic backward written in numpy (P = exp(s - lse) from the
    given lse, dV = P^T dO, dP = dO V^T, delta = rowsum(dO * O) with the given O,
    dS = P (dP - delta) dt (1 - tanh^2 with softcap), dQ = scale dS K,
    dK = scale dS^T Q, GQA gradients summed over each group; dt = d t / d s of
    the score_mod, written here by hand: 1 for the biases, 1 - tanh^2(s / c)
    for the softcap one);
  * --fd: central finite differences (fourth order, h = 1e-3) of the float64
    forward loss sum(dO * attention(q, k, v)), one per input element (tiny
    cases); the analytic reference must agree with them too, so the two
    references check each other.

Tolerance, per element of dq, dk, dv (u = 2^-24):
    |got - ref| <= (u_out + PRINT) |ref| + a_out + u * C * mag
where mag is the same gradient computed with absolute values (|dO|, |V|, |O|,
|Q|, |K| and P, the softcap derivative taken as 1): every f32 product and sum
on the way has a relative error of at most (its length) u, and P a relative
error of at most (3 (D + 2) Smax + 64) u (the forward checker's bound for one
logit, Smax the row's largest |score| before the cap); C = 3 (D + 2) Smax + 4
(D + Dv + Nq + Nk) + 64 adds those up. u_out, a_out are the rounding of the
result type (f32: 2^-24, f16: 2^-11, bf16: 2^-8), PRINT = 1e-5 (6 printed
digits). With --fd the finite differences add 1e-8 (1 + |ref|) (their
truncation error is ~1e-12; the given O and lse are f32 roundings of the exact
values, covered by C). A NaN anywhere fails; rows whose keys are all masked must
give dq = 0 exactly.

--mask bool|additive adds the forward's mask operand ([Bm, Hm, Nm, Nk], each dim
the full size or 1: --mask-dims; --pad-lens L_0,... a boolean key-padding mask,
keys j < L_b visible), added after the softcap (additive, f32) or hiding keys
where false (bool); it gets no gradient.

--score-mod / --mask-mod add the modifier regions of sdpa_case.py (MODS there:
alibi, alibi-arith, softcap, relpos; prefix, document) to the op, the same text
as the forward's, and to the float64 forward and reference. The op gets no
score_mod_grad (fa-to-cpu runs fa-differentiate-score-mod), except with
--custom-grad: a hand-written score_mod_grad that yields dt = 1 (right for the
biases, wrong for --score-mod softcap: the checker must then fail).
"""

import argparse
import copy
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdpa_case import ROUND, fmt, dense, ttype, parse_output, f32  # noqa: E402
from sdpa_case import apply_mods, mod_regions  # noqa: E402

U32 = 2.0 ** -24
PRINT_REL = 1e-5
OUT_UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
OUT_ABS = {"f32": 2.0 ** -150, "f16": 2.0 ** -25, "bf16": 2.0 ** -134}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["emit", "check"])
    p.add_argument("--B", type=int, default=1)
    p.add_argument("--Hq", type=int, default=1)
    p.add_argument("--Hkv", type=int, default=None)
    p.add_argument("--Nq", type=int, default=4)
    p.add_argument("--Nk", type=int, default=None)
    p.add_argument("--D", type=int, default=8)
    p.add_argument("--Dv", type=int, default=None)
    p.add_argument("--in-type", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--window", type=int, nargs=2, default=None)
    p.add_argument("--softcap", type=float, default=None)
    p.add_argument("--scale", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--range", type=float, default=1.0, help="inputs uniform in +-range")
    p.add_argument("--fd", action="store_true", help="check against finite differences")
    p.add_argument("--score-mod", default=None, choices=["alibi", "alibi-arith", "softcap", "relpos"])
    p.add_argument("--mask-mod", default=None, choices=["prefix", "document"])
    p.add_argument("--mask", default=None, choices=["bool", "additive"])
    p.add_argument("--mask-dims", default=None,
                   help="Bm,Hm,Nm of the mask (each 1 or B/Hq/Nq); default B,Hq,Nq")
    p.add_argument("--pad-lens", default=None,
                   help="with --mask bool: a key-padding mask, keys j < L_b visible")
    p.add_argument("--mod-softcap", type=float, default=5.0)
    p.add_argument("--relpos-radius", type=int, default=3)
    p.add_argument("--prefix", type=int, default=2)
    p.add_argument("--doc-lens", type=int, nargs="+", default=None)
    p.add_argument("--varlen-q", type=int, nargs="+", default=None,
                   help="packed sequences (varlen): each one's query rows (--B 1)")
    p.add_argument("--varlen-k", type=int, nargs="+", default=None,
                   help="packed sequences: each one's keys")
    p.add_argument("--varlen-pad", type=int, default=0,
                   help="rows and keys after the last sequence (zero gradients)")
    p.add_argument("--dynamic", action="store_true",
                   help="the op on tensors whose B, H and N are dynamic (tensor.cast)")
    p.add_argument("--custom-grad", action="store_true",
                   help="a hand-written score_mod_grad with dt = 1")
    p.add_argument("output", nargs="?")
    a = p.parse_intermixed_args(argv)
    a.Hkv = a.Hkv or a.Hq
    a.Nk = a.Nk or a.Nq
    a.Dv = a.Dv or a.D
    if a.Hq % a.Hkv:
        p.error("Hq must be a multiple of Hkv")
    if a.mask_mod == "document" and (a.Nq != a.Nk or sum(a.doc_lens or []) != a.Nq):
        p.error("--mask-mod document needs Nq == Nk == sum(--doc-lens)")
    if a.custom_grad and not a.score_mod:
        p.error("--custom-grad needs --score-mod")
    if (a.varlen_q is None) != (a.varlen_k is None) or \
            (a.varlen_q and len(a.varlen_q) != len(a.varlen_k)):
        p.error("--varlen-q and --varlen-k give one length per sequence each")
    if a.varlen_q and (a.B != 1 or a.mask_mod == "document" or a.fd or a.dynamic):
        p.error("--varlen-q needs --B 1, no document mask_mod, no --fd and no --dynamic")
    if a.varlen_q:  # the packed lengths
        a.Nq = sum(a.varlen_q) + a.varlen_pad
        a.Nk = sum(a.varlen_k) + a.varlen_pad
    a.mask_dims = (tuple(int(x) for x in a.mask_dims.split(",")) if a.mask_dims
                   else (a.B, a.Hq, a.Nq))
    if len(a.mask_dims) != 3 or a.mask_dims[0] not in (1, a.B) or \
            a.mask_dims[1] not in (1, a.Hq) or a.mask_dims[2] not in (1, a.Nq):
        p.error("--mask-dims must be 1 or B, 1 or Hq, 1 or Nq")
    if a.pad_lens is not None:
        a.pad_lens = [int(x) for x in a.pad_lens.split(",")]
        if a.mask != "bool" or len(a.pad_lens) != a.mask_dims[0]:
            p.error("--pad-lens needs --mask bool and one length per mask batch")
    if a.mask and a.varlen_q:
        p.error("--mask does not go with --varlen-q")
    if a.mode == "check" and not a.output:
        p.error("check needs the runner's output file")
    return a


def scale_of(a):
    return f32(a.scale if a.scale is not None else 1.0 / math.sqrt(a.D))


def band(a):
    left, right = a.window if a.window is not None else (-1, -1)
    if a.causal:
        right = 0
    i = np.arange(a.Nq)[:, None] + (a.Nk - a.Nq)
    j = np.arange(a.Nk)[None, :]
    keep = np.ones((a.Nq, a.Nk), dtype=bool)
    if left >= 0:
        keep &= (j - i) >= -left
    if right >= 0:
        keep &= (j - i) <= right
    return keep


def score_mod_derivative(a, u):
    """d t / d u of --score-mod at the softcapped scores u, by hand."""
    if a.score_mod == "softcap":
        c = f32(a.mod_softcap)
        return 1.0 - np.tanh(u / c) ** 2
    return np.ones_like(u)


def scores(a, q, k, ins):
    """Modified scores (masked: -inf), softcap's tanh (or None), |scores|
    before the cap (plus |bias|), the visibility and score_mod's dt."""
    kk = np.repeat(k, a.Hq // a.Hkv, axis=1)
    s = scale_of(a) * np.einsum("bhid,bhjd->bhij", q, kk)
    smag = scale_of(a) * np.einsum("bhid,bhjd->bhij", np.abs(q), np.abs(kk))
    t = None
    if a.softcap is not None:
        c = f32(a.softcap)
        t = np.tanh(s / c)
        s = c * t
    keep = np.broadcast_to(band(a), s.shape)
    if a.mask == "additive":
        s = s + ins["mask"]
        smag = smag + np.abs(ins["mask"])
    elif a.mask == "bool":
        keep = keep & ins["mask"]
    dt = score_mod_derivative(a, s)
    s, smag, keep = apply_mods(a, ins, s, smag, keep)
    keep = np.broadcast_to(keep, s.shape)
    return np.where(keep, s, -np.inf), t, keep, smag, dt


def forward(a, q, k, v, ins):
    s = scores(a, q, k, ins)[0]
    vv = np.repeat(v, a.Hq // a.Hkv, axis=1)
    m = s.max(axis=-1, keepdims=True)
    alive = np.isfinite(m)
    e = np.exp(s - np.where(alive, m, 0.0))
    tot = e.sum(axis=-1, keepdims=True)
    p = np.where(alive, e / np.where(alive, tot, 1.0), 0.0)
    out = np.einsum("bhij,bhjd->bhid", p, vv)
    lse = np.where(alive, m + np.log(np.where(alive, tot, 1.0)), -np.inf)[..., 0]
    return out, lse


def make_inputs(a):
    rng = np.random.default_rng(a.seed)
    r = ROUND[a.in_type]
    q = r(rng.uniform(-a.range, a.range, (a.B, a.Hq, a.Nq, a.D)))
    k = r(rng.uniform(-a.range, a.range, (a.B, a.Hkv, a.Nk, a.D)))
    v = r(rng.uniform(-a.range, a.range, (a.B, a.Hkv, a.Nk, a.Dv)))
    do = r(rng.uniform(-1.0, 1.0, (a.B, a.Hq, a.Nq, a.Dv)))
    # Captured tensors of the regions (exact f32 values), from their own
    # generator so that the inputs above do not depend on the regions.
    caps = {}
    mrng = np.random.default_rng(a.seed + 1000)
    if a.score_mod == "alibi":
        caps["slopes"] = np.array([f32(2.0 ** (-8.0 * (h + 1) / a.Hq)) for h in range(a.Hq)])
    elif a.score_mod == "relpos":
        caps["table"] = ROUND["f32"](mrng.uniform(-1.0, 1.0, 2 * a.relpos_radius + 1))
    if a.mask_mod == "document":
        caps["doc"] = np.repeat(np.arange(len(a.doc_lens)), a.doc_lens)
    mshape = a.mask_dims + (a.Nk,)
    if a.mask == "bool":
        caps["mask"] = mrng.uniform(0.0, 1.0, mshape) < 0.7
        if a.pad_lens is not None:
            caps["mask"][...] = np.arange(a.Nk) < np.array(a.pad_lens)[:, None, None, None]
    elif a.mask == "additive":
        caps["mask"] = ROUND["f32"](mrng.uniform(-2.0, 2.0, mshape))
    out, lse = forward(a, q, k, v, caps)
    return dict(q=q, k=k, v=v, do=do, o=r(out), lse=ROUND["f32"](lse), **caps)


def group_sum(a, x):
    """[B, Hq, ...] -> [B, Hkv, ...], summing the query heads of each group."""
    return x.reshape((a.B, a.Hkv, a.Hq // a.Hkv) + x.shape[2:]).sum(axis=2)


def analytic(a, ins, absolute=False):
    """The backward from the given o and lse; absolute=True: the magnitudes."""
    q, k, v, do, o, lse = (ins[n] for n in ("q", "k", "v", "do", "o", "lse"))
    s, t, keep, smag, dt = scores(a, q, k, ins)
    alive = np.isfinite(lse)[..., None]
    with np.errstate(invalid="ignore"):
        p = np.where(keep & alive, np.exp(s - np.where(alive, lse[..., None], 0.0)), 0.0)
    if absolute:
        q, k, v, do, o = (np.abs(x) for x in (q, k, v, do, o))
    grp = a.Hq // a.Hkv
    kk, vv = np.repeat(k, grp, axis=1), np.repeat(v, grp, axis=1)
    dp = np.einsum("bhie,bhje->bhij", do, vv)
    delta = np.einsum("bhie,bhie->bhi", do, o)[..., None]
    ds = p * (dp + delta if absolute else dp - delta)
    if not absolute:
        ds = ds * dt
    if t is not None and not absolute:
        ds = ds * (1.0 - t * t)
    sc = scale_of(a)
    dq = sc * np.einsum("bhij,bhjd->bhid", ds, kk)
    dk = group_sum(a, sc * np.einsum("bhij,bhid->bhjd", ds, q))
    dv = group_sum(a, np.einsum("bhij,bhie->bhje", p, do))
    smax = np.where(keep, smag, 0.0).max(axis=-1)  # [B, Hq, Nq]
    return (dq, dk, dv), smax, ~alive[..., 0]


def finite_differences(a, ins):
    h = 1e-3

    def loss(q, k, v):
        return float((ins["do"] * forward(a, q, k, v, ins)[0]).sum())

    grads = []
    for n in ("q", "k", "v"):
        x = ins[n]
        g = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            def f(d):
                args = {m: ins[m] for m in ("q", "k", "v")}
                y = x.copy()
                y[idx] += d
                args[n] = y
                return loss(args["q"], args["k"], args["v"])
            g[idx] = (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)
        grads.append(g)
    return grads


def custom_grad(a, ins):
    """--custom-grad: a score_mod_grad region yielding score_mod's t (the same
    body) and dt = 1."""
    if not a.custom_grad:
        return ""
    only_score = copy.copy(a)
    only_score.mask_mod = None
    body = mod_regions(only_score, ins, lambda _: None).split("\n")
    # The score_mod text: its header, its ops, `fa.yield %t : f32`, `}`.
    ops = [x for x in body[1:] if x.startswith("    ") and "fa.yield" not in x]
    return (" score_mod_grad {\n  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):\n"
            + "".join(x + "\n" for x in ops) + "    %one = arith.constant 1.0 : f32\n"
            + "    fa.yield %t, %one : f32, f32\n  }")


def emit(a, ins):
    E = a.in_type
    shapes = dict(q=(a.B, a.Hq, a.Nq, a.D), k=(a.B, a.Hkv, a.Nk, a.D),
                  v=(a.B, a.Hkv, a.Nk, a.Dv), o=(a.B, a.Hq, a.Nq, a.Dv),
                  lse=(a.B, a.Hq, a.Nq), do=(a.B, a.Hq, a.Nq, a.Dv))
    types = {n: ttype(s, "f32" if n == "lse" else E) for n, s in shapes.items()}
    # The op's operand types: B, H, N dynamic with --dynamic (head dims stay static).
    op_types = {n: ttype(["?"] * 3 + list(s[3:]) if a.dynamic else s,
                         "f32" if n == "lse" else E) for n, s in shapes.items()}
    L = ["// Generated by grad_case.py " + " ".join(sys.argv[1:]),
         "func.func private @printMemrefF32(memref<*xf32>)",
         "func.func @main() {"]
    for n in ("q", "k", "v", "o", "lse", "do"):
        elt = "f32" if n == "lse" else E
        name = f"{n}c" if a.dynamic else n
        L.append(f"  %{name} = arith.constant dense<{dense(ins[n], lambda x: fmt(x, elt))}> : {types[n]}")
        if a.dynamic:
            L.append(f"  %{n} = tensor.cast %{n}c : {types[n]} to {op_types[n]}")
    attrs = []
    if a.scale is not None:
        attrs.append(f"scale = {fmt(f32(a.scale))} : f32")
    if a.causal:
        attrs.append("causal")
    if a.window is not None:
        attrs.append(f"window = array<i64: {a.window[0]}, {a.window[1]}>")
    if a.softcap is not None:
        attrs.append(f"softcap = {fmt(f32(a.softcap))} : f32")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    if a.varlen_q:
        S1 = len(a.varlen_q) + 1
        for n, lens in (("cq", a.varlen_q), ("ck", a.varlen_k)):
            offs = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
            L.append(f"  %{n} = arith.constant dense<[{', '.join(str(int(x)) for x in offs)}]> "
                     f": tensor<{S1}xi32>")
        attr = f" varlen(%cq, %ck : tensor<{S1}xi32>, tensor<{S1}xi32>)" + attr
    names = ["q", "k", "v", "o", "lse", "do"]
    if a.mask:
        me = "i1" if a.mask == "bool" else "f32"
        mshape = ins["mask"].shape
        types["mask"] = ttype(mshape, me)
        # Broadcast dims (size 1 where the operand has more) stay static.
        op_types["mask"] = ttype(
            ["?" if (d != 1 or full == 1) else 1
             for d, full in zip(mshape, (a.B, a.Hq, a.Nq, a.Nk))] if a.dynamic else mshape, me)
        conv = (lambda x: "true" if x else "false") if a.mask == "bool" else \
            (lambda x: fmt(x, "f32"))
        name = "maskc" if a.dynamic else "mask"
        L.append(f"  %{name} = arith.constant dense<{dense(ins['mask'], conv)}> : {types['mask']}")
        if a.dynamic:
            L.append(f"  %mask = tensor.cast %maskc : {types['mask']} to {op_types['mask']}")
        attr = f" mask(%mask : {op_types['mask']})" + attr
        names.append("mask")
    # --dynamic: the op in a function of its own, so that its sizes are the
    # arguments' (tensor.dim of a function argument does not fold to a constant).
    G = [] if a.dynamic else L
    attr += mod_regions(a, ins, G.append) + custom_grad(a, ins)
    ins_t = ", ".join(op_types[n] for n in ("q", "k", "v", "o", "lse", "do"))
    res_t = ", ".join(op_types[n] for n in ("q", "k", "v"))
    G.append(f"  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do{attr} : {ins_t} -> {res_t}")
    if a.dynamic:
        args = ", ".join(f"%{n}: {op_types[n]}" for n in names)
        G = [f"func.func @grad({args}) -> ({res_t}) {{"] + G + \
            [f"  return %dq, %dk, %dv : {res_t}", "}"]
        L[1:1] = G
        call_t = ", ".join(op_types[n] for n in names)
        L.append(f"  %dq, %dk, %dv = call @grad({', '.join('%' + n for n in names)}) : "
                 f"({call_t}) -> ({res_t})")
    for n, src in (("q", "dq"), ("k", "dk"), ("v", "dv")):
        st, ft = types[n], ttype(shapes[n], "f32")
        val = f"%{src}"
        if a.dynamic:
            L.append(f"  %{src}s = tensor.cast %{src} : {op_types[n]} to {st}")
            val = f"%{src}s"
        if E != "f32":
            L.append(f"  %{src}f = arith.extf {val} : {st} to {ft}")
            val = f"%{src}f"
        mt = "memref<" + "x".join(str(d) for d in shapes[n]) + "xf32>"
        L.append(f"  %{src}m = bufferization.to_buffer {val} : {ft} to {mt}")
        L.append(f"  %{src}u = memref.cast %{src}m : {mt} to memref<*xf32>")
        L.append(f"  call @printMemrefF32(%{src}u) : (memref<*xf32>) -> ()")
    L += ["  return", "}"]
    return "\n".join(L) + "\n"


def check(a, ins):
    grad = varlen_analytic if a.varlen_q else analytic
    (dq, dk, dv), smax, dead = grad(a, ins)
    (mq, mk, mv), _, _ = grad(a, ins, absolute=True)
    C = U32 * (3 * (a.D + 2) * smax.max() + 4 * (a.D + a.Dv + a.Nq + a.Nk) + 64)
    refs = [dq, dk, dv]
    extra = 0.0
    msgs = []
    if a.fd:
        fds = finite_differences(a, ins)
        worst = max(float(np.abs(r - f).max() / (C * max(float(m.max()), 1e-30) + 1e-8))
                    for r, f, m in zip(refs, fds, (mq, mk, mv)))
        if worst > 1.0:
            print(f"FAIL the analytic reference disagrees with finite differences ({worst:.3g} x tol)")
            return 1
        msgs.append(f"analytic vs finite differences {worst:.3g} x tol")
        refs, extra = fds, 1e-8
    try:
        arrays = parse_output(a.output)
    except (OSError, ValueError, AttributeError, IndexError) as e:
        print(f"FAIL cannot parse {a.output}: {e}")
        return 1
    if len(arrays) != 3:
        print(f"FAIL expected 3 printed arrays, found {len(arrays)}")
        return 1
    uo, ao = OUT_UNIT[a.in_type], OUT_ABS[a.in_type]
    ok = True
    for name, got, ref, mag in zip(("dq", "dk", "dv"), arrays, refs, (mq, mk, mv)):
        if got.shape != ref.shape:
            print(f"FAIL {name}: shape {got.shape} != {ref.shape}")
            return 1
        if np.isnan(got).any():
            print(f"FAIL {name}: NaN at {[int(x) for x in np.argwhere(np.isnan(got))[0]]}")
            return 1
        tol = (uo + PRINT_REL) * np.abs(ref) + ao + C * mag + extra * (1 + np.abs(ref))
        if name == "dq":
            tol = np.where(dead[..., None], 0.0, tol)
        err = np.abs(got - ref)
        ratio = np.where(err == 0, 0.0, err / np.where(tol > 0, tol, 1e-300))
        w = np.unravel_index(np.argmax(ratio), ratio.shape)
        if ratio[w] > 1.0:
            ok = False
            msgs.append(f"{name}{[int(x) for x in w]}: got {got[w]!r}, expected {ref[w]!r}, "
                        f"|err| {err[w]:.3g} > tol {tol[w]:.3g}")
        else:
            msgs.append(f"{name}: max abs err {err.max():.3g}, worst err/tol {ratio[w]:.3g}")
    nd = int(dead.sum())
    print(("PASS " if ok else "FAIL ") + "; ".join(msgs)
          + (f"; {nd} fully masked rows" if nd else ""))
    return 0 if ok else 1


def sequence_args(a, s):
    """The arguments of packed sequence s as a case of its own (B = 1)."""
    b = copy.copy(a)
    b.Nq, b.Nk, b.seed, b.varlen_q, b.varlen_k = a.varlen_q[s], a.varlen_k[s], a.seed + s, None, None
    return b


def pack(parts, total, axis, fill=0.0):
    """Sequences' arrays concatenated along `axis`, padded with `fill` to `total`."""
    x = np.concatenate(parts, axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, total - x.shape[axis])
    return np.pad(x, pad, constant_values=fill)


def make_varlen_inputs(a):
    """Each sequence's inputs (its own seed), packed along the sequence dim."""
    seqs = [make_inputs(sequence_args(a, s)) for s in range(len(a.varlen_q))]
    ins = dict(seqs[0])
    for n in ("q", "o", "do"):
        ins[n] = pack([x[n] for x in seqs], a.Nq, 2)
    ins["lse"] = pack([x["lse"] for x in seqs], a.Nq, 2)
    for n in ("k", "v"):
        ins[n] = pack([x[n] for x in seqs], a.Nk, 2)
    ins["seqs"] = seqs
    return ins


def varlen_analytic(a, ins, absolute=False):
    """analytic() per sequence, packed (rows and keys of no sequence: 0)."""
    res = [analytic(sequence_args(a, s), x, absolute) for s, x in enumerate(ins["seqs"])]
    grads = tuple(pack([r[0][i] for r in res], a.Nq if i == 0 else a.Nk, 2) for i in range(3))
    smax = pack([r[1] for r in res], a.Nq, 2)
    dead = pack([r[2] for r in res], a.Nq, 2, fill=False)
    return grads, smax, dead


def main(argv):
    a = parse_args(argv)
    ins = make_varlen_inputs(a) if a.varlen_q else make_inputs(a)
    if a.mode == "emit":
        sys.stdout.write(emit(a, ins))
        return 0
    return check(a, ins)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
