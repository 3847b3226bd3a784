"""fa_runtime: launch fa-generated PTX kernels through the CUDA driver API.

Pure Python (ctypes over libcuda.so); needs no MLIR and nothing installed.
Reads the PTX + JSON manifest written by `fa-opt ... fa-dump-kernel{dir=...}`
(schema_version 1, docs/Manifest.md; other versions are refused).

    from fa_runtime import Kernel
    k = Kernel.load("out/attn_kernel.json")
    o = k(q, k_, v)          # torch tensors [B, H, N, D] on one CUDA device
    k.launch_ptrs(q_ptr, k_ptr, v_ptr, o_ptr, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000)
    o = paged(q, k_pool, v_pool, kv_lens=lens, page_table=table)   # "page_size" kernels
    o = packed(q, k_, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)      # "varlen" kernels
                             # (q [T, Hq, D] token-major, or [1, Hq, T, D]: "varlen_layout")

Every launch is checked against the manifest before any driver call
(fa_runtime.manifest.check_launch): a tensor that does not fit the kernel
raises ValueError naming it.
"""
from .driver import CudaError, Kernel, describe  # noqa: F401
from .manifest import (SCHEMA_VERSION, VARLEN_LAYOUTS, LaunchPlan,  # noqa: F401
                       ManifestError, TensorDesc, check_cu_seqlens, check_index_values,
                       check_launch, check_manifest)
