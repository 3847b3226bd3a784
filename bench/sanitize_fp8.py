"""The fp8 kernels at small odd shapes, for compute-sanitizer on the GPU machine:

    compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 bench/sanitize_fp8.py DIR8

DIR8 as for bench_fp8.py. Each launch is also checked (bench_fp8.check_one), so a run under a
tool still says whether the kernel was right. Exits 1 if any result was wrong.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import bench_fp8  # noqa: E402

SHAPES = ((1, 2, 1, 77, 333), (1, 4, 2, 333, 77), (1, 2, 1, 1, 1), (2, 2, 1, 200, 200))


def main():
    torch.manual_seed(0)
    rows = []
    for granularity, d, causal, lse in (("tensor", 128, True, True), ("tensor", 256, False, False),
                                        ("tensor", 256, True, True), ("tensor", 64, True, True),
                                        ("head", 128, False, True), ("block", 128, True, False),
                                        ("block", 256, True, True)):
        for sh in SHAPES:
            rows.append(bench_fp8.check_one(sys.argv[1], "f16", d, *sh, causal, lse=lse,
                                            granularity=granularity))
    bad = [r for r in rows if not r["ok"]]
    print(f"sanitize_fp8: {len(rows) - len(bad)}/{len(rows)} right", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
