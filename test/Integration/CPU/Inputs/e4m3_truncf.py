#!/usr/bin/env python3
"""arith.truncf f32 -> f8E4M3FN on the CPU (fa-expand-f8e4m3fn-truncf), checked
against an independent numpy rounding.

    e4m3_truncf.py emit          > case.mlir   (@main truncates, extends back, prints)
    e4m3_truncf.py check out.txt               (PASS / FAIL)

Inputs: every finite E4M3 value and its negative; every midpoint between two
neighbours (ties: must go to the even code); the midpoints +- one f32 ulp;
values above 448 (464 = the midpoint to the next would-be value, 1e6, inf),
which saturate to +-448; the f32 smallest subnormal and normal; a NaN. The
reference rounds to nearest, ties to even code, saturating at 448 (as
cvt.rn.satfinite does); NaN must stay NaN.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdpa_case import E4M3  # noqa: E402  finite non-negative E4M3 values by code

def reference(x):
    """Nearest E4M3 value, ties to the even code, saturating at 448."""
    out = []
    for v in x:
        if np.isnan(v):
            out.append(np.nan)
            continue
        a = min(abs(v), 448.0)
        i = int(np.searchsorted(E4M3, a))
        if i >= len(E4M3):
            r = E4M3[-1]
        elif E4M3[i] == a or i == 0:
            r = E4M3[i]
        else:
            lo, hi = E4M3[i - 1], E4M3[i]
            r = lo if a - lo < hi - a else hi if hi - a < a - lo else (lo if (i - 1) % 2 == 0 else hi)
        out.append(np.copysign(r, v))
    return np.array(out)

def inputs():
    f = np.float32
    xs = list(E4M3)
    mids = (E4M3[1:] + E4M3[:-1]) / 2  # exact in f32 (4 significant bits)
    xs += list(mids)
    xs += [float(np.nextafter(f(m), f(np.inf))) for m in mids]
    xs += [float(np.nextafter(f(m), f(-np.inf))) for m in mids]
    xs += [464.0, 460.0, 1e6, float(np.finfo(np.float32).tiny), 1e-45, 2.0 ** -10, 3 * 2.0 ** -11]
    xs = xs + [-x for x in xs]
    return np.array([float(f(x)) for x in xs])

def emit():
    xs = inputs()
    n = len(xs) + 2
    body = ", ".join(repr(float(x)) for x in xs)
    print("func.func private @printMemrefF32(memref<*xf32>)")
    print(f"func.func @conv(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{")
    print(f"  %t = arith.truncf %x : tensor<{n}xf32> to tensor<{n}xf8E4M3FN>")
    print(f"  %e = arith.extf %t : tensor<{n}xf8E4M3FN> to tensor<{n}xf32>")
    print(f"  return %e : tensor<{n}xf32>")
    print("}")
    print("func.func @main() {")
    print(f"  %c = arith.constant dense<[{body}, 0x7F800000, 0x7FC00000]> : tensor<{n}xf32>")
    print(f"  %f = call @conv(%c) : (tensor<{n}xf32>) -> tensor<{n}xf32>")
    print(f"  %m = bufferization.to_buffer %f : tensor<{n}xf32> to memref<{n}xf32>")
    print(f"  %u = memref.cast %m : memref<{n}xf32> to memref<*xf32>")
    print("  call @printMemrefF32(%u) : (memref<*xf32>) -> ()")
    print("  return")
    print("}")

def check(path):
    import re
    text = open(path).read().split("data =", 1)[1]
    got = np.array([float(t) for t in re.findall(r"-?nan|-?inf|[-+]?\d+\.?\d*(?:e[-+]?\d+)?", text)])
    xs = np.concatenate([inputs(), [np.inf, np.nan]])
    ref = reference(xs)
    if len(got) != len(ref):
        print(f"FAIL parsed {len(got)} values, expected {len(ref)}")
        return 1
    # printMemrefF32 prints 6 significant digits; E4M3 values differ by >= 6%.
    bad = [(x, g, r) for x, g, r in zip(xs, got, ref)
           if not ((np.isnan(r) and np.isnan(g)) or (g == r) or abs(g - r) <= 1e-5 * abs(r))]
    if bad:
        print("FAIL " + "; ".join(f"truncf({x!r}) = {g!r}, expected {r!r}" for x, g, r in bad[:5]))
        return 1
    print(f"PASS {len(xs)} values")
    return 0

if __name__ == "__main__":
    sys.exit(emit() if sys.argv[1] == "emit" else check(sys.argv[2]))
