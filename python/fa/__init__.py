"""fa: FlashAttention compiled by MLIR, from Python and PyTorch.

    import torch, fa
    out = fa.attention(q, k, v, causal=True)            # torch tensors [B, H, N, D] on CUDA
    out, lse = fa.attention(q, k, v, return_lse=True)
    out = fa.attention_varlen(q, k, v, cu_seqlens, cu_seqlens, causal=True)   # packed [T, H, D]
    kern = fa.compile("f16,d128,causal", chip="sm_90a")   # PTX + launch manifest
    fa.load_bundle("bundle/")                           # kernels compiled ahead of time
    out = fa.context_parallel.ring_attention(q, k, v, causal=True)   # sequence split over ranks

`import fa` imports neither torch nor the compiler library: fa.attention
imports torch on its first call, fa.compile loads libFAPythonCAPI.so on its
first call, and a machine without the compiler runs kernels from bundles
(`python -m fa.precompile`). docs/Python.md describes the design.
"""
from ._capi import CompileError, CompilerUnavailable, available as compiler_available  # noqa: F401
from .bundle import Bundle, BundleError, load_bundle  # noqa: F401
from .compiler import Kernel, compile, compiler_id  # noqa: F401,A004
from .validation import AttentionInputError, UnsupportedError  # noqa: F401
from .variant import Variant, chip_for_capability  # noqa: F401
from . import context_parallel, dispatch  # noqa: F401,E402

__all__ = ["AttentionInputError", "Bundle", "BundleError", "CompileError", "CompilerUnavailable",
           "Kernel", "UnsupportedError", "Variant", "attention", "attention_fp8",
           "attention_varlen",
           "chip_for_capability", "compile",
           "compiler_available", "compiler_id", "context_parallel", "cpu", "dispatch",
           "load_bundle"]

__version__ = "0.1.0"


# The functions that need PyTorch: name -> (module, what the ImportError adds),
# imported on first use so that `import fa` does not import torch (and
# torch.compile traces the function itself, with no import inside it).
_TORCH_FUNCTIONS = {
    "attention": (".torch_ops", "; fa.compile, fa.cpu and bundles work without it"),
    "attention_varlen": (".varlen", ""),
    "attention_fp8": (".fp8", ""),
}


def __getattr__(name):
    if name in _TORCH_FUNCTIONS:
        import importlib
        module, more = _TORCH_FUNCTIONS[name]
        try:
            fn = getattr(importlib.import_module(module, __name__), name)
        except ModuleNotFoundError as e:
            if e.name != "torch":
                raise
            raise ImportError(f"fa.{name} needs PyTorch (torch is not installed here){more}"
                              ) from e
        globals()[name] = fn
        return fn
    if name == "cpu":
        import importlib
        return importlib.import_module(".cpu", __name__)
    raise AttributeError(f"module 'fa' has no attribute {name!r}")
