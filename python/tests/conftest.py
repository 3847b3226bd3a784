"""Fixtures of the fa package's tests (no GPU, no torch).

Each test gets its own disk cache (FA_CACHE_DIR in a temporary directory) and
an empty in-memory cache, so hits and misses are the test's own.
"""
import os
import shutil

import pytest

import fa
from fa import bundle, compiler, dispatch
from fa.variant import Variant


def ptxas():
    return shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas"
                                     if os.path.exists("/usr/local/cuda/bin/ptxas") else None)


needs_compiler = pytest.mark.skipif(not fa.compiler_available(),
                                    reason="the compiler library is not installed")


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("FA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FA_BUNDLE", raising=False)
    compiler._memory.clear()
    for k in compiler.stats:
        compiler.stats[k] = 0
    dispatch.clear()
    bundle._bundles.clear()
    bundle._env_loaded = None
    yield tmp_path / "cache"
    compiler._memory.clear()
    dispatch.clear()
    bundle._bundles.clear()


def grad_manifest(variant, block_kv=64, smem=40960):
    """The launch manifest of `variant`'s backward kernel (a Variant with
    grad) as the compiler's contract says it (docs/Backward.md, "op":
    "attention_grad"): written by hand, so that the runtime and the autograd
    plumbing are tested without the kernel. test_grad.py checks it against a
    compiled one where the compiler has the kernel."""
    assert variant.grad
    name = variant.func_name()
    dt = variant.dtype
    qs, kvs, rows = ["B", "Hq", "Nq", "D"], ["B", "Hkv", "Nk", "D"], ["B", "Hq", "Nq"]

    def ptr(tensor, dtype, shape, align=16):
        return {"name": tensor, "tensor": tensor, "type": "ptr", "dtype": dtype, "shape": shape,
                "align_bytes": align}
    params = [ptr("q", dt, qs), ptr("k", dt, kvs), ptr("v", dt, kvs), ptr("do", dt, qs),
              ptr("lse", "f32", rows, 4), ptr("delta", "f32", rows, 4),
              ptr("dq_accum", "f32", qs, 4), ptr("dk", dt, kvs), ptr("dv", dt, kvs)]
    params += [{"name": s, "type": "i32"} for s in ("B", "Hq", "Hkv", "Nq", "Nk")]
    return {"schema_version": 1, "op": "attention_grad", "kernel": name + "_kernel",
            "function": name, "ptx": name + "_kernel.ptx", "chip": variant.chip, "dtype": dt,
            "head_dim": variant.head_dim, "causal": variant.causal,
            "window": list(variant.window) if variant.window else None,
            "scale": variant.scale, "block_q": 64, "block_kv": block_kv, "params": params,
            "grid": [{"ceil_div": ["Nk", block_kv]}, "Hkv", "B"], "block": [128, 1, 1],
            "dynamic_shared_memory_bytes": smem, "static_shared_memory_bytes": 0,
            "tensor_maps": []}


def grad_bundle(directory, specs, chip="sm_90a"):
    """A bundle of hand-written backward kernels (grad_manifest, PTX with no
    code) for the variant specs; returns its directory."""
    kernels = []
    for s in specs:
        v = Variant.parse(s, chip=chip)
        m = grad_manifest(v)
        kernels.append((v, fa.Kernel(m, f"// fake backward kernel {m['kernel']}\n")))
    bundle.write(str(directory), kernels, compiler="hand-written")
    return str(directory)
