"""The transpose-v fp8 kernels (D = 64 and 128) at small odd shapes under compute-sanitizer:

    compute-sanitizer --tool racecheck --kernel-name kns=attn_ python3 sanitize_vt.py DIR

Each launch is also checked against bench_fp8's emulation (bench_fp8.check_one). Exits 1 if any
result was wrong."""
import os, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
import bench_fp8

SHAPES = ((1, 2, 1, 77, 333), (1, 4, 2, 333, 77), (1, 2, 1, 1, 1), (2, 2, 1, 200, 200),
          (1, 2, 2, 130, 900))
torch.manual_seed(0)
rows = []
for granularity, d, causal, lse in (("tensor", 128, True, True), ("tensor", 128, False, False),
                                    ("tensor", 64, True, True), ("head", 128, False, True),
                                    ("block", 128, True, False)):
    for sh in SHAPES:
        rows.append(bench_fp8.check_one(sys.argv[1], "f16", d, *sh, causal, lse=lse,
                                        granularity=granularity))
bad = [r for r in rows if not r["ok"]]
print(f"sanitize_vt: {len(rows) - len(bad)}/{len(rows)} right", flush=True)
for r in bad:
    print("WRONG:", r)
sys.exit(1 if bad else 0)
