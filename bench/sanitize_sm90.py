"""A few sm_90a shapes for compute-sanitizer, each checked against the f32 reference
(bench/common.check_case): full and causal, d64 / d128, odd lengths, GQA. The full d64 shape
has 512 tiles, about 4 per CTA of a persistent kernel on 132 SMs, so both Q tiles of the
persistent schedule (docs/SM90.md) are filled, freed and reused.

    compute-sanitizer --tool racecheck python3 bench/sanitize_sm90.py DIR90

DIR90: the fa-dump-kernel output of bench/kernels_sm90.mlir (shapes of head dims it lacks are
skipped). Exits 1 if a result is wrong.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from common import check_case, has_kernel, kernel_name, load  # noqa: E402

# (dtype, head dim, causal, (B, Hq, Hkv, Nq, Nk))
SHAPES = (("bf16", 64, False, (4, 16, 16, 1024, 1024)), ("bf16", 128, True, (3, 8, 2, 1000, 1000)),
          ("f16", 128, False, (2, 12, 4, 777, 1500)), ("f16", 64, True, (4, 16, 16, 1024, 1024)))


def main():
    kdir = sys.argv[1]
    torch.manual_seed(1)
    ok = True
    for dt, d, causal, (B, Hq, Hkv, Nq, Nk) in SHAPES:
        if not has_kernel(kdir, kernel_name(dt, d, causal)):
            continue  # a set of one head dim
        ok &= check_case(load(kdir, dt, d, causal), dt, d, B, Hq, Hkv, Nq, Nk, causal=causal)["ok"]
    print("sanitize_sm90: all right" if ok else "sanitize_sm90: FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
