#!/usr/bin/env python3
"""Emit and check one fa.attention case executed on the CPU.

    sdpa_case.py emit  <case options>             > case.mlir
    sdpa_case.py check <case options> runner.out

`emit` writes an MLIR module whose @main builds deterministic random inputs as
dense constants, calls fa.attention once and prints `out` (extended to f32) and,
with --lse, `lse` through printMemrefF32.  `check` regenerates the same inputs
from the same options (and seed), computes a float64 numpy reference written
from the op's documented semantics only, parses the runner's stdout and prints
`PASS ...` or `FAIL ...` (then exits 1).

Reference semantics (per batch b, query head h, query row i; g = h / (Hq/Hkv)):

    s[j] = scale * dot(q[b,h,i,:] * qd, k[b,g,j,:] * kd)      (qd = kd = vd = 1 unless fp8)
    s[j] = softcap * tanh(s[j] / softcap)                      if softcap
    s[j] += mask[b?,h?,i,j]                                    additive mask (broadcast)
    s[j] = -inf  if a boolean mask is false, or j is outside
                 i+(Nk-Nq)-left <= j <= i+(Nk-Nq)+right   (causal: right = 0; -1: unbounded)
    s[j] = score_mod(s[j], b, h, i, j)                         --score-mod (a region)
    s[j] = -inf  if not mask_mod(b, h, i, j)                   --mask-mod (a region)
    out  = softmax(s) @ (v[b,g] * vd);  lse = log(sum_j exp(s[j]))
    a row with every key masked: out = 0, lse = -inf.

The modifier regions (MODS below) are written in MLIR by `emit` and in numpy
by `reference`, each from its definition:
    alibi        s + slope[h] * (j - i), slope[h] = 2^(-8 (h + 1) / Hq) from a
                 captured tensor<Hq x f32>
    alibi-arith  s + (j - i) / (h + 1), the slope computed in the region
    softcap      c * tanh(s / c), c = --mod-softcap, with math.tanh
    relpos       s + table[clamp(j - i, -R, R) + R], R = --relpos-radius, a
                 captured tensor<(2R + 1) x f32>
    prefix       keep iff j < P or j <= i, P = --prefix (prefix-LM)
    document     keep iff doc[i] == doc[j], doc a captured tensor<N x i32> of
                 document ids (--doc-lens, N = Nq = Nk)
    hide-rows    keep iff i mod 3 != 1: every third row sees no key at all
    arith-mix    keep iff ((0 <= i - j <= 2 or i / 4 == j / 4)
                           xor (j == 0 and i >= 6))
                          and select(i / 4 == j / 4, 0, min(max(3 j - i, -5), 5)) > -5
                 (only index arithmetic: fa-tile-attention's mask-mod-sparsity
                 bounds it over each block instead of evaluating it)

scale and softcap are f32 attributes, so the reference uses their f32 values.
Inputs are generated in float64, then rounded to the input type (f16 through
numpy; bf16 and f8E4M3FN, which numpy 1.24 lacks, here: bf16 by rounding the
f32 bits to nearest even, f8E4M3FN through a table of its 127 magnitudes,
saturating at 448); the reference uses exactly the rounded values, printed with
repr() so that MLIR parses the exact value.

Tolerances.  u = 2^-24 is the f32 unit roundoff.  For every row, let
    S   = max_j ( scale * sum_d |q_d k_jd| * qd*kd + |mask_j| )   (logit magnitude)
    V   = max_j,e |v_je| * vd                                     (value magnitude)
    acc = u * (3 * (D + 2) * S + 4 * Nk + 64)
`acc` bounds the f32 accumulation error of one logit (a D-term dot product,
the scale, the mask add and the max subtraction: (D+2)u*S each, counted three
times for s_j, the row max and s_j - max), plus the error of the exp, the
Nk-term sums and the division (libm exp/log/tanh are ~1 ulp: the 64 covers
them and the descale products).  A relative error e in every p_j moves out by at
most e * V, so each element must satisfy

    |got - ref| <= (u_out + PRINT) * |ref| + a_out + (1 + u_out) * acc * V   out
    |got - ref| <=  PRINT          * |ref| +                 acc            lse

with PRINT = 1e-5 (printMemrefF32 prints 6 significant digits: half a unit of
the 6th digit is <= 5e-6 relative) and u_out, a_out the relative and the
(subnormal) absolute rounding error of the output type:

    out type | u_out  | a_out   | why
    ---------+--------+---------+---------------------------------------------
    f32      | 2^-24  | 2^-150  | computed in f32: only accumulation (acc*V) + print
    f16      | 2^-11  | 2^-25   | one round-to-nearest of the f32 result to 11 bits
    bf16     | 2^-8   | 2^-134  | one round-to-nearest of the f32 result to 8 bits
    (inputs f8E4M3FN: the reference uses the same exactly representable fp8
     values times the f32 descale factors, so the error is still output rounding
     plus accumulation; the descale products are f32 roundings inside acc)

lse is always f32 and is compared with the tight f32 bound above, whatever the
input/output type.  Fully masked rows must give out == 0 exactly and
lse == -inf.  Any NaN in the output fails.
"""

import argparse
import math
import re
import sys

import numpy as np

U32 = 2.0 ** -24
PRINT_REL = 1e-5
OUT_UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
OUT_ABS = {"f32": 2.0 ** -150, "f16": 2.0 ** -25, "bf16": 2.0 ** -134}

# ----------------------------------------------------------------------------
# Rounding to the input types.


def round_f16(x):
    return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)


def round_bf16(x):
    """Round to nearest even on the upper 16 bits of the f32 value."""
    f = np.asarray(x, dtype=np.float64).astype(np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def _e4m3_positive_values():
    """Finite non-negative f8E4M3FN values, indexed by code 0..126 (0x7F is NaN)."""
    vals = []
    for code in range(0x7F):
        e, m = code >> 3, code & 7
        vals.append((m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7))
    return np.array(vals)


E4M3 = _e4m3_positive_values()  # increasing, max 448


def round_e4m3(x):
    """Round to nearest (ties to even code), saturating at +-448."""
    x = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(x), E4M3[-1])
    hi = np.clip(np.searchsorted(E4M3, a), 0, len(E4M3) - 1)
    lo = np.maximum(hi - 1, 0)
    dlo, dhi = a - E4M3[lo], E4M3[hi] - a
    pick = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    return np.sign(x) * E4M3[pick]


ROUND = {"f32": lambda x: np.asarray(x, np.float64).astype(np.float32).astype(np.float64),
         "f16": round_f16, "bf16": round_bf16, "f8E4M3FN": round_e4m3}
MAXVAL = {"f32": 3.4e38, "f16": 65504.0, "bf16": 3.38e38, "f8E4M3FN": 448.0}


def f32(x):
    return float(np.float32(x))


# ----------------------------------------------------------------------------
# The case.


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["emit", "check"])
    p.add_argument("--B", type=int, default=1)
    p.add_argument("--Hq", type=int, default=1)
    p.add_argument("--Hkv", type=int, default=None, help="default: Hq")
    p.add_argument("--Nq", type=int, default=4)
    p.add_argument("--Nk", type=int, default=None, help="default: Nq")
    p.add_argument("--D", type=int, default=8)
    p.add_argument("--Dv", type=int, default=None, help="default: D")
    p.add_argument("--in-type", default="f32", choices=["f32", "f16", "bf16", "f8E4M3FN"])
    p.add_argument("--out-type", default=None, choices=["f32", "f16", "bf16"],
                   help="default: the input type (f32 for fp8)")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--window", type=int, nargs=2, metavar=("LEFT", "RIGHT"), default=None)
    p.add_argument("--softcap", type=float, default=None)
    p.add_argument("--scale", type=float, default=None, help="default: 1/sqrt(D)")
    p.add_argument("--mask", default="none", choices=["none", "additive", "bool"])
    p.add_argument("--mask-type", default="f32", choices=["f32", "f16", "bf16"],
                   help="element type of an additive mask")
    p.add_argument("--mask-dims", default=None,
                   help="Bm,Hm[,Nm] of the mask (each 1 or B/Hq/Nq); default B,Hq,Nq")
    p.add_argument("--pad-lens", default=None,
                   help="a boolean key-padding mask: L_0,...: keys j < L_b visible "
                        "(with --mask bool; one length per batch of the mask)")
    p.add_argument("--keep-prob", type=float, default=0.7, help="boolean mask density")
    p.add_argument("--mask-range", type=float, default=2.0, help="additive mask in +-range")
    p.add_argument("--masked-row", type=int, action="append", default=[],
                   help="query row whose keys are all masked (bool: false, additive: -inf)")
    p.add_argument("--lse", action="store_true", help="also return and check lse")
    p.add_argument("--dynamic", action="store_true",
                   help="tensor.cast the B, H and N dims to ? around the op")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--qk-range", type=float, default=1.0, help="q, k uniform in +-range")
    p.add_argument("--v-range", type=float, default=1.0, help="v uniform in +-range")
    p.add_argument("--logit-mag", type=float, default=None,
                   help="choose qk-range so that the logits' std is about this (e.g. 1e4)")
    p.add_argument("--descale", type=float, nargs=3, default=None, metavar=("QD", "KD", "VD"),
                   help="fp8 descale factors; default: amax/448 of each tensor")
    p.add_argument("--granularity", default="tensor", choices=["tensor", "head", "block"],
                   help="fp8 descales: f32 scalars, [B, H] or [B, H, NB] tensors (amax/448 each)")
    p.add_argument("--descale-block", type=int, nargs=2, default=[4, 4],
                   metavar=("BQ", "BKV"), help="rows per descale block with --granularity block")
    p.add_argument("--score-mod", default=None, choices=["alibi", "alibi-arith", "softcap", "relpos"],
                   help="a score_mod region (see MODS)")
    p.add_argument("--mask-mod", default=None, choices=["prefix", "document", "hide-rows", "arith-mix"],
                   help="a mask_mod region (see MODS)")
    p.add_argument("--mod-softcap", type=float, default=5.0, help="c of --score-mod softcap")
    p.add_argument("--relpos-radius", type=int, default=3, help="R of --score-mod relpos")
    p.add_argument("--prefix", type=int, default=2, help="P of --mask-mod prefix")
    p.add_argument("--doc-lens", type=int, nargs="+", default=None,
                   help="document lengths of --mask-mod document (sum Nq)")
    p.add_argument("output", nargs="?", help="runner stdout (check mode)")
    a = p.parse_intermixed_args(argv)
    a.Hkv = a.Hkv or a.Hq
    a.Nk = a.Nk or a.Nq
    a.Dv = a.Dv or a.D
    a.out_type = a.out_type or ("f32" if a.in_type == "f8E4M3FN" else a.in_type)
    if a.Hq % a.Hkv:
        p.error("Hq must be a multiple of Hkv")
    if a.mask_dims is None:
        a.mask_dims = (a.B, a.Hq, a.Nq)
    else:
        a.mask_dims = tuple(int(x) for x in a.mask_dims.split(","))
        if len(a.mask_dims) == 2:
            a.mask_dims += (a.Nq,)
        if len(a.mask_dims) != 3 or a.mask_dims[0] not in (1, a.B) or \
                a.mask_dims[1] not in (1, a.Hq) or a.mask_dims[2] not in (1, a.Nq):
            p.error("--mask-dims must be 1 or B, 1 or Hq[, 1 or Nq]")
    if a.masked_row and a.mask == "none":
        p.error("--masked-row needs a mask")
    if a.masked_row and a.mask_dims[2] == 1:
        p.error("--masked-row needs a mask with its query rows (Nm = Nq)")
    if a.pad_lens is not None:
        a.pad_lens = [int(x) for x in a.pad_lens.split(",")]
        if a.mask != "bool" or len(a.pad_lens) != a.mask_dims[0]:
            p.error("--pad-lens needs --mask bool and one length per mask batch")
    if a.mask_mod == "document":
        if a.Nq != a.Nk or not a.doc_lens or sum(a.doc_lens) != a.Nq:
            p.error("--mask-mod document needs Nq == Nk == sum(--doc-lens)")
    if a.mode == "check" and not a.output:
        p.error("check needs the runner's output file")
    return a


def scale_of(a):
    return f32(a.scale if a.scale is not None else 1.0 / math.sqrt(a.D))


def expand_descale(d, n):
    """A descale (scalar, [B,H] or [B,H,NB]) as a [B,H,n] array over rows (or a scalar)."""
    d = np.asarray(d, dtype=np.float64)
    if d.ndim == 0:
        return d
    if d.ndim == 2:
        return np.repeat(d[:, :, None], n, axis=2)
    blk = -(-n // d.shape[2])
    # blocks of blk rows, as the op's NB = ceil(n / block)
    return np.repeat(d, blk, axis=2)[:, :, :n]


def make_inputs(a):
    """Deterministic inputs, already rounded to their MLIR element types."""
    rng = np.random.default_rng(a.seed)
    qk_range = a.qk_range
    if a.logit_mag is not None:
        # uniform(+-r) products have variance r^4/9: std(scale*q.k) = scale*sqrt(D)*r^2/3.
        qk_range = math.sqrt(3.0 * a.logit_mag / (scale_of(a) * math.sqrt(a.D)))
    q = rng.uniform(-qk_range, qk_range, (a.B, a.Hq, a.Nq, a.D))
    k = rng.uniform(-qk_range, qk_range, (a.B, a.Hkv, a.Nk, a.D))
    v = rng.uniform(-a.v_range, a.v_range, (a.B, a.Hkv, a.Nk, a.Dv))
    ins = {}
    if a.in_type == "f8E4M3FN" and a.granularity != "tensor":
        # Descale tensors: [B, H] per head, [B, H, NB] per block of rows; each
        # element is amax/448 of its group. q[b,h,i] is stored as x / d and
        # read back as fp8 * d: d broadcast over the group's rows (and D).
        ds = []
        for x, blk in ((q, a.descale_block[0]), (k, a.descale_block[1]), (v, a.descale_block[1])):
            n = x.shape[2]
            blk = n if a.granularity == "head" else blk
            nb = -(-n // blk)
            d = np.array([[[np.abs(x[b, h, i * blk:(i + 1) * blk]).max() / 448.0
                            for i in range(nb)] for h in range(x.shape[1])]
                          for b in range(x.shape[0])])
            d = np.maximum(d, 2.0 ** -100).astype(np.float32).astype(np.float64)
            ds.append(d if a.granularity == "block" else d[:, :, 0])
        ins["descale"] = ds
        q, k, v = (round_e4m3(x / expand_descale(d, x.shape[2])[..., None])
                   for x, d in zip((q, k, v), ds))
    elif a.in_type == "f8E4M3FN":
        ds = a.descale or [np.abs(x).max() / 448.0 for x in (q, k, v)]
        ds = [f32(d) for d in ds]
        ins["descale"] = ds
        q, k, v = (round_e4m3(x / d) for x, d in zip((q, k, v), ds))
    else:
        for x in (q, k, v):
            if np.abs(x).max() > MAXVAL[a.in_type]:
                sys.exit("inputs overflow " + a.in_type)
        q, k, v = (ROUND[a.in_type](x) for x in (q, k, v))
    ins.update(q=q, k=k, v=v)
    mshape = (*a.mask_dims, a.Nk)
    if a.mask == "bool":
        m = rng.uniform(0.0, 1.0, mshape) < a.keep_prob
        if a.pad_lens is not None:
            m[...] = np.arange(a.Nk) < np.array(a.pad_lens)[:, None, None, None]
        for r in a.masked_row:
            m[:, :, r, :] = False
        ins["mask"] = m
    elif a.mask == "additive":
        m = ROUND[a.mask_type](rng.uniform(-a.mask_range, a.mask_range, mshape))
        for r in a.masked_row:
            m[:, :, r, :] = -np.inf
        ins["mask"] = m
    # Captured tensors of the modifier regions (exact f32 values).
    if a.score_mod == "alibi":
        ins["slopes"] = np.array([f32(2.0 ** (-8.0 * (h + 1) / a.Hq)) for h in range(a.Hq)])
    elif a.score_mod == "relpos":
        ins["table"] = ROUND["f32"](rng.uniform(-1.0, 1.0, 2 * a.relpos_radius + 1))
    if a.mask_mod == "document":
        ins["doc"] = np.repeat(np.arange(len(a.doc_lens)), a.doc_lens)
    return ins


def mod_regions(a, ins, w):
    """The score_mod / mask_mod text of the op (after the attributes); writes
    the captured constants with `w`."""
    text = ""
    if a.score_mod:
        body = []
        if a.score_mod in ("alibi", "alibi-arith", "relpos"):
            body.append("%d = arith.subi %j, %i : index")
        if a.score_mod == "alibi":
            w(f"  %slopes = arith.constant dense<{dense(ins['slopes'], fmt)}> : tensor<{a.Hq}xf32>")
            body += ["%sl = tensor.extract %slopes[%h] : tensor<" + str(a.Hq) + "xf32>",
                     "%di = arith.index_cast %d : index to i64",
                     "%df = arith.sitofp %di : i64 to f32",
                     "%bias = arith.mulf %sl, %df : f32",
                     "%t = arith.addf %s, %bias : f32"]
        elif a.score_mod == "alibi-arith":
            body += ["%c1 = arith.constant 1 : index",
                     "%h1 = arith.addi %h, %c1 : index",
                     "%hi = arith.index_cast %h1 : index to i64",
                     "%hf = arith.sitofp %hi : i64 to f32",
                     "%di = arith.index_cast %d : index to i64",
                     "%df = arith.sitofp %di : i64 to f32",
                     "%bias = arith.divf %df, %hf : f32",
                     "%t = arith.addf %s, %bias : f32"]
        elif a.score_mod == "softcap":
            body += [f"%c = arith.constant {fmt(f32(a.mod_softcap))} : f32",
                     "%x = arith.divf %s, %c : f32",
                     "%th = math.tanh %x : f32",
                     "%t = arith.mulf %th, %c : f32"]
        else:
            R = a.relpos_radius
            w(f"  %table = arith.constant dense<{dense(ins['table'], fmt)}> : tensor<{2 * R + 1}xf32>")
            body += [f"%r = arith.constant {R} : index",
                     f"%nr = arith.constant {-R} : index",
                     "%lo = arith.maxsi %d, %nr : index",
                     "%dc = arith.minsi %lo, %r : index",
                     "%idx = arith.addi %dc, %r : index",
                     f"%bias = tensor.extract %table[%idx] : tensor<{2 * R + 1}xf32>",
                     "%t = arith.addf %s, %bias : f32"]
        text += (" score_mod {\n  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):\n"
                 + "".join("    " + x + "\n" for x in body) + "    fa.yield %t : f32\n  }")
    if a.mask_mod:
        if a.mask_mod == "prefix":
            body = [f"%p = arith.constant {a.prefix} : index",
                    "%inp = arith.cmpi slt, %j, %p : index",
                    "%causal = arith.cmpi sle, %j, %i : index",
                    "%keep = arith.ori %inp, %causal : i1"]
        elif a.mask_mod == "document":
            n = a.Nq
            w(f"  %doc = arith.constant dense<{dense(ins['doc'], str)}> : tensor<{n}xi32>")
            body = [f"%di = tensor.extract %doc[%i] : tensor<{n}xi32>",
                    f"%dj = tensor.extract %doc[%j] : tensor<{n}xi32>",
                    "%keep = arith.cmpi eq, %di, %dj : i32"]
        elif a.mask_mod == "arith-mix":
            body = ["%c0 = arith.constant 0 : index",
                    "%c2 = arith.constant 2 : index",
                    "%c3 = arith.constant 3 : index",
                    "%c4 = arith.constant 4 : index",
                    "%c5 = arith.constant 5 : index",
                    "%c6 = arith.constant 6 : index",
                    "%cm5 = arith.constant -5 : index",
                    "%true = arith.constant true",
                    "%d = arith.subi %i, %j : index",
                    "%ahead = arith.cmpi sge, %d, %c0 : index",
                    "%near = arith.cmpi sle, %d, %c2 : index",
                    "%band = arith.andi %ahead, %near : i1",
                    "%bi = arith.divsi %i, %c4 : index",
                    "%bj = arith.divsi %j, %c4 : index",
                    "%same = arith.cmpi eq, %bi, %bj : index",
                    "%local = arith.ori %band, %same : i1",
                    "%first = arith.cmpi eq, %j, %c0 : index",
                    "%late = arith.cmpi sge, %i, %c6 : index",
                    "%flip = arith.andi %first, %late : i1",
                    "%x = arith.xori %local, %flip : i1",
                    "%j3 = arith.muli %c3, %j : index",
                    "%e = arith.subi %j3, %i : index",
                    "%lo = arith.maxsi %e, %cm5 : index",
                    "%cl = arith.minsi %lo, %c5 : index",
                    "%sel = arith.select %same, %c0, %cl : index",
                    "%ok = arith.cmpi sgt, %sel, %cm5 : index",
                    "%keep = arith.andi %x, %ok : i1"]
        else:
            body = ["%c3 = arith.constant 3 : index",
                    "%c1 = arith.constant 1 : index",
                    "%r = arith.remui %i, %c3 : index",
                    "%keep = arith.cmpi ne, %r, %c1 : index"]
        text += (" mask_mod {\n  ^bb0(%b: index, %h: index, %i: index, %j: index):\n"
                 + "".join("    " + x + "\n" for x in body) + "    fa.yield %keep : i1\n  }")
    return text


def apply_mods(a, ins, s, smag, keep):
    """The modifier regions in numpy, on s, the magnitude bound and keep."""
    i = np.arange(a.Nq)[:, None].astype(np.float64)
    j = np.arange(a.Nk)[None, :].astype(np.float64)
    bias = None
    if a.score_mod == "alibi":
        bias = ins["slopes"][None, :, None, None] * (j - i)[None, None]
    elif a.score_mod == "alibi-arith":
        h1 = np.arange(1, a.Hq + 1, dtype=np.float64)
        bias = (j - i)[None, None] / h1[None, :, None, None]
    elif a.score_mod == "relpos":
        R = a.relpos_radius
        idx = (np.clip(j - i, -R, R) + R).astype(int)
        bias = ins["table"][idx][None, None]
    elif a.score_mod == "softcap":
        c = f32(a.mod_softcap)
        s = c * np.tanh(s / c)
    if bias is not None:
        s = s + bias
        smag = smag + np.abs(bias)
    ii = np.arange(a.Nq)[:, None]
    jj = np.arange(a.Nk)[None, :]
    if a.mask_mod == "prefix":
        keep = keep & ((jj < a.prefix) | (jj <= ii))
    elif a.mask_mod == "document":
        keep = keep & (ins["doc"][ii] == ins["doc"][jj])
    elif a.mask_mod == "hide-rows":
        keep = keep & np.broadcast_to(ii % 3 != 1, (a.Nq, a.Nk))
    elif a.mask_mod == "arith-mix":
        d = ii - jj
        same = (ii // 4) == (jj // 4)
        local = ((d >= 0) & (d <= 2)) | same
        flip = (jj == 0) & (ii >= 6)
        sel = np.where(same, 0, np.clip(3 * jj - ii, -5, 5))
        keep = keep & ((local ^ flip) & (sel > -5))
    return s, smag, keep


# ----------------------------------------------------------------------------
# emit


NEG_INF_BITS = {"f32": "0xFF800000", "f16": "0xFC00", "bf16": "0xFF80"}


def fmt(x, elt="f32"):
    """A float literal MLIR parses to exactly x (shortest round-trip repr)."""
    s = repr(float(x))
    if s == "-inf":  # only in additive masks; MLIR has no inf literal
        return NEG_INF_BITS[elt]
    if "e" in s and "." not in s.split("e")[0]:  # 1e-05 -> 1.0e-05
        m, e = s.split("e")
        s = m + ".0e" + e
    return s


def dense(arr, conv):
    if arr.ndim == 0:
        return conv(arr)
    return "[" + ", ".join(dense(x, conv) for x in arr) + "]"


def ttype(shape, elt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + elt + ">"


def emit_const(w, name, arr, elt, conv, dyn_dims=None):
    """Writes (through `w`) %name as a dense constant of `arr` (elements `elt`,
    each written by `conv`); with `dyn_dims` (dimension indices) it is cast
    to a tensor type with those dimensions dynamic. Returns %name's type."""
    t = ttype(arr.shape, elt)
    if dyn_dims is None:
        w(f"  %{name} = arith.constant dense<{dense(arr, conv)}> : {t}")
        return t
    dt = ttype(["?" if d in dyn_dims else n for d, n in enumerate(arr.shape)], elt)
    w(f"  %{name}c = arith.constant dense<{dense(arr, conv)}> : {t}")
    w(f"  %{name} = tensor.cast %{name}c : {t} to {dt}")
    return dt


def emit_print_f32(w, val, shape, elt, dyn_t):
    """Writes (through `w`) the lines that print tensor %val, of type `dyn_t`
    and `elt` elements, static shape `shape`, as f32 with printMemrefF32."""
    st = ttype(shape, elt)
    src = f"%{val}"
    if dyn_t != st:
        w(f"  %{val}s = tensor.cast %{val} : {dyn_t} to {st}")
        src = f"%{val}s"
    if elt != "f32":
        w(f"  %{val}f = arith.extf {src} : {st} to {ttype(shape, 'f32')}")
        src = f"%{val}f"
    ft = ttype(shape, "f32")
    mt = "memref<" + "x".join(str(d) for d in shape) + "xf32>"
    w(f"  %{val}m = bufferization.to_buffer {src} : {ft} to {mt}")
    w(f"  %{val}u = memref.cast %{val}m : {mt} to memref<*xf32>")
    w(f"  call @printMemrefF32(%{val}u) : (memref<*xf32>) -> ()")


def emit(a, ins):
    B, Hq, Hkv, Nq, Nk, D, Dv = a.B, a.Hq, a.Hkv, a.Nq, a.Nk, a.D, a.Dv
    E, Eo = a.in_type, a.out_type
    L = []
    w = L.append
    w("// Generated by sdpa_case.py " + " ".join(sys.argv[1:]))
    w("func.func private @printMemrefF32(memref<*xf32>)")
    w("func.func @main() {")
    def dty(shape):  # the op's operand/result shape: B, H, N dynamic with --dynamic
        return ["?"] * 3 + list(shape[3:]) if a.dynamic else list(shape)

    names = {}
    for n, shape in (("q", (B, Hq, Nq, D)), ("k", (B, Hkv, Nk, D)), ("v", (B, Hkv, Nk, Dv))):
        t = ttype(shape, E)
        if a.dynamic:
            w(f"  %{n}c = arith.constant dense<{dense(ins[n], fmt)}> : {t}")
            w(f"  %{n} = tensor.cast %{n}c : {t} to {ttype(dty(shape), E)}")
        else:
            w(f"  %{n} = arith.constant dense<{dense(ins[n], fmt)}> : {t}")
        names[n] = ttype(dty(shape), E)
    clauses = ""
    if a.mask != "none":
        me = "i1" if a.mask == "bool" else a.mask_type
        mshape = ins["mask"].shape
        t = ttype(mshape, me)
        conv = ((lambda x: "true" if x else "false") if a.mask == "bool"
                else (lambda x: fmt(x, a.mask_type)))
        mt = t
        if a.dynamic:
            # Broadcast dims (size 1 where the operand has more) stay static.
            md = ["?" if (s != 1 or full == 1) else 1
                  for s, full in zip(mshape, (B, Hq, Nq, Nk))]
            mt = ttype(md, me)
            w(f"  %mc = arith.constant dense<{dense(ins['mask'], conv)}> : {t}")
            w(f"  %m = tensor.cast %mc : {t} to {mt}")
        else:
            w(f"  %m = arith.constant dense<{dense(ins['mask'], conv)}> : {t}")
        clauses += f" mask(%m : {mt})"
    block_attr = []
    if "descale" in ins and a.granularity != "tensor":
        dts = []
        for n, d in zip(("qd", "kd", "vd"), ins["descale"]):
            t = ttype(d.shape, "f32")
            w(f"  %{n} = arith.constant dense<{dense(d, fmt)}> : {t}")
            dts.append(t)
        clauses += " descale(%qd, %kd, %vd : " + ", ".join(dts) + ")"
        if a.granularity == "block":
            block_attr.append(f"descale_block = array<i64: {a.descale_block[0]}, {a.descale_block[1]}>")
    elif "descale" in ins:
        for n, d in zip(("qd", "kd", "vd"), ins["descale"]):
            w(f"  %{n} = arith.constant {fmt(d)} : f32")
        clauses += " descale(%qd, %kd, %vd)"
    attrs = list(block_attr)
    if a.scale is not None:
        attrs.append(f"scale = {fmt(f32(a.scale))} : f32")
    if a.causal:
        attrs.append("causal")
    if a.window is not None:
        attrs.append(f"window = array<i64: {a.window[0]}, {a.window[1]}>")
    if a.softcap is not None:
        attrs.append(f"softcap = {fmt(f32(a.softcap))} : f32")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    attr += mod_regions(a, ins, w)
    oshape, lshape = (B, Hq, Nq, Dv), (B, Hq, Nq)
    ot = ttype(dty(oshape), Eo)
    lt = ttype(dty(lshape + (1,))[:3], "f32")  # lse: [B, Hq, Nq]
    res = f"({ot}, {lt})" if a.lse else ot
    lhs = "%o, %l" if a.lse else "%o"
    w(f"  {lhs} = fa.attention %q, %k, %v{clauses}{attr} : "
      f"{names['q']}, {names['k']}, {names['v']} -> {res}")

    emit_print_f32(w, "o", oshape, Eo, ot)
    if a.lse:
        emit_print_f32(w, "l", lshape, "f32", lt)
    w("  return")
    w("}")
    return "\n".join(L) + "\n"


# ----------------------------------------------------------------------------
# Reference (float64) and check


def reference(a, ins):
    qd, kd, vd = ins.get("descale", (1.0, 1.0, 1.0))
    q, k, v = ((x * expand_descale(d, x.shape[2])[..., None]) if np.ndim(d) else x * d
               for x, d in zip((ins["q"], ins["k"], ins["v"]), (qd, kd, vd)))
    grp = a.Hq // a.Hkv
    kk = np.repeat(k, grp, axis=1)  # head h uses kv head h // grp
    vv = np.repeat(v, grp, axis=1)
    scale = scale_of(a)
    s = scale * np.einsum("bhid,bhjd->bhij", q, kk)
    smag = scale * np.einsum("bhid,bhjd->bhij", np.abs(q), np.abs(kk))
    if a.softcap is not None:
        c = f32(a.softcap)
        s = c * np.tanh(s / c)
    keep = np.ones(s.shape, dtype=bool)
    if a.mask == "additive":
        m = np.broadcast_to(ins["mask"], s.shape)
        keep &= np.isfinite(m)
        s = s + np.where(np.isfinite(m), m, 0.0)
        smag = smag + np.where(np.isfinite(m), np.abs(m), 0.0)
    elif a.mask == "bool":
        keep &= np.broadcast_to(ins["mask"], s.shape)
    s, smag, keep = apply_mods(a, ins, s, smag, keep)
    left, right = a.window if a.window is not None else (-1, -1)
    if a.causal:
        right = 0
    i = np.arange(a.Nq)[:, None] + (a.Nk - a.Nq)
    j = np.arange(a.Nk)[None, :]
    pos = np.ones((a.Nq, a.Nk), dtype=bool)
    # Compare the (small) distance j - i with the bounds: i - left or i + right
    # would wrap around in int64 for bounds near INT64_MAX.
    if left >= 0:
        pos &= (j - i) >= -left
    if right >= 0:
        pos &= (j - i) <= right
    keep &= pos
    s = np.where(keep, s, -np.inf)
    rowmax = s.max(axis=-1, keepdims=True)
    alive = np.isfinite(rowmax)
    e = np.exp(s - np.where(alive, rowmax, 0.0))
    tot = e.sum(axis=-1, keepdims=True)
    p = np.where(alive, e / np.where(alive, tot, 1.0), 0.0)
    out = np.einsum("bhij,bhjd->bhid", p, vv)
    lse = np.where(alive, rowmax + np.log(np.where(alive, tot, 1.0)), -np.inf)[..., 0]
    # Tolerance ingredients, per row.
    S = np.where(keep, smag, 0.0).max(axis=-1)
    V = np.abs(vv).max(axis=(-2, -1))[:, :, None]  # [B,Hq,1]
    acc = U32 * (3 * (a.D + 2) * S + 4 * a.Nk + 64)
    return out, lse, alive[..., 0], acc, V


NUM = re.compile(r"-?nan|-?inf|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def parse_output(path):
    """The arrays printed by printMemrefF32, in order, with their sizes."""
    text = open(path).read()
    blocks = text.split("Unranked Memref")[1:]
    arrays = []
    for blk in blocks:
        sizes = re.search(r"sizes = \[([^\]]*)\]", blk)
        shape = tuple(int(x) for x in sizes.group(1).split(",")) if sizes.group(1).strip() else ()
        data = blk.split("data =", 1)[1]
        vals = [float(t) for t in NUM.findall(data)]
        n = int(np.prod(shape)) if shape else 1
        if len(vals) != n:
            raise ValueError(f"expected {n} values for sizes {shape}, parsed {len(vals)}")
        arrays.append(np.array(vals, dtype=np.float64).reshape(shape))
    return arrays


def compare(name, got, ref, tol, dead):
    """Returns (ok, message, max_abs, max_rel, worst_ratio)."""
    if got.shape != ref.shape:
        return False, f"{name}: shape {got.shape} != expected {ref.shape}", 0, 0, 0
    if np.isnan(got).any():
        idx = tuple(int(x) for x in np.argwhere(np.isnan(got))[0])
        return False, f"{name}{list(idx)}: got nan, expected {ref[idx]!r}", 0, 0, 0
    both_inf = (got == ref) & np.isinf(ref)
    with np.errstate(invalid="ignore"):  # inf - inf
        err = np.where(both_inf, 0.0, np.abs(got - ref))
    err = np.where(np.isnan(err), np.inf, err)
    # Fully masked rows must be exact (out == 0, lse == -inf).
    tol = np.where(dead, 0.0, tol)
    rel = err / np.maximum(np.abs(np.where(np.isinf(ref), 1.0, ref)), 1e-30)
    ratio = np.where(err == 0, 0.0, err / np.where(tol > 0, tol, 1e-300))
    worst = np.unravel_index(np.argmax(ratio), ratio.shape)
    w = tuple(int(x) for x in worst)
    finite = np.isfinite(err)
    mabs = float(err[finite].max()) if finite.any() else 0.0
    mrel = float(rel[finite & (np.abs(ref) > 1e-3)].max()) if (finite & (np.abs(ref) > 1e-3)).any() else 0.0
    if ratio[worst] > 1.0:
        return (False, f"{name}{list(w)}: got {got[w]!r}, expected {ref[w]!r}, "
                f"|err| {err[w]:.3g} > tol {tol[w]:.3g}", mabs, mrel, float(ratio[worst]))
    return True, "", mabs, mrel, float(ratio[worst])


def check_printed(path, out, lse, alive, acc, V, out_type, dead_rows="fully masked rows"):
    """Compares the arrays printed to `path` (out, then lse unless `lse` is
    None) with the float64 references: out within its type's rounding plus the
    accumulation bound `acc * V`, lse within `acc`, rows where `alive` is false
    (named `dead_rows`) compared exactly. Prints one PASS / FAIL line; returns
    the exit status."""
    try:
        arrays = parse_output(path)
    except (OSError, ValueError, AttributeError, IndexError) as e:
        print(f"FAIL cannot parse {path}: {e}")
        return 1
    want = 1 if lse is None else 2
    if len(arrays) != want:
        print(f"FAIL expected {want} printed arrays, found {len(arrays)}")
        return 1
    uo = OUT_UNIT[out_type]
    tol_out = ((uo + PRINT_REL) * np.abs(out) + OUT_ABS[out_type]
               + (1 + uo) * (acc * V)[..., None])
    dead = ~alive
    results = [("out", arrays[0], out, tol_out, np.broadcast_to(dead[..., None], out.shape))]
    if lse is not None:
        tol_lse = PRINT_REL * np.abs(np.where(np.isinf(lse), 0.0, lse)) + acc
        results.append(("lse", arrays[1], lse, tol_lse, dead))
    msgs, ok_all = [], True
    for name, got, ref, tol, d in results:
        ok, msg, mabs, mrel, ratio = compare(name, got, ref, tol, d)
        ok_all &= ok
        msgs.append(msg if not ok else
                    f"{name}: max abs err {mabs:.3g}, max rel err {mrel:.3g}, "
                    f"worst err/tol {ratio:.3g}")
    nd = int(dead.sum())
    print(("PASS " if ok_all else "FAIL ") + "; ".join(msgs)
          + (f"; {nd} {dead_rows}" if nd else ""))
    return 0 if ok_all else 1


def check(a, ins):
    out, lse, alive, acc, V = reference(a, ins)
    return check_printed(a.output, out, lse if a.lse else None, alive, acc, V, a.out_type)


def main(argv):
    a = parse_args(argv)
    ins = make_inputs(a)
    if a.mode == "emit":
        sys.stdout.write(emit(a, ins))
        return 0
    return check(a, ins)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
