"""Compares two runs' printMemrefF32 output (the CPU pipeline's and the
GPU's): the same memrefs, shapes and element count, every element within
atol + rtol * |expected|. Prints one line per memref and exits 1 on any
mismatch.

usage: compare_prints.py EXPECTED ACTUAL [--atol A] [--rtol R]
"""
import argparse
import re
import sys

HEADER = re.compile(r"Unranked Memref base@ = \S+ rank = (\d+) offset = \d+ "
                    r"sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =")
NUMBER = re.compile(r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def parse(path):
    text = open(path).read()
    heads = list(HEADER.finditer(text))
    memrefs = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        values = [float(v) for v in NUMBER.findall(text[h.end():end])]
        memrefs.append((h.group(2), values))
    return memrefs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("expected")
    p.add_argument("actual")
    p.add_argument("--atol", type=float, default=5e-3)
    p.add_argument("--rtol", type=float, default=5e-3)
    args = p.parse_args()
    expected, actual = parse(args.expected), parse(args.actual)
    ok = len(expected) == len(actual) and len(expected) > 0
    if not ok:
        print(f"memref count differs: {len(expected)} vs {len(actual)}")
    for i, ((es, ev), (as_, av)) in enumerate(zip(expected, actual)):
        if es != as_ or len(ev) != len(av):
            print(f"memref {i}: sizes [{es}] vs [{as_}], {len(ev)} vs {len(av)} values")
            ok = False
            continue
        worst, where = 0.0, -1
        bad = 0
        for j, (e, a) in enumerate(zip(ev, av)):
            if e == a:  # also -inf == -inf
                continue
            err = abs(e - a)
            if not err <= args.atol + args.rtol * abs(e):
                bad += 1
            if err > worst or err != err:
                worst, where = err, j
        print(f"memref {i}: sizes [{es}], {len(ev)} values, max |diff| "
              f"{worst:.3g} (element {where}), {bad} outside tolerance")
        ok &= bad == 0
    print("MATCH" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
