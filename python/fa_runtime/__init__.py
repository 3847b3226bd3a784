"""fa_runtime: launch fa-generated PTX kernels through the CUDA driver API.

Pure Python (ctypes over libcuda.so); needs no MLIR and nothing installed.
Reads the PTX + JSON manifest written by `fa-opt ... fa-dump-kernel{dir=...}`.

    from fa_runtime import Kernel
    k = Kernel.load("out/attn_kernel.json")
    k.launch_ptrs(q_ptr, k_ptr, v_ptr, o_ptr, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000)
    o = k(q, k_, v)          # torch tensors [B, H, N, D], contiguous, on the GPU
"""
from .driver import Kernel, CudaError  # noqa: F401
