"""Which kernel runs a variant: the loaded bundles first, then the compiler
(fa.compile, cached in memory and on disk). Pure Python, no torch.
"""
import threading

from . import _capi, bundle
from .validation import UnsupportedError

_kernels = {}  # Variant -> fa.Kernel, or the UnsupportedError it raised
_lock = threading.Lock()
# How each lookup was served (tests and the benchmark read it).
sources = {"bundle": 0, "compiled": 0}


def kernel(variant):
    """The fa.Kernel of `variant`; UnsupportedError when no bundle has it and
    the compiler cannot build it (or is not installed here)."""
    k = _kernels.get(variant)
    if k is None:
        with _lock:
            k = _kernels.get(variant)
            if k is None:
                k = _kernels[variant] = _find(variant)
    if isinstance(k, UnsupportedError):
        raise k
    return k


def _find(variant):
    k = bundle.find(variant)
    if k is not None:
        sources["bundle"] += 1
        return k
    from . import compiler
    try:
        k = compiler.compile_variant(variant)
    except _capi.CompilerUnavailable as e:
        names = ", ".join(b.directory for b in bundle.loaded()) or "none (set FA_BUNDLE)"
        return UnsupportedError(f"no kernel for {variant.chip} {variant.spec()}: not in the "
                                f"loaded bundles ({names}), and {e}")
    except _capi.CompileError as e:
        return UnsupportedError(f"no kernel for {variant.chip} {variant.spec()}: the compiler "
                                f"says:\n" + "\n".join(e.diagnostics or [str(e)]))
    sources["compiled"] += 1
    return k


# Memos of callers (fa.torch_ops) cleared with this one.
on_clear = []


def clear():
    """Forgets every lookup (fa.load_bundle calls it: a variant that had no
    kernel may have one now)."""
    with _lock:
        _kernels.clear()
        for f in on_clear:
            f()
