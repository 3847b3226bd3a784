#!/usr/bin/env python3
"""Prints two mlir-runner outputs (printMemrefF32 blocks) side by side.

Usage: compare_outputs.py TILED.out REFERENCE.out
Exits non-zero if they differ by more than 1e-5 (relative to max(1, |ref|))."""
import re
import sys

NUM = re.compile(r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def blocks(path):
    """[(header, [numbers])] for each printed memref."""
    result = []
    for chunk in open(path).read().split("Unranked Memref")[1:]:
        head, data = chunk.split("data =", 1)
        sizes = re.search(r"sizes = \[([^\]]*)\]", head).group(1)
        result.append((sizes, [float(x) for x in NUM.findall(data)]))
    return result


def main():
    tiled, ref = blocks(sys.argv[1]), blocks(sys.argv[2])
    worst = 0.0
    names = ["lse [B, Hq, Nq]", "out[0, 0, :, 0:4]"]
    for n, ((sizes, a), (_, b)) in enumerate(zip(tiled, ref)):
        title = names[n] if n < len(names) else f"result {n}"
        print(f"-- {title} (sizes [{sizes}])")
        print(f"{'index':>6} {'tiled':>12} {'reference':>12} {'|diff|':>10}")
        for i, (x, y) in enumerate(zip(a, b)):
            d = abs(x - y)
            worst = max(worst, d / max(1.0, abs(y)))
            print(f"{i:>6} {x:>12.6g} {y:>12.6g} {d:>10.2g}")
    ok = len(tiled) == len(ref) and worst <= 1e-5
    print(f"max relative difference: {worst:.3g} -> {'MATCH' if ok else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
