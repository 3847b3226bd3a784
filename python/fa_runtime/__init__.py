"""fa_runtime: launch fa-generated PTX kernels through the CUDA driver API.

Pure Python (ctypes over libcuda.so); needs no MLIR and nothing installed.
Reads the PTX + JSON manifest written by `fa-opt ... fa-dump-kernel{dir=...}`
(schema_version 1, docs/Manifest.md; other versions are refused).

    from fa_runtime import Kernel
    k = Kernel.load("out/attn_kernel.json")
    o = k(q, k_, v)          # torch tensors [B, H, N, D] on one CUDA device
    k.launch_ptrs(q_ptr, k_ptr, v_ptr, o_ptr, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000)
    o = paged(q, k_pool, v_pool, kv_lens=lens, page_table=table)   # "page_size" kernels

Every launch is checked against the manifest before any driver call
(fa_runtime.manifest.check_launch): a tensor that does not fit the kernel
raises ValueError naming it.
"""
from .driver import CudaError, Kernel, describe  # noqa: F401
from .manifest import (SCHEMA_VERSION, LaunchPlan, ManifestError, TensorDesc,  # noqa: F401
                       check_index_values, check_launch, check_manifest)
