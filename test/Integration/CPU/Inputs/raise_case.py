#!/usr/bin/env python3
"""Run an attention function written in linalg, raised and as written, and compare.

    raise_case.py emit    <func.mlir> --seed S [--round-to f16]   > case.mlir
    raise_case.py compare <a.out> <b.out> --out-type f32|f16|bf16

`emit` appends to the file (which defines @attn) a @main that builds
deterministic random arguments for @attn from its signature as dense constants
(tensors named like the mask get values in +-2, the others in +-1, rounded to
their element type; i1 tensors are true with probability 3/4, 1/4 when named
like "hide"; i32 / i64 tensors uniform in [0, 3)), calls it and prints the result (extended to f32) through
printMemrefF32. `compare` parses two runner outputs and prints `PASS ...` when
every element agrees within the tolerance of the output type, else `FAIL ...`
(and exits 1).

Tolerances.  The raised function runs fa.attention (f32 accumulation, online
softmax, one rounding of the output); the function as written runs its own
ops, which round where they round (an f16 matmul rounds every score and the
P V product to f16).  For an f32 output both compute in f32, so they differ by
accumulation error only: |a - b| <= 2e-5 * |b| + 1e-6 (printMemrefF32 prints 6
significant digits, 5e-6 relative).  For f16 / bf16 outputs the function as
written rounds Q K^T, the scaled scores, P and the P V sums to the output type:
|a - b| <= 8 u (|b| + 1) with u = 2^-11 (f16) or 2^-8 (bf16), values being
O(1) here (|v| <= 1, p in [0, 1]).
"""

import argparse
import re
import sys

import numpy as np

UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
# i1 arguments (boolean masks) are true with this probability (false with it
# when they hide keys where true): a row of 16 keys is then fully hidden with
# probability 0.25^16 (NaN as written, 0 raised).
KEEP_PROBABILITY = 0.75
# i32 / i64 arguments (document ids, lengths) are uniform in [0, INT_RANGE).
INT_RANGE = 3


def round_to(x, elt):
    if elt == "f16":
        return x.astype(np.float16).astype(np.float64)
    f = x.astype(np.float32)
    if elt == "bf16":
        bits = f.view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        f = bits.astype(np.uint32).view(np.float32)
    return f.astype(np.float64)


def dense(arr):
    if arr.ndim == 0:
        return repr(float(arr))
    return "[" + ", ".join(dense(x) for x in arr) + "]"


def dense_bool(arr):
    if arr.ndim == 0:
        return "true" if arr else "false"
    return "[" + ", ".join(dense_bool(x) for x in arr) + "]"


def dense_int(arr):
    if arr.ndim == 0:
        return str(int(arr))
    return "[" + ", ".join(dense_int(x) for x in arr) + "]"


def emit(path, seed, round_type=None):
    text = open(path).read()
    m = re.search(r"func\.func @attn\((.*?)\)\s*->\s*(tensor<[^>]*>)", text)
    if not m:
        sys.exit("no func.func @attn in " + path)
    args = [(n, d.rstrip("x"), e) for n, d, e in
            re.findall(r"%(\w+): tensor<((?:[0-9]+x)*)(f16|bf16|f32|i1|i32|i64)>", m.group(1))]
    res = re.fullmatch(r"tensor<([0-9x]+)x(f16|bf16|f32)>", m.group(2))
    rng = np.random.default_rng(seed)
    lines = [text, "func.func private @printMemrefF32(memref<*xf32>)",
             "func.func @main() {"]
    names = []
    for name, dims, elt in args:
        shape = [int(d) for d in dims.split("x")] if dims else []
        ttype = f"tensor<{dims}x{elt}>" if dims else f"tensor<{elt}>"
        if elt == "i1":
            p = 1.0 - KEEP_PROBABILITY if "hide" in name else KEEP_PROBABILITY
            x = rng.random(shape) < p
            lines.append(f"  %{name} = arith.constant dense<{dense_bool(x)}> : {ttype}")
            names.append((name, ttype))
            continue
        if elt in ("i32", "i64"):
            x = rng.integers(0, INT_RANGE, shape)
            lines.append(f"  %{name} = arith.constant dense<{dense_int(x)}> : {ttype}")
            names.append((name, ttype))
            continue
        bound = 2.0 if "mask" in name else 1.0
        x = round_to(rng.uniform(-bound, bound, shape), elt)
        if round_type:  # the values of a program of another precision
            x = round_to(x, round_type)
        lines.append(f"  %{name} = arith.constant dense<{dense(x)}> : {ttype}")
        names.append((name, ttype))
    rdims, relt = res.group(1), res.group(2)
    rt = f"tensor<{rdims}x{relt}>"
    lines.append(f"  %o = call @attn({', '.join('%' + n for n, _ in names)}) : "
                 f"({', '.join(t for _, t in names)}) -> {rt}")
    src = "%o"
    if relt != "f32":
        lines.append(f"  %of = arith.extf %o : {rt} to tensor<{rdims}xf32>")
        src = "%of"
    mt = f"memref<{rdims}xf32>"
    lines.append(f"  %om = bufferization.to_buffer {src} : tensor<{rdims}xf32> to {mt}")
    lines.append(f"  %ou = memref.cast %om : {mt} to memref<*xf32>")
    lines.append("  call @printMemrefF32(%ou) : (memref<*xf32>) -> ()")
    lines.append("  return")
    lines.append("}")
    print("\n".join(lines))


NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def parse(path):
    text = open(path).read()
    if "data =" not in text:
        return None
    return np.array([float(x) for x in NUMBER.findall(text.split("data =", 1)[1])])


def compare(a_path, b_path, out_type):
    a, b = parse(a_path), parse(b_path)
    if a is None or b is None:
        print("FAIL no printed array")
        return 1
    if a.shape != b.shape:
        print(f"FAIL {a.size} elements != {b.size}")
        return 1
    if out_type == "f32":
        tol = 2e-5 * np.abs(b) + 1e-6
    else:
        tol = 8 * UNIT[out_type] * (np.abs(b) + 1.0)
    bad = ~(np.abs(a - b) <= tol)  # NaN fails
    if bad.any():
        i = int(np.argmax(bad))
        print(f"FAIL element {i}: {a[i]!r} vs {b[i]!r} (tolerance {tol[i]:.3g}); "
              f"{int(bad.sum())} of {a.size} differ")
        return 1
    print(f"PASS {a.size} elements, max |a - b| = {np.abs(a - b).max():.3g}")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["emit", "compare"])
    p.add_argument("files", nargs="+")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-type", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--round-to", choices=["f16", "bf16"],
                   help="emit: also round float arguments to this type (an f32 twin of an "
                        "f16 program gets the same values)")
    a = p.parse_args(argv)
    if a.mode == "emit":
        emit(a.files[0], a.seed, a.round_to)
        return 0
    if len(a.files) != 2:
        p.error("compare needs two runner outputs")
    return compare(a.files[0], a.files[1], a.out_type)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
