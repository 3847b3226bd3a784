"""Runs every kernel of the given PTX + manifest directories once per small odd shape, for
compute-sanitizer (racecheck, synccheck, memcheck) on the GPU machine:

    compute-sanitizer --tool racecheck --kernel-name kns=attn_ \
        python3 bench/sanitize_kernels.py DIR [DIR ...]

Shapes: odd lengths, Nq != Nk both ways, GQA, a single row, an empty key range for the first
rows of a window (the CTAs whose range is empty). Each result is also compared with the f32
reference of bench/common.py, so a run under a tool still says whether the kernel was right.
Prints one line per (kernel, shape) and a summary; exits 1 if any result was wrong.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from common import DT, reference  # noqa: E402
from fa_runtime import Kernel  # noqa: E402

SHAPES = ((1, 2, 1, 77, 333), (1, 2, 2, 129, 200), (1, 4, 2, 333, 77), (1, 2, 1, 1, 1),
          (2, 2, 1, 200, 200))
TOL = {"f16": 4e-3, "bf16": 3e-2}


def main():
    dirs = sys.argv[1:]
    # FA_SAN_ONLY=a,b: only kernels whose name contains one of these.
    only = [x for x in os.environ.get("FA_SAN_ONLY", "").split(",") if x]
    # FA_SAN_SHAPES=0,2: only these entries of SHAPES.
    pick = [int(x) for x in os.environ.get("FA_SAN_SHAPES", "").split(",") if x]
    shapes = [SHAPES[i] for i in pick] if pick else SHAPES
    torch.manual_seed(0)
    bad = 0
    runs = 0
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            with open(path) as fh:
                m = json.load(fh)
            if only and not any(x in m["kernel"] for x in only):
                continue
            kern = Kernel.load(path)
            dt, hd = m["dtype"], m["head_dim"]
            window = tuple(m["window"]) if m.get("window") else (-1, -1)
            for B, Hq, Hkv, Nq, Nk in shapes:
                q = torch.randn(B, Hq, Nq, hd, device="cuda", dtype=DT[dt])
                k = torch.randn(B, Hkv, Nk, hd, device="cuda", dtype=DT[dt])
                v = torch.randn(B, Hkv, Nk, hd, device="cuda", dtype=DT[dt])
                res = kern(q, k, v)
                o = res[0] if m.get("lse") else res
                torch.cuda.synchronize()
                ref, _ = reference(q, k, v, False, window)
                err = (o.float() - ref).abs().max().item()
                ok = err <= TOL[dt]
                bad += not ok
                runs += 1
                print(f"{os.path.basename(d)}/{m['kernel']} B={B} Hq={Hq} Hkv={Hkv} Nq={Nq} "
                      f"Nk={Nk}: max err {err:.2e} {'OK' if ok else 'WRONG'}", flush=True)
    print(f"sanitize_kernels: {runs} launches, {bad} wrong", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
