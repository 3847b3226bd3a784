"""One call of a variant kernel (bench/kernels_variants.mlir) bracketed for ncu.
Usage: ncu --profile-from-start off ... python3 prof_variant.py KDIR NAME [N]"""
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch
import common
kdir, name = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 16384
q, k, v = (torch.randn(1, 16, N, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
kern = common.load_named(kdir, name)
for _ in range(2):
    kern(q, k, v)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
kern(q, k, v)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
