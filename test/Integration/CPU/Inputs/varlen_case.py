#!/usr/bin/env python3
"""Emit and check one fa.attention case with varlen(...) (packed sequences).

    varlen_case.py emit  <case options>             > case.mlir
    varlen_case.py check <case options> runner.out

The companion of sdpa_case.py (whose rounding, printing, parsing, comparison
and tolerances it reuses) for packed variable-length sequences. The numpy
reference is written from the op's documented semantics only
(docs/Attention.md), one sequence at a time, independently of any lowering:

    q [1, Hq, Tq, D], k and v [1, Hkv, Tk, D]; cq, ck: B + 1 offsets
    qs = clamp(cq[s], 0, Tq), Lq = clamp(cq[s + 1], qs, Tq) - qs   (keys alike)
    sequence s: attention of q[0, :, qs:qs+Lq] over k/v[0, :, ks:ks+Lk] with
                the bottom-right diagonal Lk - Lq and positions i, j within it
    s[j]  += 0.05 * j + 0.25 * s           --mods: a score_mod that reads b
    s[j]   = -inf if j % 3 == 0 or (i + b) % 5 == 4   --mods: a mask_mod
    rows of no sequence: out 0, lse -inf (the CPU lowerings' choice)
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdpa_case as sc  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["emit", "check"])
    p.add_argument("--cu-q", type=int, nargs="+", required=True)
    p.add_argument("--cu-k", type=int, nargs="+", default=None, help="default: --cu-q")
    p.add_argument("--Tq", type=int, default=None, help="default: the last offset")
    p.add_argument("--Tk", type=int, default=None, help="default: the last offset")
    p.add_argument("--Hq", type=int, default=2)
    p.add_argument("--Hkv", type=int, default=None, help="default: Hq")
    p.add_argument("--D", type=int, default=8)
    p.add_argument("--in-type", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--window", type=int, nargs=2, metavar=("LEFT", "RIGHT"), default=None)
    p.add_argument("--dynamic", action="store_true",
                   help="tensor.cast Tq, Tk and B + 1 to ? around the op")
    p.add_argument("--mods", action="store_true")
    p.add_argument("--lse", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("output", nargs="?", help="runner stdout (check mode)")
    a = p.parse_intermixed_args(argv)
    a.cu_k = a.cu_k or a.cu_q
    a.Hkv = a.Hkv or a.Hq
    a.Tq = a.cu_q[-1] if a.Tq is None else a.Tq
    a.Tk = a.cu_k[-1] if a.Tk is None else a.Tk
    if len(a.cu_k) != len(a.cu_q):
        p.error("--cu-q and --cu-k need the same number of offsets")
    if a.Hq % a.Hkv:
        p.error("Hq must be a multiple of Hkv")
    if a.mode == "check" and not a.output:
        p.error("check needs the runner's output file")
    return a


def make_inputs(a):
    rng = np.random.default_rng(a.seed)
    rnd = sc.ROUND[a.in_type]
    return {"q": rnd(rng.uniform(-1.0, 1.0, (1, a.Hq, a.Tq, a.D))),
            "k": rnd(rng.uniform(-1.0, 1.0, (1, a.Hkv, a.Tk, a.D))),
            "v": rnd(rng.uniform(-1.0, 1.0, (1, a.Hkv, a.Tk, a.D)))}


def ranges(offsets, total):
    out = []
    for s in range(len(offsets) - 1):
        start = min(max(offsets[s], 0), total)
        end = min(max(offsets[s + 1], start), total)
        out.append((start, end - start))
    return out


def reference(a, ins):
    grp = a.Hq // a.Hkv
    scale = sc.f32(1.0 / np.sqrt(a.D))
    out = np.zeros((1, a.Hq, a.Tq, a.D))
    lse = np.full((1, a.Hq, a.Tq), -np.inf)
    alive = np.zeros((1, a.Hq, a.Tq), dtype=bool)
    acc = np.zeros((1, a.Hq, a.Tq))
    V = np.zeros((1, a.Hq, a.Tq))
    for b, ((qs, lq), (ks, lk)) in enumerate(zip(ranges(a.cu_q, a.Tq), ranges(a.cu_k, a.Tk))):
        if lq == 0:
            continue
        q = ins["q"][0, :, qs:qs + lq]
        kk = np.repeat(ins["k"][0, :, ks:ks + lk], grp, axis=0)
        vv = np.repeat(ins["v"][0, :, ks:ks + lk], grp, axis=0)
        s = scale * np.einsum("hid,hjd->hij", q, kk)
        smag = scale * np.einsum("hid,hjd->hij", np.abs(q), np.abs(kk))
        i = np.arange(lq)[:, None]
        j = np.arange(lk)[None, :]
        keep = np.ones((lq, lk), dtype=bool)
        if a.mods:
            bias = sc.f32(0.05) * np.arange(lk) + sc.f32(0.25) * b
            s, smag = s + bias, smag + np.abs(bias)
            keep = keep & (j % 3 != 0) & ((i + b) % 5 != 4)
        left, right = a.window if a.window is not None else (-1, -1)
        if a.causal:
            right = 0
        dist = j - (i + lk - lq)
        if left >= 0:
            keep = keep & (dist >= -left)
        if right >= 0:
            keep = keep & (dist <= right)
        keep = np.broadcast_to(keep[None], s.shape)
        s = np.where(keep, s, -np.inf)
        rowmax = s.max(axis=-1, keepdims=True) if lk else np.full((a.Hq, lq, 1), -np.inf)
        live = np.isfinite(rowmax)
        e = np.exp(s - np.where(live, rowmax, 0.0))
        tot = e.sum(axis=-1, keepdims=True)
        p = np.where(live, e / np.where(live, tot, 1.0), 0.0)
        out[0, :, qs:qs + lq] = np.einsum("hij,hjd->hid", p, vv)
        lse[0, :, qs:qs + lq] = np.where(live, rowmax + np.log(np.where(live, tot, 1.0)),
                                         -np.inf)[..., 0]
        alive[0, :, qs:qs + lq] = live[..., 0]
        if lk:
            smax = np.where(keep, smag, 0.0).max(axis=-1)
            acc[0, :, qs:qs + lq] = sc.U32 * (3 * (a.D + 2) * smax + 4 * lk + 64)
            V[0, :, qs:qs + lq] = np.where(keep[..., None], np.abs(vv)[:, None], 0.0).max(
                axis=(-2, -1))
    return out, lse, alive, acc, V


MODS = """ score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %bi = arith.index_cast %b : index to i64
    %bf = arith.sitofp %bi : i64 to f32
    %c = arith.constant 0.05 : f32
    %cb = arith.constant 0.25 : f32
    %x = arith.mulf %jf, %c : f32
    %y = arith.mulf %bf, %cb : f32
    %r0 = arith.addf %s, %x : f32
    %r = arith.addf %r0, %y : f32
    fa.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c4 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %r = arith.remui %j, %c3 : index
    %k1 = arith.cmpi ne, %r, %c0 : index
    %ib = arith.addi %i, %b : index
    %r5 = arith.remui %ib, %c5 : index
    %k2 = arith.cmpi ne, %r5, %c4 : index
    %keep = arith.andi %k1, %k2 : i1
    fa.yield %keep : i1
  }"""


def emit(a, ins):
    L = []
    w = L.append
    w("// Generated by varlen_case.py " + " ".join(sys.argv[1:]))
    w("func.func private @printMemrefF32(memref<*xf32>)")
    w("func.func @main() {")
    E, fmt, ttype = a.in_type, sc.fmt, sc.ttype

    def const(name, arr, elt, conv, dyn_dims):
        return sc.emit_const(w, name, arr, elt, conv, dyn_dims if a.dynamic else None)

    qt = const("q", ins["q"], E, fmt, (2,))
    kt = const("k", ins["k"], E, fmt, (2,))
    vt = const("v", ins["v"], E, fmt, (2,))
    cqt = const("cq", np.array(a.cu_q), "i32", str, (0,))
    ckt = const("ck", np.array(a.cu_k), "i32", str, (0,))
    attrs = []
    if a.causal:
        attrs.append("causal")
    if a.window is not None:
        attrs.append(f"window = array<i64: {a.window[0]}, {a.window[1]}>")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    if a.mods:
        attr += MODS
    oshape, lshape = (1, a.Hq, a.Tq, a.D), (1, a.Hq, a.Tq)
    ot = ttype([1, a.Hq, "?", a.D] if a.dynamic else oshape, a.in_type)
    lset = ttype([1, a.Hq, "?"] if a.dynamic else lshape, "f32")
    res = f"({ot}, {lset})" if a.lse else ot
    lhs = "%o, %l" if a.lse else "%o"
    w(f"  {lhs} = fa.attention %q, %k, %v varlen(%cq, %ck : {cqt}, {ckt}){attr}"
      f" : {qt}, {kt}, {vt} -> {res}")

    sc.emit_print_f32(w, "o", oshape, a.in_type, ot)
    if a.lse:
        sc.emit_print_f32(w, "l", lshape, "f32", lset)
    w("  return")
    w("}")
    return "\n".join(L) + "\n"


def check(a, ins):
    out, lse, alive, acc, V = reference(a, ins)
    return sc.check_printed(a.output, out, lse if a.lse else None, alive, acc, V, a.in_type,
                            dead_rows="rows without keys")


def main(argv):
    a = parse_args(argv)
    ins = make_inputs(a)
    if a.mode == "emit":
        sys.stdout.write(emit(a, ins))
        return 0
    return check(a, ins)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
