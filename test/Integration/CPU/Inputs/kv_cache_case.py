#!/usr/bin/env python3
"""Emit and check one fa.attention case with kv_lens(...) and/or pages(...).

    kv_cache_case.py emit  <case options>             > case.mlir
    kv_cache_case.py check <case options> runner.out

The companion of sdpa_case.py (whose rounding, printing, parsing, comparison
and tolerances it reuses) for per-sequence key lengths and paged K/V caches.
The numpy reference is written from the op's documented semantics only
(docs/Attention.md), independently of any lowering:

    Ncap   = M * S with pages (M = --pages-per-seq, S = --page-size), else Nk
    K[b,g,j,:] = pool_k[clamp(t[b, j // S], 0, P - 1), g, j % S, :]   with pages
    V likewise; without pages K = key, V = value
    L_b    = clamp(lens[b], 0, Ncap) with kv_lens, else Ncap
    diag_b = --diagonal if given, else L_b - Nq
    s[j]   = scale * dot(q[b,h,i,:], K[b,g,j,:])
    s[j]  += 0.05 * j                                    --mods: a score_mod
    s[j]   = -inf  if j >= L_b, or j outside [i + diag_b - left, i + diag_b + right],
                   or (--mods) mask[b, 0, i, j] is false or j % 3 == 0 (a mask_mod)
    out    = softmax(s) @ V[b,g];  lse = log(sum_j exp(s[j]));  out = 0, lse = -inf
             for a row that sees no key.

The page table is a random permutation of the pool's pages (drawn from
--table-seed, so that a checker run with another table must fail); --bad-pages
replaces some entries with ids outside [0, P) (negative and >= P), which the
op clamps into the pool. The pool has --extra-pages pages no table entry
names (filled with large values: reading one shows).
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
    p.add_argument("--B", type=int, default=2)
    p.add_argument("--Hq", type=int, default=2)
    p.add_argument("--Hkv", type=int, default=None, help="default: Hq")
    p.add_argument("--Nq", type=int, default=1)
    p.add_argument("--Nk", type=int, default=32, help="key capacity without pages")
    p.add_argument("--D", type=int, default=8)
    p.add_argument("--Dv", type=int, default=None, help="default: D")
    p.add_argument("--in-type", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--out-type", default=None, choices=["f32", "f16", "bf16"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--window", type=int, nargs=2, metavar=("LEFT", "RIGHT"), default=None)
    p.add_argument("--diagonal", type=int, default=None,
                   help="an explicit diagonal(...) operand (absolute)")
    p.add_argument("--kv-lens", type=int, nargs="+", default=None,
                   help="per-sequence key lengths (B values; clamped by the op)")
    p.add_argument("--page-size", type=int, default=None, help="S: enables pages(...)")
    p.add_argument("--pages-per-seq", type=int, default=None, help="M")
    p.add_argument("--extra-pages", type=int, default=2,
                   help="pool pages no table entry names")
    p.add_argument("--bad-pages", action="store_true",
                   help="some table entries outside [0, P)")
    p.add_argument("--table-seed", type=int, default=0)
    p.add_argument("--dynamic", action="store_true",
                   help="tensor.cast B, N, P and M to ? around the op")
    p.add_argument("--mods", action="store_true",
                   help="a boolean mask [B, 1, Nq, Ncap], a score_mod s + 0.05 j and a "
                        "mask_mod j % 3 != 0: all read the logical key j")
    p.add_argument("--lse", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("output", nargs="?", help="runner stdout (check mode)")
    a = p.parse_intermixed_args(argv)
    a.Hkv = a.Hkv or a.Hq
    a.Dv = a.Dv or a.D
    a.out_type = a.out_type or a.in_type
    a.paged = a.page_size is not None
    if a.paged:
        if not a.pages_per_seq:
            p.error("--page-size needs --pages-per-seq")
        a.Ncap = a.page_size * a.pages_per_seq
        a.P = a.B * a.pages_per_seq + a.extra_pages
    else:
        a.Ncap = a.Nk
    if a.kv_lens is not None and len(a.kv_lens) != a.B:
        p.error("--kv-lens needs B values")
    if a.Hq % a.Hkv:
        p.error("Hq must be a multiple of Hkv")
    if a.mode == "check" and not a.output:
        p.error("check needs the runner's output file")
    return a


def make_inputs(a):
    rng = np.random.default_rng(a.seed)
    rnd = sc.ROUND[a.in_type]
    ins = {"q": rnd(rng.uniform(-1.0, 1.0, (a.B, a.Hq, a.Nq, a.D)))}
    if a.mods:
        ins["mask"] = np.random.default_rng(500 + a.seed).uniform(
            0.0, 1.0, (a.B, 1, a.Nq, a.Ncap)) < 0.8
    if not a.paged:
        ins["k"] = rnd(rng.uniform(-1.0, 1.0, (a.B, a.Hkv, a.Nk, a.D)))
        ins["v"] = rnd(rng.uniform(-1.0, 1.0, (a.B, a.Hkv, a.Nk, a.Dv)))
        return ins
    S, M, P = a.page_size, a.pages_per_seq, a.P
    ins["k"] = rnd(rng.uniform(-1.0, 1.0, (P, a.Hkv, S, a.D)))
    ins["v"] = rnd(rng.uniform(-1.0, 1.0, (P, a.Hkv, S, a.Dv)))
    trng = np.random.default_rng(1000 + a.table_seed)
    table = trng.permutation(P)[: a.B * M].reshape(a.B, M)
    named = set(table.flatten().tolist())
    if a.bad_pages:
        # Every other sequence gets ids below 0 and at or above P.
        for b in range(0, a.B, 2):
            table[b, 0] = -3 - b
            table[b, M - 1] = P + 5 + b
        named |= {0, P - 1}  # what the bad ids clamp to
    # Pages no entry names (nor clamps to): values that would show if read.
    for page in range(P):
        if page not in named:
            ins["k"][page] = 8.0
            ins["v"][page] = 100.0
    ins["table"] = table.astype(np.int64)
    return ins


def logical_kv(a, ins):
    """K and V as [B, Hkv, Ncap, D]: the pools gathered through the table."""
    if not a.paged:
        return ins["k"], ins["v"]
    S = a.page_size
    j = np.arange(a.Ncap)
    page = np.clip(ins["table"][:, j // S], 0, a.P - 1)  # [B, Ncap]
    k = ins["k"][page, :, (j % S)[None, :], :]  # [B, Ncap, Hkv, D]
    v = ins["v"][page, :, (j % S)[None, :], :]
    return k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3)


def seq_lengths(a):
    if a.kv_lens is None:
        return np.full(a.B, a.Ncap)
    return np.clip(np.array(a.kv_lens), 0, a.Ncap)


def reference(a, ins):
    k, v = logical_kv(a, ins)
    grp = a.Hq // a.Hkv
    kk, vv = np.repeat(k, grp, axis=1), np.repeat(v, grp, axis=1)
    scale = sc.f32(1.0 / np.sqrt(a.D))
    q = ins["q"]
    s = scale * np.einsum("bhid,bhjd->bhij", q, kk)
    smag = scale * np.einsum("bhid,bhjd->bhij", np.abs(q), np.abs(kk))
    lens = seq_lengths(a)
    i = np.arange(a.Nq)[None, :, None]
    j = np.arange(a.Ncap)[None, None, :]
    keep = j < lens[:, None, None]  # [B, Nq, Ncap]
    if a.mods:
        bias = sc.f32(0.05) * np.arange(a.Ncap)
        s, smag = s + bias, smag + bias
        keep = keep & ins["mask"][:, 0] & (j % 3 != 0)
    left, right = a.window if a.window is not None else (-1, -1)
    if a.causal:
        right = 0
    diag = np.full(a.B, a.diagonal) if a.diagonal is not None else lens - a.Nq
    dist = j - (i + diag[:, None, None])
    if left >= 0:
        keep = keep & (dist >= -left)
    if right >= 0:
        keep = keep & (dist <= right)
    keep = np.broadcast_to(keep[:, None], s.shape)
    s = np.where(keep, s, -np.inf)
    rowmax = s.max(axis=-1, keepdims=True)
    alive = np.isfinite(rowmax)
    e = np.exp(s - np.where(alive, rowmax, 0.0))
    tot = e.sum(axis=-1, keepdims=True)
    p = np.where(alive, e / np.where(alive, tot, 1.0), 0.0)
    out = np.einsum("bhij,bhjd->bhid", p, vv)
    lse = np.where(alive, rowmax + np.log(np.where(alive, tot, 1.0)), -np.inf)[..., 0]
    S = np.where(keep, smag, 0.0).max(axis=-1)
    # The value magnitude over the keys a row may weigh (unread pages excluded).
    V = np.where(keep[..., None], np.abs(vv)[:, :, None], 0.0).max(axis=(-2, -1))
    acc = sc.U32 * (3 * (a.D + 2) * S + 4 * a.Ncap + 64)
    return out, lse, alive[..., 0], acc, V


MODS = """ score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %c = arith.constant 0.05 : f32
    %x = arith.mulf %jf, %c : f32
    %r = arith.addf %s, %x : f32
    fa.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %r = arith.remui %j, %c3 : index
    %keep = arith.cmpi ne, %r, %c0 : index
    fa.yield %keep : i1
  }"""


def emit(a, ins):
    L = []
    w = L.append
    w("// Generated by kv_cache_case.py " + " ".join(sys.argv[1:]))
    w("func.func private @printMemrefF32(memref<*xf32>)")
    w("func.func @main() {")
    E, fmt, ttype = a.in_type, sc.fmt, sc.ttype

    def const(name, arr, elt, conv, dyn_dims):
        return sc.emit_const(w, name, arr, elt, conv, dyn_dims if a.dynamic else None)

    qt = const("q", ins["q"], E, fmt, (0, 2))
    kv_dyn = (0,) if a.paged else (0, 2)
    kt = const("k", ins["k"], E, fmt, kv_dyn)
    vt = const("v", ins["v"], E, fmt, kv_dyn)
    clauses = ""
    if a.mods:
        mt = const("mask", ins["mask"], "i1", lambda x: "true" if x else "false", (0, 2, 3))
        clauses += f" mask(%mask : {mt})"
    if a.diagonal is not None:
        w(f"  %diag = arith.constant {a.diagonal} : index")
        clauses += " diagonal(%diag)"
    if a.kv_lens is not None:
        lt = const("lens", np.array(a.kv_lens), "i32", str, (0,))
        clauses += f" kv_lens(%lens : {lt})"
    if a.paged:
        tt = const("table", ins["table"], "i32", str, (0, 1))
        clauses += f" pages(%table : {tt})"
    attrs = []
    if a.causal:
        attrs.append("causal")
    if a.window is not None:
        attrs.append(f"window = array<i64: {a.window[0]}, {a.window[1]}>")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    if a.mods:
        attr += MODS
    oshape, lshape = (a.B, a.Hq, a.Nq, a.Dv), (a.B, a.Hq, a.Nq)
    ot = ttype(["?", a.Hq, "?", a.Dv] if a.dynamic else oshape, a.out_type)
    lset = ttype(["?", a.Hq, "?"] if a.dynamic else lshape, "f32")
    res = f"({ot}, {lset})" if a.lse else ot
    lhs = "%o, %l" if a.lse else "%o"
    w(f"  {lhs} = fa.attention %q, %k, %v{clauses}{attr} : {qt}, {kt}, {vt} -> {res}")

    sc.emit_print_f32(w, "o", oshape, a.out_type, ot)
    if a.lse:
        sc.emit_print_f32(w, "l", lshape, "f32", lset)
    w("  return")
    w("}")
    return "\n".join(L) + "\n"


def check(a, ins):
    out, lse, alive, acc, V = reference(a, ins)
    return sc.check_printed(a.output, out, lse if a.lse else None, alive, acc, V, a.out_type)


def main(argv):
    a = parse_args(argv)
    ins = make_inputs(a)
    if a.mode == "emit":
        sys.stdout.write(emit(a, ins))
        return 0
    return check(a, ins)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
