"""The launch manifest of an fa kernel and the checks of a launch against it.

Pure Python: no CUDA, no torch, so that everything here is tested without a GPU
(test/python/). The format (schema_version 1) is written by the compiler's
LaunchManifest (lib/Conversion/AttentionToNVGPU/Common/LaunchManifest.h) and
described in docs/Manifest.md.

Sizes (grid, tensor shapes, tensor-map dims and strides) are expressions in a
small fixed grammar, interpreted here (nothing is passed to eval):
    expr := integer | symbol
          | {"ceil_div": [expr, expr]} | {"mul": [expr, ...]} | {"min": [expr, ...]}
          | {"add": [expr, ...]} | {"floor_div": [expr, expr]} | {"max": [expr, ...]}
    symbol := "B" | "Hq" | "Hkv" | "Nq" | "Nk" | "D" | "num_sms"
            | "num_pages" | "max_pages"                       (paged kernels)
            | "max_seqlen_q" | "max_seqlen_k"                 (varlen kernels)
            | "num_splits"                                    (split-KV kernels)

Kernels of an attention with per-sequence key lengths ("kv_lens": true) take
a kv_lens [B] i32 tensor; paged kernels ("page_size": S) take K and V as page
pools [num_pages, Hkv, S, D] and a page_table [B, max_pages] i32, and their
Nk is the capacity max_pages * S; varlen kernels ("varlen": true) take B
sequences packed along the tokens, in the memory layout their
"varlen_layout" names (VARLEN_LAYOUTS: "thd", token-major q [Nq, Hq, D],
k, v [Nk, Hkv, D]; "htd", batch-1 q [1, Hq, Nq, D], k, v [1, Hkv, Nk, D]),
and their offsets cu_seqlens_q, cu_seqlens_k [B + 1] i32; split-KV kernels
("split_kv": true) cut the keys of each query tile into num_splits chunks, one
CTA each, and take the workspaces split_o, split_lse and split_counter (zero
at launch) and the size num_splits (check_launch; docs/Manifest.md).
"""
import re
from collections import namedtuple

SCHEMA_VERSION = 1

# The kernel's i32 size parameters, the head dim, the device's SM count.
SIZE_NAMES = ("B", "Hq", "Hkv", "Nq", "Nk")
# The two more i32 sizes of a paged kernel: pages in the pool, pages per
# sequence in the page table (its Nk is max_pages * page_size).
PAGED_SIZE_NAMES = ("num_pages", "max_pages")
# The i32 size of a varlen kernel: an upper bound of its sequences' query rows
# (the forward's grid) or keys (the backward's). Given by the caller, not read
# off a tensor's shape.
VARLEN_SIZE_NAMES = ("max_seqlen_q", "max_seqlen_k")
# Which of them a varlen kernel of each op takes.
VARLEN_SIZE_OF_OP = {"attention": "max_seqlen_q", "attention_grad": "max_seqlen_k"}
# The i32 size of a split-KV kernel: the key chunks (CTAs) of each query tile,
# 1 .. MAX_NUM_SPLITS. Given by the caller (default 1), not read off a tensor.
SPLIT_KV_SIZE_NAMES = ("num_splits",)
MAX_NUM_SPLITS = 1024
SYMBOLS = SIZE_NAMES + PAGED_SIZE_NAMES + VARLEN_SIZE_NAMES + SPLIT_KV_SIZE_NAMES \
    + ("D", "num_sms")
_I32_SIZE_NAMES = SIZE_NAMES + PAGED_SIZE_NAMES + VARLEN_SIZE_NAMES + SPLIT_KV_SIZE_NAMES
# A split-KV kernel's workspaces (pointer parameters before the sizes), their
# dtypes: the partial outputs [num_splits, B, Hq, Nq, D] and log-sum-exps
# [num_splits, B, Hq, Nq], and the per-tile arrival counters [B, Hq,
# ceil(Nq / 128)], zero at launch (the kernel leaves them zero). Not tensors of
# the call: allocated by the runtime unless given (then checked and written).
SPLIT_KV_TENSORS = {"split_o": "f32", "split_lse": "f32", "split_counter": "i32"}
# A varlen kernel's offsets of its sequences in the packed q and k, v.
VARLEN_TENSORS = ("cu_seqlens_q", "cu_seqlens_k")
# The memory layouts of a varlen kernel's packed tensors (its "varlen_layout"):
# the tensor contracts of q, k, v, out and lse, and how each is written in the
# errors of a launch (Tq = Nq and Tk = Nk: the packed tokens).
#   thd  token-major, FlashAttention's varlen layout (the compiler's default):
#        the heads of a token are adjacent; lse is [Hq, Nq];
#   htd  the sequences packed along N of batch-1 tensors.
VarlenLayout = namedtuple("VarlenLayout", "contracts spelled")
VARLEN_LAYOUTS = {
    "thd": VarlenLayout(
        {"q": ["Nq", "Hq", "D"], "k": ["Nk", "Hkv", "D"], "v": ["Nk", "Hkv", "D"],
         "out": ["Nq", "Hq", "D"], "lse": ["Hq", "Nq"]},
        {"q": "[Tq, Hq, D]", "k": "[Tk, Hkv, D]", "v": "[Tk, Hkv, D]", "out": "[Tq, Hq, D]",
         "lse": "[Hq, Tq]"}),
    "htd": VarlenLayout(
        {"q": [1, "Hq", "Nq", "D"], "k": [1, "Hkv", "Nk", "D"], "v": [1, "Hkv", "Nk", "D"],
         "out": [1, "Hq", "Nq", "D"], "lse": [1, "Hq", "Nq"]},
        {"q": "[1, Hq, Tq, D]", "k": "[1, Hkv, Tk, D]", "v": "[1, Hkv, Tk, D]",
         "out": "[1, Hq, Tq, D]", "lse": "[1, Hq, Tq]"}),
}
_I32_MAX = 2**31 - 1
_PTR_TYPES = ("ptr", "tensormap")
# A CUtensorMap in device memory must be 64-byte aligned (cuda.h).
TENSOR_MAP_ALIGN = 64

# What a launch of each op's kernel involves, by the manifest's "op" (absent in
# forward manifests: "attention"):
#   required  tensors the caller gives (the others are allocated by the runtime);
#   written   tensors the kernel writes: never copied, so they must be contiguous;
#   host      tensors the runtime reads on the host side before the launch (not
#             kernel parameters), each checked against the named parameter's
#             contract (shape, dtype, device);
#   params    the exact set of tensor parameters the runtime passes, or None
#             when the manifest decides (the forward's fp8, mask, captured args).
# attention_grad: delta = rowsum(do * o) (minus grad_lse) and the zero-filled
# f32 dq_accum are computed before the launch, dq = dq_accum in q's dtype after
# it: by the manifest's auxiliary kernels where it has them, else with torch
# (driver.Kernel.grad, docs/Backward.md).
#   optional  a regex of the tensor parameters a kernel may take besides
#             `params` (the backward's dq_semaphore of a deterministic kernel
#             and grad_argN, the f32 gradient of argument N (grad_captures),
#             both allocated zero-filled by the runtime; the forward's mask
#             operand, and argN, the tensors its score_mod / mask_mod read).
OpContract = namedtuple("OpContract", "required written host params optional")
# Tensors a kernel reads because of its op's mask operand or modifier regions:
# always given by the caller.
_CAPTURED = re.compile(r"mask|arg[0-9]+")
# The backward's gradients of captured tensors (grad_captures): f32 buffers of
# the capture's shape the runtime allocates zero-filled and returns.
CAPTURE_GRAD = re.compile(r"grad_arg[0-9]+")
OPS = {
    "attention": OpContract(("q", "k", "v"), frozenset(("out", "lse")), {}, None, None),
    "attention_grad": OpContract(
        ("q", "k", "v", "do", "lse"), frozenset(("dq_accum", "dk", "dv")),
        {"o": "do", "grad_lse": "lse"},
        frozenset(("q", "k", "v", "do", "lse", "delta", "dq_accum", "dk", "dv")),
        re.compile(r"dq_semaphore|cu_seqlens_q|cu_seqlens_k|mask|arg[0-9]+|grad_arg[0-9]+")),
    # The backward's auxiliary kernels (manifest "auxiliary_kernels", launched by
    # driver.Kernel.grad around the backward kernel): delta and dq_accum's zeros
    # before it, dq after it.
    "attention_grad_preprocess": OpContract(
        ("do", "out"), frozenset(("delta", "dq_accum")), {},
        frozenset(("do", "out", "delta", "dq_accum")), None),
    "attention_grad_postprocess": OpContract(
        ("dq_accum",), frozenset(("dq",)), {}, frozenset(("dq_accum", "dq")), None),
    # An fp8 kernel's (per-block descales) quantization kernels (launched by
    # driver.Kernel.quantize): f16 / bf16 q, k, v to its e4m3 operands and
    # descales.
    "attention_fp8_quantize_q": OpContract(
        ("q",), frozenset(("q8", "q_descale")), {}, frozenset(("q", "q8", "q_descale")), None),
    "attention_fp8_quantize_k": OpContract(
        ("k",), frozenset(("k8", "k_descale")), {}, frozenset(("k", "k8", "k_descale")), None),
    "attention_fp8_quantize_v": OpContract(
        ("v",), frozenset(("v_t", "v_descale")), {}, frozenset(("v", "v_t", "v_descale")), None),
}
# The ops an attention_grad manifest's auxiliary kernels compute.
AUXILIARY_OPS = ("attention_grad_preprocess", "attention_grad_postprocess")
# The ops an fp8 attention manifest's auxiliary kernels compute.
FP8_QUANTIZE_OPS = ("attention_fp8_quantize_q", "attention_fp8_quantize_k",
                    "attention_fp8_quantize_v")
# op -> the auxiliary kernels a manifest of that op may list (all of them).
_AUXILIARY_OF = {"attention_grad": AUXILIARY_OPS, "attention": FP8_QUANTIZE_OPS}
_ALL_AUXILIARY = AUXILIARY_OPS + FP8_QUANTIZE_OPS


def auxiliary_manifests(manifest):
    """op -> the manifest of each of the kernel's "auxiliary_kernels" (kernels of
    the same PTX a launch runs around it: the backward's preprocess and
    postprocess, docs/Manifest.md): the kernel's own manifest with that
    kernel's op, entry, parameters, grid and block, and no shared memory or
    tensor maps. A varlen kernel's are not varlen: they run over the batch-1
    planes of the packed sequences as one batch (their contracts say [1, ...])."""
    out = {}
    for aux in manifest.get("auxiliary_kernels") or []:
        sub = {k: v for k, v in manifest.items()
               if k not in ("auxiliary_kernels", "tensor_maps", "varlen", "varlen_layout")}
        sub.update(op=aux.get("op"), kernel=aux.get("kernel"), params=aux.get("params"),
                   grid=aux.get("grid"), block=aux.get("block"), tensor_maps=[],
                   dynamic_shared_memory_bytes=0, static_shared_memory_bytes=0)
        out[aux.get("op")] = sub
    return out


def op_of(manifest):
    """The op a manifest's kernel computes ("attention" when it does not say)."""
    return manifest.get("op", "attention")


def takes_kv_lens(manifest):
    """Whether the kernel takes per-sequence key lengths (a kv_lens [B] i32 tensor)."""
    return manifest.get("kv_lens") is True


def takes_varlen(manifest):
    """Whether the kernel takes packed variable-length sequences (cu_seqlens_q and
    cu_seqlens_k [B + 1] i32 tensors, the size max_seqlen_q)."""
    return manifest.get("varlen") is True


def takes_split_kv(manifest):
    """Whether the kernel splits each query tile's keys among num_splits CTAs
    (the workspaces split_o, split_lse, split_counter and the size num_splits)."""
    return manifest.get("split_kv") is True


def varlen_layout(manifest):
    """The memory layout of a varlen kernel's packed tensors ("thd" or "htd",
    VARLEN_LAYOUTS), or None for a kernel without "varlen"."""
    return manifest.get("varlen_layout") if takes_varlen(manifest) else None


def packed_sizes(layout, q_shape, k_shape):
    """Hq, Hkv, Nq, Nk of a varlen launch from the shapes of its packed q and k
    in `layout` (thd: q [Nq, Hq, D], k [Nk, Hkv, D]; htd: q [1, Hq, Nq, D],
    k [1, Hkv, Nk, D])."""
    if layout == "thd":
        return dict(Hq=int(q_shape[1]), Hkv=int(k_shape[1]), Nq=int(q_shape[0]),
                    Nk=int(k_shape[0]))
    if layout == "htd":
        return dict(Hq=int(q_shape[1]), Hkv=int(k_shape[1]), Nq=int(q_shape[2]),
                    Nk=int(k_shape[2]))
    raise ValueError(f"varlen_layout {layout!r} is not one of {', '.join(VARLEN_LAYOUTS)}")


def output_shapes(manifest, sizes):
    """The shapes of out and lse (what a forward kernel writes; allocated by
    the runtime unless given) at these sizes: [B, Hq, Nq, D] and [B, Hq, Nq];
    a varlen kernel's in its layout (thd: [Nq, Hq, D] and [Hq, Nq]; htd:
    [1, Hq, Nq, D] and [1, Hq, Nq])."""
    B, Hq, Nq, D = sizes["B"], sizes["Hq"], sizes["Nq"], manifest["head_dim"]
    layout = varlen_layout(manifest)
    if layout == "thd":
        return (Nq, Hq, D), (Hq, Nq)
    if layout == "htd":
        return (1, Hq, Nq, D), (1, Hq, Nq)
    return (B, Hq, Nq, D), (B, Hq, Nq)


def page_size(manifest):
    """Keys per page of a paged kernel (K and V are page pools read through a
    page table), or None."""
    return manifest.get("page_size")


def size_names(manifest):
    """The i32 sizes check_launch computes from the tensors (those of its
    parameters and, for a paged kernel, num_pages and max_pages; not a varlen
    kernel's max_seqlen_q, which the caller gives)."""
    return SIZE_NAMES + (PAGED_SIZE_NAMES if page_size(manifest) is not None else ())


class ManifestError(ValueError):
    """A manifest this runtime cannot use (unknown schema version, malformed)."""


# ---------------------------------------------------------------------------
# Size expressions


def _ceil_div(a, b):
    if b <= 0:
        raise ValueError(f"ceil_div by {b}")
    return -(-a // b)


def _product(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def _floor_div(a, b):
    if b <= 0:
        raise ValueError(f"floor_div by {b}")
    return a // b


_OPS = {"ceil_div": (2, lambda xs: _ceil_div(xs[0], xs[1])),
        "floor_div": (2, lambda xs: _floor_div(xs[0], xs[1])),
        "mul": (None, _product),
        "min": (None, min),
        "max": (None, max),
        "add": (None, sum)}


def compile_expr(expr, where="expression"):
    """A function env -> int for one size expression; ManifestError (naming
    `where`) if `expr` is not in the grammar."""
    if isinstance(expr, bool):  # JSON true/false are no integers here
        raise ManifestError(f"{where}: {expr!r} is not a size expression")
    if isinstance(expr, int):
        return lambda env: expr
    if isinstance(expr, str):
        if expr not in SYMBOLS:
            raise ManifestError(f"{where}: unknown size symbol {expr!r} "
                                f"(known: {', '.join(SYMBOLS)})")
        def sym(env):
            if expr not in env:
                raise ValueError(f"{where}: no value for {expr}")
            return env[expr]
        return sym
    if isinstance(expr, dict) and len(expr) == 1:
        (op, args), = expr.items()
        if op in _OPS and isinstance(args, list) and args:
            arity, fn = _OPS[op]
            if arity is None or len(args) == arity:
                subs = [compile_expr(a, where) for a in args]
                return lambda env: fn([s(env) for s in subs])
    raise ManifestError(f"{where}: {expr!r} is not a size expression "
                        f"(integer, symbol, or one of {sorted(_OPS)} with a list of operands)")


def eval_expr(expr, env, where="expression"):
    return compile_expr(expr, where)(env)


def uses_symbol(expr, name):
    """Whether the expression names `name` (e.g. num_sms: the launch needs the
    device's SM count)."""
    if isinstance(expr, str):
        return expr == name
    if isinstance(expr, dict):
        return any(uses_symbol(a, name) for args in expr.values() for a in args)
    return False


# ---------------------------------------------------------------------------
# The manifest


def _require(obj, key, types, where):
    if key not in obj:
        raise ManifestError(f"{where}: no {key!r}")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, types):
        raise ManifestError(f"{where}: {key!r} is {v!r}")
    return v


def check_manifest(manifest, where="manifest", _auxiliary=False):
    """Raises ManifestError unless `manifest` is of a schema version this runtime
    knows and has what a launch reads (kernel, params, grid, block, head dim,
    tensor maps), with every size expression in the grammar."""
    if not isinstance(manifest, dict):
        raise ManifestError(f"{where}: not a JSON object")
    if "schema_version" not in manifest:
        raise ManifestError(
            f"{where}: no schema_version: written by an fa-opt older than the typed manifest "
            f"(grid formulas as strings); recompile the kernel (this runtime reads version "
            f"{SCHEMA_VERSION})")
    version = manifest["schema_version"]
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise ManifestError(
            f"{where}: schema_version {version!r} is not supported by this runtime "
            f"(it reads version {SCHEMA_VERSION}); use the fa_runtime of the fa-opt that "
            f"wrote the kernel, or recompile the kernel")
    where = f"{where} of {manifest.get('kernel', '?')}"
    _require(manifest, "kernel", str, where)
    _require(manifest, "ptx", str, where)
    _require(manifest, "dtype", str, where)
    _require(manifest, "head_dim", int, where)
    op = op_of(manifest)
    if op not in OPS or (op in _ALL_AUXILIARY) != _auxiliary:
        ops = _ALL_AUXILIARY if _auxiliary else [o for o in OPS if o not in _ALL_AUXILIARY]
        raise ManifestError(f"{where}: op {op!r} is not one this runtime launches "
                            f"({', '.join(ops)})")
    varlen = manifest.get("varlen", False)
    if not isinstance(varlen, bool):
        raise ManifestError(f"{where}: 'varlen' is {varlen!r}")
    split_kv = manifest.get("split_kv", False)
    if not isinstance(split_kv, bool):
        raise ManifestError(f"{where}: 'split_kv' is {split_kv!r}")

    def check_expr(e, ew):
        compile_expr(e, ew)
        for name in VARLEN_SIZE_NAMES:
            if not varlen and uses_symbol(e, name):
                raise ManifestError(f"{ew}: the size symbol {name} without 'varlen': true")
        if not split_kv and uses_symbol(e, "num_splits"):
            raise ManifestError(f"{ew}: the size symbol num_splits without 'split_kv': true")
    params = _require(manifest, "params", list, where)
    names = set()
    for i, p in enumerate(params):
        pw = f"{where}: params[{i}]"
        if not isinstance(p, dict):
            raise ManifestError(f"{pw}: not an object")
        name = _require(p, "name", str, pw)
        kind = _require(p, "type", str, pw)
        if name in names:
            raise ManifestError(f"{pw}: {name!r} appears twice")
        names.add(name)
        if kind == "i32":
            if name not in _I32_SIZE_NAMES:
                raise ManifestError(f"{pw}: i32 parameter {name!r} is no launch size "
                                    f"({', '.join(_I32_SIZE_NAMES)})")
        elif kind in _PTR_TYPES:
            _require(p, "tensor", str, pw)
            _require(p, "dtype", str, pw)
            _require(p, "align_bytes", int, pw)
            for j, e in enumerate(_require(p, "shape", list, pw)):
                check_expr(e, f"{pw}.shape[{j}]")
        else:
            raise ManifestError(f"{pw}: unknown parameter type {kind!r}")
    want = OPS[op].params
    have = {p["tensor"] for p in params if p["type"] in _PTR_TYPES}
    optional = OPS[op].optional
    if optional is not None:
        have = {n for n in have if n in want or not optional.fullmatch(n)}
    if want is not None and have != want:
        raise ManifestError(f"{where}: an {op} kernel takes the tensors "
                            f"{', '.join(sorted(want))}; this one takes {', '.join(sorted(have))}")
    _check_paging(manifest, params, where)
    _check_varlen(varlen, manifest.get("varlen_layout"), params, where, op)
    _check_split_kv(split_kv, params, where)
    if "num_splits_plan" in manifest:
        if not split_kv:
            raise ManifestError(f"{where}: 'num_splits_plan' without 'split_kv': true")
        check_expr(manifest["num_splits_plan"], f"{where}: num_splits_plan")
        if uses_symbol(manifest["num_splits_plan"], "num_splits"):
            raise ManifestError(f"{where}: num_splits_plan uses num_splits, which it gives")
    aux = manifest.get("auxiliary_kernels")
    if aux is not None:
        owned = _AUXILIARY_OF.get(op) if op != "attention" or \
            manifest.get("dtype") == "f8e4m3" else None
        if owned is None or not isinstance(aux, list) \
                or not all(isinstance(a, dict) for a in aux):
            raise ManifestError(f"{where}: 'auxiliary_kernels' must be a list of objects, "
                                f"in an attention_grad or fp8 attention manifest only")
        ops = [a.get("op") for a in aux]
        if sorted(ops) != sorted(owned):
            raise ManifestError(f"{where}: auxiliary_kernels compute {ops}, not one each of "
                                f"{', '.join(owned)}")
        for sub in auxiliary_manifests(manifest).values():
            if sub["kernel"] == manifest["kernel"]:
                raise ManifestError(f"{where}: an auxiliary kernel is the kernel itself")
            check_manifest(sub, f"{where}: auxiliary kernel", _auxiliary=True)
    grid = _require(manifest, "grid", list, where)
    block = _require(manifest, "block", list, where)
    if len(grid) != 3 or len(block) != 3:
        raise ManifestError(f"{where}: grid and block need 3 entries")
    for i, e in enumerate(grid):
        check_expr(e, f"{where}: grid[{i}]")
    if not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block):
        raise ManifestError(f"{where}: block {block!r}")
    maps = manifest.get("tensor_maps", [])
    map_params = [p["name"] for p in params if p["type"] == "tensormap"]
    if sorted(m.get("param") for m in maps) != sorted(map_params):
        raise ManifestError(f"{where}: tensor_maps do not match the tensormap parameters")
    for m in maps:
        mw = f"{where}: tensor map {m['param']}"
        rank = _require(m, "rank", int, mw)
        dims = _require(m, "dims", list, mw)
        strides = _require(m, "strides_bytes", list, mw)
        enums = _require(m, "cuda_enums", dict, mw)
        for key in ("tensorDataType", "interleave", "swizzle", "l2Promotion", "oobFill"):
            _require(enums, key, int, f"{mw}: cuda_enums")
        if len(dims) != rank or len(strides) != rank - 1 or len(m.get("box", [])) != rank \
                or len(m.get("element_strides", [])) != rank:
            raise ManifestError(f"{mw}: inconsistent ranks")
        for j, e in enumerate(dims):
            check_expr(e, f"{mw}.dims[{j}]")
        for j, e in enumerate(strides):
            check_expr(e, f"{mw}.strides_bytes[{j}]")


def _check_paging(manifest, params, where):
    """"kv_lens": true iff a kv_lens tensor parameter (i32); "page_size": S
    (a positive multiple of 16) iff a page_table tensor parameter (i32) and the
    i32 sizes num_pages and max_pages."""
    kv = manifest.get("kv_lens", False)
    if not isinstance(kv, bool):
        raise ManifestError(f"{where}: 'kv_lens' is {kv!r}")
    S = manifest.get("page_size")
    if S is not None and (isinstance(S, bool) or not isinstance(S, int) or S <= 0 or S % 16):
        raise ManifestError(f"{where}: 'page_size' is {S!r} (a positive multiple of 16)")
    tensors = {p["tensor"]: p for p in params if p["type"] in _PTR_TYPES}
    sizes = {p["name"] for p in params if p["type"] == "i32"}
    for tensor, present in (("kv_lens", kv), ("page_table", S is not None)):
        if present != (tensor in tensors):
            key = "'kv_lens': true" if tensor == "kv_lens" else "'page_size'"
            raise ManifestError(f"{where}: {'a' if present else 'no'} {tensor} parameter "
                                f"{'missing with' if present else 'without'} {key}")
        if present and tensors[tensor]["dtype"] != "i32":
            raise ManifestError(f"{where}: {tensor} has dtype {tensors[tensor]['dtype']}, "
                                f"not i32")
    paged_sizes = sizes & set(PAGED_SIZE_NAMES)
    if (S is not None) != bool(paged_sizes) or (paged_sizes and len(paged_sizes) != 2):
        raise ManifestError(f"{where}: the i32 sizes num_pages and max_pages go with "
                            f"'page_size' (both or neither)")


def _check_varlen(varlen, layout, params, where, op="attention"):
    """"varlen": true iff the tensor parameters cu_seqlens_q and cu_seqlens_k
    (i32) and the i32 size max_seqlen_q (a backward kernel's max_seqlen_k:
    VARLEN_SIZE_OF_OP), and iff "varlen_layout" (one of VARLEN_LAYOUTS),
    whose contracts the kernel's q, k, v, out and lse have."""
    tensors = {p["tensor"]: p for p in params if p["type"] in _PTR_TYPES}
    sizes = {p["name"] for p in params if p["type"] == "i32"}
    for tensor in VARLEN_TENSORS:
        if varlen != (tensor in tensors):
            raise ManifestError(f"{where}: {'a' if varlen else 'no'} {tensor} parameter "
                                f"{'missing with' if varlen else 'without'} 'varlen': true")
        if varlen and tensors[tensor]["dtype"] != "i32":
            raise ManifestError(f"{where}: {tensor} has dtype {tensors[tensor]['dtype']}, "
                                f"not i32")
    longest = VARLEN_SIZE_OF_OP.get(op, "max_seqlen_q")
    if varlen != (longest in sizes):
        raise ManifestError(f"{where}: the i32 size {longest} goes with 'varlen': true "
                            f"(both or neither)")
    for other in VARLEN_SIZE_NAMES:
        if other != longest and other in sizes:
            raise ManifestError(f"{where}: the i32 size {other} is not one an {op} kernel "
                                f"takes (its varlen size is {longest})")
    if not varlen:
        if layout is not None:
            raise ManifestError(f"{where}: 'varlen_layout' {layout!r} without 'varlen': true")
        return
    if layout is None:
        raise ManifestError(f"{where}: no 'varlen_layout' with 'varlen': true (the memory "
                            f"layout of the packed tensors: {' or '.join(VARLEN_LAYOUTS)})")
    if not isinstance(layout, str) or layout not in VARLEN_LAYOUTS:
        raise ManifestError(f"{where}: 'varlen_layout' is {layout!r}, not one this runtime "
                            f"knows ({', '.join(VARLEN_LAYOUTS)})")
    for tensor, want in VARLEN_LAYOUTS[layout].contracts.items():
        if tensor in tensors and tensors[tensor]["shape"] != want:
            raise ManifestError(f"{where}: {tensor} has the shape {tensors[tensor]['shape']!r}, "
                                f"not {want!r}, the contract of varlen_layout {layout}")


def _check_split_kv(split_kv, params, where):
    """"split_kv": true iff the pointer parameters split_o, split_lse (f32) and
    split_counter (i32) and the i32 size num_splits."""
    tensors = {p["tensor"]: p for p in params if p["type"] in _PTR_TYPES}
    sizes = {p["name"] for p in params if p["type"] == "i32"}
    for tensor, dtype in SPLIT_KV_TENSORS.items():
        if split_kv != (tensor in tensors):
            raise ManifestError(f"{where}: {'a' if split_kv else 'no'} {tensor} parameter "
                                f"{'missing with' if split_kv else 'without'} 'split_kv': true")
        if split_kv and (tensors[tensor]["type"] != "ptr" or tensors[tensor]["dtype"] != dtype):
            raise ManifestError(f"{where}: {tensor} is a {tensors[tensor]['type']} of dtype "
                                f"{tensors[tensor]['dtype']}, not a ptr of {dtype}")
    if split_kv != ("num_splits" in sizes):
        raise ManifestError(f"{where}: the i32 size num_splits goes with 'split_kv': true "
                            f"(both or neither)")


# ---------------------------------------------------------------------------
# Launch checks

# A tensor as the checks see it: shape and strides (in elements) as tuples,
# dtype a name ("f16", "bf16", "f32", ...), device a string ("cuda:0", "cpu"),
# data_ptr the address. driver.describe() makes one from a torch tensor.
TensorDesc = namedtuple("TensorDesc", "shape dtype device strides data_ptr")


def contiguous_strides(shape):
    strides, s = [], 1
    for n in reversed(shape):
        strides.append(s)
        s *= n
    return tuple(reversed(strides))


def is_contiguous(shape, strides):
    """Row-major dense (strides of extent-1 dimensions do not matter, as in torch)."""
    if _product(shape) == 0:
        return True
    want = contiguous_strides(shape)
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want))


def cuda_ordinal(device, name):
    """The ordinal of a "cuda" / "cuda:N" device string; ValueError naming the
    argument for anything else."""
    d = str(device)
    if d == "cuda":
        return 0
    if d.startswith("cuda:") and d[5:].isdigit():
        return int(d[5:])
    raise ValueError(f"{name}: on device {d!r}, not on a CUDA device")


LaunchPlan = namedtuple("LaunchPlan", "sizes device copies empty")
LaunchPlan.__doc__ = """What check_launch found: the i32 sizes (B, Hq, Hkv, Nq, Nk; a paged
kernel's also num_pages and max_pages, and its Nk is max_pages * page_size; a varlen kernel's
B is the number of sequences, its Nq and Nk the packed tokens of q and k in either layout, its
max_seqlen_q the caller's and not in the plan; a split-KV kernel's also num_splits, the
caller's), the CUDA device ordinal of the tensors, the
inputs that must be made contiguous (copied) before the launch, and whether there is nothing
to compute (an empty output; for a backward kernel, no query or no key: the gradients are
zeros)."""


def tensor_params(manifest):
    """The pointer parameters' tensor contracts, in launch order."""
    return [p for p in manifest["params"] if p["type"] in _PTR_TYPES]


def check_launch(manifest, tensors, copy_inputs=True, num_splits=None):
    """Checks a launch's tensors against the manifest before any driver call.

    `tensors` maps the names of the manifest's tensor contracts (q, k, v, out,
    lse, kv_lens, page_table, cu_seqlens_q, cu_seqlens_k; for a backward
    kernel q, k, v, do, lse, delta, dq_accum, dk, dv) and of the op's
    host-side tensors (OPS: the backward's o and grad_lse) to TensorDesc, or
    to None for a tensor the caller will allocate or compute. kv_lens ([B]
    i32) is required by a kernel with "kv_lens", page_table ([B, max_pages]
    i32) by a paged one, whose k and v are page pools [num_pages, Hkv,
    page_size, D] (num_pages > 0) and whose Nk is max_pages * page_size;
    cu_seqlens_q and cu_seqlens_k ([B + 1] i32) by a varlen kernel, whose B is
    the number of sequences (cu_seqlens_q.shape[0] - 1) and whose q, k, v,
    out, lse hold the sequences packed along the tokens in the kernel's
    "varlen_layout" (thd: q, out [Nq, Hq, D], k, v [Nk, Hkv, D], lse [Hq,
    Nq]; htd: batch-1 [1, H, N, ...]; the errors of their shapes say which);
    given to a kernel without them they are errors.
    A split-KV kernel ("split_kv") launches `num_splits` CTAs per query tile
    (the caller's, 1 .. MAX_NUM_SPLITS; default 1; an error for other kernels);
    its workspaces split_o, split_lse, split_counter (SPLIT_KV_TENSORS) may be
    None (the runtime allocates them) or given, then checked against their
    contracts at that num_splits and, like out, never copied.
    Checks, raising ValueError that names the argument: that no tensor is given
    that the kernel does not take; that the op's required tensors are given;
    dtype; rank; every dimension against the manifest (D is the kernel's head
    dim) and against the other tensors (B, Hq, Nq from q, a varlen kernel's B
    from cu_seqlens_q; Hkv, Nk from k, where the contracts put them); Hq %
    Hkv == 0; the sizes fit the kernel's i32 parameters; all tensors on one
    CUDA device; strides: inputs non-contiguous are copied (listed in the
    plan's copies; with copy_inputs=False rejected), the tensors the kernel
    writes (out and lse; dq_accum, dk and dv) non-contiguous are rejected (a
    copy would not be written back); the address alignment the manifest asks for (align_bytes).
    Host-side tensors are checked for shape, dtype and device only. Returns a
    LaunchPlan."""
    op_name = op_of(manifest)
    op = OPS[op_name]
    params = tensor_params(manifest)
    contracts = [(p["tensor"], p, False) for p in params]
    by_tensor = {p["tensor"]: p for p in params}
    contracts += [(name, by_tensor[like], True) for name, like in op.host.items()]
    known = {c[0] for c in contracts}
    kernel = manifest["kernel"]
    split_kv = takes_split_kv(manifest)
    for name, t in tensors.items():
        if name not in known and t is not None:
            if name in SPLIT_KV_TENSORS:
                raise ValueError(f"{name}: kernel {kernel} takes no {name}: {_NO_SPLIT_KV}")
            if name in _INDEX_HINTS:
                raise ValueError(f"{name}: kernel {kernel} takes no {name}: "
                                 f"{_INDEX_HINTS[name][1]}")
            raise ValueError(f"{name}: kernel {kernel} takes no {name} "
                             f"(it takes {', '.join(sorted(known))})")
    required = set(op.required) | {n for n in _INDEX_HINTS if n in by_tensor}
    env = {"D": manifest["head_dim"]}
    source = {"D": f"the head dim of kernel {kernel}"}
    if num_splits is not None and not split_kv:
        raise ValueError(f"num_splits: kernel {kernel} takes no num_splits: {_NO_SPLIT_KV}")
    if split_kv:
        num_splits = 1 if num_splits is None else num_splits
        check_num_splits(num_splits)
        env["num_splits"] = num_splits  # before the workspaces' contracts name it
        source["num_splits"] = "the num_splits argument"
    S = page_size(manifest)
    table = tensors.get("page_table")
    if S is not None and table is not None and len(table.shape) == 2:
        # The capacity first: any contract may name Nk.
        env["max_pages"] = int(table.shape[1])
        source["max_pages"] = "page_table.shape[1]"
        env["Nk"] = env["max_pages"] * S
        source["Nk"] = f"page_table (max_pages {env['max_pages']} x page_size {S})"
    varlen = takes_varlen(manifest)
    layout = varlen_layout(manifest)
    cu_q = tensors.get("cu_seqlens_q")
    if varlen and cu_q is not None and len(cu_q.shape) == 1:
        # B before the contracts [B + 1]: no contract of a varlen kernel has a bare B.
        if int(cu_q.shape[0]) == 0:
            raise ValueError("cu_seqlens_q: shape [0]: the offsets of B sequences are B + 1 "
                             "entries, at least the first, 0")
        env["B"] = int(cu_q.shape[0]) - 1
        source["B"] = "cu_seqlens_q.shape[0] - 1"
    device = None
    copies = []
    for name, p, host in contracts:
        t = tensors.get(name)
        if t is None:
            if name in _INDEX_HINTS and name in required:
                raise ValueError(f"{name}: missing: kernel {kernel} {_INDEX_HINTS[name][0]}")
            if _CAPTURED.fullmatch(name) and not host:
                raise ValueError(f"{name}: missing: kernel {kernel} reads it (the mask "
                                 f"operand, or function argument N as argN, read by "
                                 f"score_mod / mask_mod)")
            if name in op.required:
                hint = "" if op_name == "attention" else \
                    f" (kernel {manifest['kernel']} computes {op_name}: launch it with Kernel.grad)"
                raise ValueError(f"{name}: missing{hint}")
            continue
        if t.dtype != p["dtype"]:
            hint = f" ({name}.to(torch.int32))" if (t.dtype, p["dtype"]) == ("i64", "i32") \
                else ""
            raise ValueError(f"{name}: dtype {t.dtype}, but kernel {manifest['kernel']} "
                             f"takes {p['dtype']}{hint}")
        shape = tuple(int(n) for n in t.shape)
        want = p["shape"]
        # A packed tensor of a varlen kernel: its layout in the errors.
        packed = "" if layout is None or name not in VARLEN_LAYOUTS[layout].spelled else \
            _packed_hint(kernel, layout, name)
        if len(shape) != len(want):
            raise ValueError(f"{name}: rank {len(shape)} (shape {list(shape)}), but the kernel "
                             f"takes rank {len(want)} [{', '.join(map(str, want))}]{packed}")
        for i, (n, e) in enumerate(zip(shape, want)):
            if isinstance(e, str) and e not in env:
                env[e] = n
                source[e] = f"{name}.shape[{i}]"
                continue
            expect = eval_expr(e, env, f"{name}.shape[{i}]")
            if n != expect:
                what = f"{e} = {expect} from {source[e]}" if isinstance(e, str) else str(expect)
                if S is not None and name in ("k", "v") and i == 2:
                    what += (f" (the page size of kernel {kernel}: k and v are page pools "
                             f"[num_pages, Hkv, {S}, D])")
                if varlen and name in VARLEN_TENSORS:
                    what += f" (B + 1: B = {env['B']} sequences from {source['B']})"
                raise ValueError(f"{name}: shape[{i}] is {n}, but {what} (shape {list(shape)}, "
                                 f"expected [{', '.join(map(str, want))}]){packed}")
        ordinal = cuda_ordinal(t.device, name)
        if device is None:
            device = (ordinal, name)
        elif ordinal != device[0]:
            raise ValueError(f"{name}: on cuda:{ordinal}, but {device[1]} is on cuda:{device[0]}"
                             f" (all tensors must be on one device)")
        if host:
            continue  # read by torch on the host side: any strides, any address
        if not is_contiguous(shape, tuple(t.strides)):
            written = name in op.written or name in SPLIT_KV_TENSORS
            if not written and copy_inputs:
                copies.append(name)
            elif not written:
                raise ValueError(f"{name}: not contiguous (strides {list(t.strides)} for shape "
                                 f"{list(shape)}); pass a contiguous tensor (copy_inputs=False)")
            else:
                raise ValueError(f"{name}: not contiguous (strides {list(t.strides)} for shape "
                                 f"{list(shape)}); the kernel writes a dense row-major buffer and "
                                 f"a copy would not be written back: pass a contiguous {name}")
        align = p["align_bytes"]
        if name not in copies and int(t.data_ptr) % align:
            raise ValueError(f"{name}: address {int(t.data_ptr):#x} is not {align}-byte aligned "
                             f"(the kernel's accesses to it need {align})")
    names = size_names(manifest)
    missing = [s for s in names if s not in env]
    if missing:
        raise ValueError(f"no tensor gives {', '.join(missing)}")
    sizes = {s: env[s] for s in names}
    _check_sizes(sizes, {s: source[s].split(".")[0].split(" ")[0] for s in names})
    if split_kv:
        sizes["num_splits"] = num_splits
    empty = sizes["B"] * sizes["Hq"] * sizes["Nq"] == 0
    if op_name == "attention_grad":
        # No keys: every row fully masked, so dq = 0 and dk, dv have no rows;
        # no queries: dk = dv = 0. Either way nothing for the kernel to add.
        empty = empty or sizes["Nk"] == 0
    elif not empty and S is not None and sizes["max_pages"] == 0:
        raise ValueError("page_table: no pages per sequence (max_pages = 0): not supported by "
                         "the kernel (every output row would be fully masked)")
    elif not empty and sizes["Nk"] == 0:
        raise ValueError("k: no keys (Nk = 0): not supported by the kernel "
                         "(every output row would be fully masked)")
    if not empty and S is not None and sizes["num_pages"] == 0:
        raise ValueError("k: an empty page pool (num_pages = 0): the kernel clamps page ids "
                         "to [0, num_pages - 1]")
    return LaunchPlan(sizes, device[0], tuple(copies), empty)


def _packed_hint(kernel, layout, name):
    """What a varlen kernel's packed tensor `name` must be, appended to the
    errors of its shape."""
    how = "token-major" if layout == "thd" else "into one batch row"
    return (f"; {name} must be {VARLEN_LAYOUTS[layout].spelled[name]} (varlen_layout "
            f"{layout}): kernel {kernel} takes its sequences packed {how}, split by "
            f"cu_seqlens_q and cu_seqlens_k")


# What a kernel with the tensor does, and what to do when one is given to a
# kernel without it.
_INDEX_HINTS = {
    "cu_seqlens_q": ("takes packed variable-length sequences (cu_seqlens_q [B + 1] int32)",
                     "it was compiled without packed variable-length sequences (a variant "
                     "with varlen takes them)"),
    "cu_seqlens_k": ("takes packed variable-length sequences (cu_seqlens_k [B + 1] int32)",
                     "it was compiled without packed variable-length sequences (a variant "
                     "with varlen takes them)"),
    "kv_lens": ("takes per-sequence key lengths (kv_lens [B] int32)",
                "it was compiled without per-sequence key lengths (a variant with kv_lens "
                "takes them)"),
    "page_table": ("reads a paged KV cache through a page table (page_table [B, max_pages] "
                   "int32)",
                   "it reads contiguous K and V [B, Hkv, Nk, D] (a variant with page=S reads "
                   "page pools through a page table)"),
}


_NO_SPLIT_KV = ("it was compiled without split-KV (a variant with split_kv takes num_splits "
                "and its workspaces)")


def check_num_splits(n, arg="num_splits"):
    """ValueError naming `arg` unless a split-KV kernel's num_splits `n` is an
    int in 1 .. MAX_NUM_SPLITS (each query tile's keys cut into n chunks)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_NUM_SPLITS:
        raise ValueError(f"{arg}: num_splits = {n!r} is not a number of key splits "
                         f"(1 .. {MAX_NUM_SPLITS})")


def check_size(name, n, arg):
    """ValueError naming `arg` unless size `name` = `n` is an int in 0 .. 2^31-1."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= _I32_MAX:
        raise ValueError(f"{arg}: {name} = {n!r} is not an i32 size (0 .. {_I32_MAX})")


def _check_sizes(sizes, names):
    for s in _I32_SIZE_NAMES:
        if s in sizes:
            check_size(s, sizes[s], names[s])
    if sizes["Hkv"] == 0:
        if sizes["Hq"]:
            raise ValueError(f"{names['Hkv']}: Hkv = 0 key/value heads for Hq = {sizes['Hq']}")
    elif sizes["Hq"] % sizes["Hkv"]:
        raise ValueError(f"{names['Hkv']}: Hkv = {sizes['Hkv']} key/value heads do not divide "
                         f"Hq = {sizes['Hq']} query heads (grouped-query attention needs "
                         f"Hq % Hkv == 0)")


def check_sizes(manifest, sizes):
    """Checks launch_ptrs' sizes: every i32 parameter given (a varlen kernel's
    also max_seqlen_q, a split-KV kernel's num_splits), an integer in 0 ..
    2^31-1 (num_splits in 1 .. MAX_NUM_SPLITS), none unknown, Hq % Hkv == 0;
    for a paged kernel Nk == max_pages * page_size. Returns them in a new
    dict."""
    want = [p["name"] for p in manifest["params"] if p["type"] == "i32"]
    unknown = sorted(set(sizes) - set(want))
    if unknown:
        raise ValueError(f"{unknown[0]}: kernel {manifest['kernel']} has no size {unknown[0]} "
                         f"(sizes: {', '.join(want)})")
    missing = [s for s in want if s not in sizes]
    if missing:
        raise ValueError(f"{missing[0]}: missing (sizes: {', '.join(want)})")
    out = dict(sizes)
    _check_sizes(out, {s: s for s in _I32_SIZE_NAMES})
    if "num_splits" in out:
        check_num_splits(out["num_splits"])
    S = page_size(manifest)
    if S is not None and out["Nk"] != out["max_pages"] * S:
        raise ValueError(f"Nk: {out['Nk']}, but a paged kernel's Nk is max_pages x page_size "
                         f"= {out['max_pages']} x {S} = {out['max_pages'] * S}")
    return out


def check_index_values(kv_lens, page_table, capacity, num_pages=None, page_size=None):
    """The checked mode's host-side checks (FA_CHECK_INDICES=1, or
    check_indices=True): kv_lens (a list of ints, or None) in 0 .. capacity
    (the kernel's Nk), and, for a paged kernel, every page id a sequence reads
    (the first ceil(L_b / page_size) entries of its page_table row, all of
    them without kv_lens) in 0 .. num_pages - 1. ValueError naming the
    sequence and the page. Unchecked, the kernel clamps both (lengths to
    [0, capacity], page ids to [0, num_pages - 1])."""
    if kv_lens is not None:
        for b, n in enumerate(kv_lens):
            if n < 0:
                raise ValueError(f"kv_lens[{b}] = {n}: sequence {b} has a negative key length")
            if n > capacity:
                cap = (f"max_pages {capacity // page_size} x page_size {page_size}"
                       if page_size else "Nk")
                raise ValueError(f"kv_lens[{b}] = {n}: sequence {b} has more keys than the "
                                 f"capacity {capacity} ({cap})")
    if page_table is None:
        return
    for b, row in enumerate(page_table):
        n = capacity if kv_lens is None else kv_lens[b]
        used = -(-n // page_size)
        for j, page in enumerate(row[:used]):
            if not 0 <= page < num_pages:
                lens = f"kv_lens[{b}] = {n}" if kv_lens is not None else "no kv_lens"
                raise ValueError(
                    f"page_table[{b}, {j}] = {page}: sequence {b} reads page {j} of its row "
                    f"(pages 0 .. {used - 1}: {lens}, page_size {page_size}), and {page} is "
                    f"not a page of the pool (0 .. {num_pages - 1})")


def check_cu_seqlens(cu_seqlens_q, cu_seqlens_k, Nq, Nk, max_seqlen_q=None, max_seqlen_k=None):
    """The checked mode's host-side checks of a varlen launch (FA_CHECK_INDICES=1,
    or check_indices=True): the offsets (lists of B + 1 ints) start at 0, never
    decrease and end at the packed length (Nq for cu_seqlens_q, Nk for
    cu_seqlens_k); max_seqlen_q, when given, is at least the longest sequence's
    query rows, and max_seqlen_k (a backward kernel's) the longest sequence's
    keys. ValueError naming the sequence. Returns the longest query rows (0
    without sequences). Unchecked, the kernel clamps the offsets into [0, N],
    so nothing is read or written out of bounds, but it leaves unwritten the
    rows of out and lse that no sequence covers, and those of a sequence past
    its first max_seqlen_q (the backward: no gradient for keys past a
    sequence's first max_seqlen_k)."""
    for name, cu, n, size, what in (("cu_seqlens_q", cu_seqlens_q, Nq, "Nq", "query rows"),
                                    ("cu_seqlens_k", cu_seqlens_k, Nk, "Nk", "keys")):
        if cu[0] != 0:
            raise ValueError(f"{name}[0] = {cu[0]}: the offsets must start at 0 (sequence 0 "
                             f"starts at the first of the packed {what})")
        for s in range(len(cu) - 1):
            if cu[s + 1] < cu[s]:
                raise ValueError(f"{name}[{s + 1}] = {cu[s + 1]} < {name}[{s}] = {cu[s]}: "
                                 f"sequence {s} would have {cu[s + 1] - cu[s]} {what} (the "
                                 f"offsets must be nondecreasing)")
        B, end = len(cu) - 1, cu[-1]
        if end != n:
            why = (f"{what} {end} .. {n - 1} belong to no sequence" if end < n else
                   f"sequence {B - 1} ends past them")
            raise ValueError(f"{name}[{B}] = {end}: the offsets must end at {size} = {n}, the "
                             f"packed {what} ({why})")
    lengths = [b - a for a, b in zip(cu_seqlens_q, cu_seqlens_q[1:])]
    longest = max(lengths, default=0)
    if max_seqlen_q is not None and max_seqlen_q < longest:
        s = lengths.index(longest)
        raise ValueError(f"max_seqlen_q = {max_seqlen_q}, but sequence {s} has {longest} query "
                         f"rows (cu_seqlens_q[{s + 1}] - cu_seqlens_q[{s}]): the kernel would "
                         f"leave its rows past the first {max_seqlen_q} unwritten")
    if max_seqlen_k is not None:
        keys = [b - a for a, b in zip(cu_seqlens_k, cu_seqlens_k[1:])]
        if max_seqlen_k < max(keys, default=0):
            s = keys.index(max(keys))
            raise ValueError(f"max_seqlen_k = {max_seqlen_k}, but sequence {s} has {keys[s]} keys "
                             f"(cu_seqlens_k[{s + 1}] - cu_seqlens_k[{s}]): the backward kernel "
                             f"would give its keys past the first {max_seqlen_k} no gradient")
    return longest


def check_pointers(manifest, ptrs):
    """Checks launch_ptrs' pointers: one per pointer parameter, integers, aligned
    (align_bytes; 64 for a CUtensorMap). Returns them as ints."""
    params = tensor_params(manifest)
    if len(ptrs) != len(params):
        raise ValueError(f"expected {len(params)} pointers "
                         f"({', '.join(p['name'] for p in params)}), got {len(ptrs)}")
    out = []
    for p, ptr in zip(params, ptrs):
        try:
            a = int(ptr)
        except (TypeError, ValueError):
            raise ValueError(f"{p['name']}: {ptr!r} is not a device address") from None
        align = TENSOR_MAP_ALIGN if p["type"] == "tensormap" else p["align_bytes"]
        if a % align:
            raise ValueError(f"{p['name']}: address {a:#x} is not {align}-byte aligned")
        out.append(a)
    return out


def tensor_map_args(spec, sizes):
    """cuTensorMapEncodeTiled's arguments for one "tensor_maps" entry at these
    sizes (a dict with B, Hq, Hkv, Nq, Nk, D): a dict of rank, dims,
    strides_bytes, box, element_strides and the cuda.h enum values the compiler
    wrote. ValueError naming the map when a value breaks the driver's rules
    (dims in 1 .. 2^32, strides multiples of 16 below 2^40). The strides stay
    in the manifest's order, which need not be increasing (a thd varlen
    kernel's q rows are Hq * D elements apart, its head planes D: strides
    [Hq * D * 2, D * 2] bytes)."""
    where = f"tensor map {spec['param']}"
    dims = [eval_expr(e, sizes, f"{where}.dims") for e in spec["dims"]]
    strides = [eval_expr(e, sizes, f"{where}.strides_bytes") for e in spec["strides_bytes"]]
    if not all(1 <= d <= 2**32 for d in dims):
        raise ValueError(f"{spec['param']}: {where} dims {dims} must be in 1 .. 2^32")
    if not all(s % 16 == 0 and 0 < s < 2**40 for s in strides):
        raise ValueError(f"{spec['param']}: {where} strides {strides} must be multiples of 16 "
                         f"below 2^40")
    e = spec["cuda_enums"]
    return dict(rank=int(spec["rank"]), dims=dims, strides_bytes=strides,
                box=[int(x) for x in spec["box"]],
                element_strides=[int(x) for x in spec["element_strides"]],
                data_type=e["tensorDataType"], interleave=e["interleave"],
                swizzle=e["swizzle"], l2_promotion=e["l2Promotion"], oob_fill=e["oobFill"])
