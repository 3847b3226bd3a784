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
from fa_runtime import TensorDesc
from fa_runtime.manifest import contiguous_strides


def ptxas():
    return shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas"
                                     if os.path.exists("/usr/local/cuda/bin/ptxas") else None)


needs_compiler = pytest.mark.skipif(not fa.compiler_available(),
                                    reason="the compiler library is not installed")

_next_address = [0]


def tensor(shape, dtype="f16", device="cuda:0", strides=None):
    """The TensorDesc of a tensor for fa_runtime.manifest's checks (no torch):
    contiguous unless `strides` says otherwise, at a fresh 1 MiB-aligned address."""
    _next_address[0] += 1
    return TensorDesc(tuple(shape), dtype, device,
                      tuple(strides) if strides else contiguous_strides(shape),
                      0x7f0000000000 + 0x100000 * _next_address[0])


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


def grad_manifest(variant, block_kv=64, smem=40960, tensor_map=False, auxiliary=False):
    """The launch manifest of `variant`'s backward kernel (a Variant with
    grad) as the compiler's contract says it (docs/Backward.md, "op":
    "attention_grad"): written by hand, so that the runtime and the autograd
    plumbing are tested without the kernel. test_grad.py checks it against a
    compiled one where the compiler has the kernel. `tensor_map`: the sm_90a
    kernel's form, q, k, v, do and dq_accum reached through the tensor maps
    q_map, k_map, v_map, do_map and dq_accum_map. `auxiliary`: with the
    compiler's preprocess and postprocess kernels ("auxiliary_kernels")."""
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
    maps = []
    if tensor_map:
        for i in (0, 1, 2, 3, 6):
            params[i].update(name=params[i]["tensor"] + "_map", type="tensormap",
                             align_bytes=16)
        for name in ("q_map", "k_map", "v_map", "do_map"):  # f16 6, bf16 9
            n, h, rows = ("Nk", "Hkv", 128) if name in ("k_map", "v_map") else ("Nq", "Hq", 64)
            maps.append({"param": name, "rank": 3,
                         "dims": ["D", n, {"mul": ["B", h]}],
                         "strides_bytes": [{"mul": ["D", 2]}, {"mul": [n, "D", 2]}],
                         "box": [64, rows, 1], "element_strides": [1, 1, 1],
                         "cuda_enums": {"tensorDataType": 6 if dt == "f16" else 9,
                                        "interleave": 0, "swizzle": 3, "l2Promotion": 2,
                                        "oobFill": 0}})
        maps.append({"param": "dq_accum_map", "rank": 3,
                     "dims": ["D", "Nq", {"mul": ["B", "Hq"]}],
                     "strides_bytes": [{"mul": ["D", 4]}, {"mul": ["Nq", "D", 4]}],
                     "box": [32, 64, 1], "element_strides": [1, 1, 1],
                     "cuda_enums": {"tensorDataType": 7, "interleave": 0, "swizzle": 3,
                                    "l2Promotion": 0, "oobFill": 0}})
    sizes = [{"name": s, "type": "i32"} for s in ("B", "Hq", "Hkv", "Nq", "Nk")]
    rows_grid = [{"ceil_div": ["Nq", 64]}, "Hq", "B"]
    aux = [{"op": "attention_grad_preprocess", "kernel": name + "_kernel_preprocess",
            "params": [ptr("do", dt, qs), ptr("out", dt, qs),
                       ptr("delta", "f32", ["B", "Hq", "Nq"], 4),
                       ptr("dq_accum", "f32", qs)] + sizes,
            "grid": rows_grid, "block": [256, 1, 1]},
           {"op": "attention_grad_postprocess", "kernel": name + "_kernel_postprocess",
            "params": [ptr("dq_accum", "f32", qs), ptr("dq", dt, qs)] + sizes,
            "grid": rows_grid, "block": [256, 1, 1]}]
    extra = {"auxiliary_kernels": aux} if auxiliary else {}
    return {**extra, "schema_version": 1, "op": "attention_grad", "kernel": name + "_kernel",
            "function": name, "ptx": name + "_kernel.ptx", "chip": variant.chip, "dtype": dt,
            "head_dim": variant.head_dim, "causal": variant.causal,
            "window": list(variant.window) if variant.window else None,
            "scale": variant.scale, "block_q": 64, "block_kv": block_kv, "params": params,
            "grid": [{"ceil_div": ["Nk", block_kv]}, "Hkv", "B"], "block": [128, 1, 1],
            "dynamic_shared_memory_bytes": smem, "static_shared_memory_bytes": 0,
            "tensor_maps": maps}


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


def paged_manifest(variant):
    """The launch manifest of a forward kernel with kv_lens and/or a page
    table (a Variant with kv_lens or page_size) as the compiler's contract
    says it (docs/Manifest.md, "Per-sequence lengths and paged KV caches"):
    written by hand, so that the runtime and fa.attention's routing are tested
    before (and without) the kernels. sm_90a: q, k, v as tensor maps, the pool's
    maps over [D, S, num_pages * Hkv]; sm_80: plain pointers. (A variant
    without either: the plain forward kernel's manifest.)"""
    name = variant.func_name()
    dt, D, S = variant.dtype, variant.head_dim, variant.page_size
    qs = ["B", "Hq", "Nq", "D"]
    kvs = ["num_pages", "Hkv", S, "D"] if S else ["B", "Hkv", "Nk", "D"]
    sm90 = variant.chip == "sm_90a"

    def ptr(tensor, dtype, shape, align=16, kind="ptr"):
        return {"name": tensor + ("_map" if kind == "tensormap" else ""), "tensor": tensor,
                "type": kind, "dtype": dtype, "shape": shape, "align_bytes": align}
    kind = "tensormap" if sm90 else "ptr"
    params = [ptr("q", dt, qs, kind=kind), ptr("k", dt, kvs, kind=kind),
              ptr("v", dt, kvs, kind=kind), ptr("out", dt, qs)]
    if variant.lse:
        params.append(ptr("lse", "f32", ["B", "Hq", "Nq"], 4))
    if variant.kv_lens:
        params.append(ptr("kv_lens", "i32", ["B"], 4))
    if S:
        params.append(ptr("page_table", "i32", ["B", "max_pages"], 4))
    params += [{"name": s, "type": "i32"} for s in ("B", "Hq", "Hkv", "Nq", "Nk")]
    if S:
        params += [{"name": s, "type": "i32"} for s in ("num_pages", "max_pages")]
    enums = {"tensorDataType": 6, "interleave": 0, "swizzle": 3, "l2Promotion": 2, "oobFill": 0}
    maps = []
    if sm90:
        rows, heads = (S, {"mul": ["num_pages", "Hkv"]}) if S else ("Nk", {"mul": ["B", "Hkv"]})
        maps.append({"param": "q_map", "rank": 3, "dims": ["D", "Nq", {"mul": ["B", "Hq"]}],
                     "strides_bytes": [{"mul": ["D", 2]}, {"mul": ["Nq", "D", 2]}],
                     "box": [64, 64, 1], "element_strides": [1, 1, 1], "cuda_enums": enums})
        for t in ("k", "v"):
            maps.append({"param": t + "_map", "rank": 3, "dims": ["D", rows, heads],
                         "strides_bytes": [{"mul": ["D", 2]}, {"mul": [rows, "D", 2]}],
                         "box": [64, min(S or 128, 128), 1], "element_strides": [1, 1, 1],
                         "cuda_enums": enums})
    m = {"schema_version": 1, "kernel": name + "_kernel", "function": name,
         "ptx": name + "_kernel.ptx", "chip": variant.chip, "dtype": dt, "head_dim": D,
         "causal": variant.causal, "window": list(variant.window) if variant.window else None,
         "scale": variant.scale, "lse": variant.lse, "block_q": 128, "block_kv": 128,
         "params": params, "grid": [{"ceil_div": ["Nq", 128]}, "Hq", "B"],
         "block": [384 if sm90 else 128, 1, 1], "dynamic_shared_memory_bytes": 40960,
         "static_shared_memory_bytes": 0, "tensor_maps": maps}
    if variant.kv_lens:
        m["kv_lens"] = True
    if S:
        m["page_size"] = S
    return m


def varlen_manifest(dtype="f16", head_dim=128, causal=False, lse=False, layout="thd"):
    """The launch manifest of an sm_90a forward kernel of packed variable-length
    sequences ("varlen": true) as the compiler's contract says it
    (docs/Manifest.md, "Packed variable-length sequences"): written by hand,
    so that the runtime is tested without the kernel. B is the number of
    sequences, packed along the tokens in `layout` ("varlen_layout"): "thd"
    (the compiler's default, token-major) q, out [Nq, Hq, D], k, v [Nk, Hkv,
    D], lse [Hq, Nq], the tensor maps' rows H * D elements apart and their
    head planes D; "htd" batch-1 [1, H, N, D] tensors, the maps the H planes
    of [D, N]."""
    mask = "causal" if causal else "full"
    name = f"fa_{dtype}_d{head_dim}_{mask}{'_lse' if lse else ''}_varlen"
    if layout == "thd":
        qs, kvs, rows = ["Nq", "Hq", "D"], ["Nk", "Hkv", "D"], ["Hq", "Nq"]
    else:
        assert layout == "htd", layout
        qs, kvs, rows = [1, "Hq", "Nq", "D"], [1, "Hkv", "Nk", "D"], [1, "Hq", "Nq"]

    def ptr(tensor, dt, shape, align=16, kind="ptr"):
        return {"name": tensor + ("_map" if kind == "tensormap" else ""), "tensor": tensor,
                "type": kind, "dtype": dt, "shape": shape, "align_bytes": align}
    params = [ptr("q", dtype, qs, kind="tensormap"), ptr("k", dtype, kvs, kind="tensormap"),
              ptr("v", dtype, kvs, kind="tensormap"), ptr("out", dtype, qs)]
    if lse:
        params.append(ptr("lse", "f32", rows, 4))
    params += [ptr(t, "i32", [{"add": ["B", 1]}], 4) for t in ("cu_seqlens_q", "cu_seqlens_k")]
    params += [{"name": s, "type": "i32"} for s in ("B", "Hq", "Hkv", "Nq", "Nk",
                                                      "max_seqlen_q")]
    enums = {"tensorDataType": 6, "interleave": 0, "swizzle": 3, "l2Promotion": 2, "oobFill": 0}

    def strides(n, h):
        if layout == "thd":  # a row holds the token's h heads; the planes are D apart
            return [{"mul": [h, "D", 2]}, {"mul": ["D", 2]}]
        return [{"mul": ["D", 2]}, {"mul": [n, "D", 2]}]
    maps = [{"param": t + "_map", "rank": 3, "dims": ["D", n, h], "strides_bytes": strides(n, h),
             "box": [64, 64 if t == "q" else 128, 1], "element_strides": [1, 1, 1],
             "cuda_enums": enums}
            for t, n, h in (("q", "Nq", "Hq"), ("k", "Nk", "Hkv"), ("v", "Nk", "Hkv"))]
    return {"schema_version": 1, "kernel": name + "_kernel", "function": name,
            "ptx": name + "_kernel.ptx", "chip": "sm_90a", "dtype": dtype, "head_dim": head_dim,
            "causal": causal, "window": None, "scale": None, "lse": lse,
            "block_q": 128, "block_kv": 128, "params": params,
            "grid": [{"ceil_div": ["max_seqlen_q", 128]}, "Hq", "B"], "block": [384, 1, 1],
            "dynamic_shared_memory_bytes": 40960, "static_shared_memory_bytes": 0,
            "tensor_maps": maps, "varlen": True, "varlen_layout": layout}


def paged_bundle(directory, specs, chip="sm_90a"):
    """A bundle of hand-written kv_lens / paged kernels (paged_manifest, PTX
    with no code) for the variant specs; returns its directory."""
    kernels = []
    for s in specs:
        v = Variant.parse(s, chip=chip)
        m = paged_manifest(v)
        kernels.append((v, fa.Kernel(m, f"// fake paged kernel {m['kernel']}\n")))
    bundle.write(str(directory), kernels, compiler="hand-written")
    return str(directory)


def broken_manifest(make):
    """broken(edit, m=None): `m` (default make()) after edit(m), for the
    malformed-manifest tables of the runtime tests."""
    def broken(edit, m=None):
        m = m or make()
        edit(m)
        return m
    return broken


def drop_param(name):
    """An edit removing parameter `name` from a manifest."""
    return lambda m: m["params"].remove(next(p for p in m["params"] if p["name"] == name))


def param_of(name):
    """The manifest's parameter `name` (an accessor for edits)."""
    return lambda m: next(p for p in m["params"] if p["name"] == name)

