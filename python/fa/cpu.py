"""fa.attention on the CPU, on numpy arrays: the fa-to-cpu pipeline (the tiled
FlashAttention form, or the reference lowering) JIT-compiled by MLIR's
ExecutionEngine through the C API. Useful as a reference and to try the
semantics without a GPU; not fast (scalar loops).

    import numpy as np, fa.cpu
    out, lse = fa.cpu.attention(q, k, v, causal=True, return_lse=True)
    dq, dk, dv = fa.cpu.attention_grad(q, k, v, out, lse, dout, causal=True)

q [B, Hq, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv], float16 or float32
numpy arrays; out is float32 [B, Hq, Nq, Dv] (accumulation is f32), lse float32
[B, Hq, Nq]. One engine per (shapes, dtype, flags), kept in memory. Needs the
compiler library (fa.compiler_available()).
"""
import ctypes
import math
import os
import threading

import numpy as np

from . import _capi
from .validation import AttentionInputError, check_inputs
from .variant import attribute_text, normalize_window

_NP_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32"}
_engines = {}
_lock = threading.Lock()


def _memref_desc(rank):
    class Desc(ctypes.Structure):
        _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                    ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank)]
    return Desc


_Desc4 = _memref_desc(4)
_Desc3 = _memref_desc(3)


# The results of a function returning several memrefs (a structure of
# descriptors); `names` lists them in order.
class _Results(ctypes.Structure):
    _fields_ = [("out", _Desc4), ("lse", _Desc3)]
    names = ("out", "lse")


class _GradResults(ctypes.Structure):
    _fields_ = [("dq", _Desc4), ("dk", _Desc4), ("dv", _Desc4)]
    names = ("dq", "dk", "dv")


def source(q_shape, k_shape, v_shape, elt, causal, window, scale, softcap, lse, traced=None):
    """The MLIR of one CPU attention (static shapes; results f32); `traced`
    (fa.flex.trace) adds its score_mod / mask_mod regions and its captured
    arrays as arguments after v."""
    from . import flex
    def t(shape, e):
        return "tensor<" + "x".join(str(n) for n in shape) + f"x{e}>"
    tq, tk, tv = t(q_shape, elt), t(k_shape, elt), t(v_shape, elt)
    B, Hq, Nq, _ = q_shape
    to = t((B, Hq, Nq, v_shape[3]), "f32")
    tl = t((B, Hq, Nq), "f32")
    a = attribute_text(causal, window, scale, softcap)
    res_t = f"({to}, {tl})" if lse else to
    res = "%o, %l" if lse else "%o"
    caps, regions = "", ""
    if traced is not None:
        caps, regions = flex.capture_args_text(traced), flex.regions_text(traced)
        a = a or (" {}" if regions else "")
    return (f"func.func @attention(%q: {tq}, %k: {tk}, %v: {tv}{caps}) -> {res_t} "
            f"attributes {{llvm.emit_c_interface}} {{\n"
            f"  {res} = fa.attention %q, %k, %v{a}{regions} : {tq}, {tk}, {tv} -> {res_t}\n"
            f"  return {res} : {res_t.strip('()')}\n}}\n")


def grad_source(q_shape, k_shape, v_shape, elt, causal, window, scale, softcap, traced=None,
                grad_captures=()):
    """The MLIR of one CPU attention backward (static shapes): dq, dk, dv
    (extended to f32); `traced` as for source() (its captures after do; the
    pipeline differentiates score_mod); `grad_captures`: positions in
    traced.captures whose gradients follow dq, dk, dv (f32, their shapes)."""
    from . import flex
    def t(shape, e):
        return "tensor<" + "x".join(str(n) for n in shape) + f"x{e}>"
    B, Hq, Nq, _ = q_shape
    o_shape = (B, Hq, Nq, v_shape[3])
    tq, tk, tv, to = (t(s_, elt) for s_ in (q_shape, k_shape, v_shape, o_shape))
    tl = t((B, Hq, Nq), "f32")
    a = attribute_text(causal, window, scale, softcap)
    results = [(n, shape) for n, shape in (("dq", q_shape), ("dk", k_shape), ("dv", v_shape))]
    res_t = ", ".join(t(shape, "f32") for _, shape in results)
    caps, regions = "", ""
    if traced is not None:
        caps, regions = flex.capture_args_text(traced), flex.regions_text(traced)
        a = a or (" {}" if regions else "")
    wrt, wrt_t, grad_names = flex.grad_captures_text(traced, grad_captures)
    res_t += wrt_t
    lines = [f"func.func @attention_grad(%q: {tq}, %k: {tk}, %v: {tv}, %o: {to}, %lse: {tl}, "
             f"%do: {to}{caps}) -> ({res_t}) attributes {{llvm.emit_c_interface}} {{",
             f"  %dq, %dk, %dv{grad_names} = fa.attention_grad "
             f"%q, %k, %v, %o, %lse, %do{wrt}{a}{regions} : "
             f"{tq}, {tk}, {tv}, {to}, {tl}, {to} -> {tq}, {tk}, {tv}{wrt_t}"]
    names = ["%dq", "%dk", "%dv"]
    if elt != "f32":
        for n, shape in results:
            lines.append(f"  %{n}32 = arith.extf %{n} : {t(shape, elt)} to {t(shape, 'f32')}")
        names = [f"%{n}32" for n, _ in results]
    lines.append(f"  return {', '.join(names)}{grad_names} : {res_t}")
    lines.append("}")
    return "\n".join(lines) + "\n"


class _Engine:
    """One JIT-compiled function `name` returning the memrefs of `results` (a
    ctypes structure of descriptors, or one descriptor)."""

    def __init__(self, mlir, pipeline, results, name=b"attention"):
        L = _capi.lib()
        self.results = results
        self.name = name
        self.context = _capi.Context()
        self.module = _capi.Module(self.context, mlir)
        self.module.run(pipeline)
        libs = [p.encode() for p in _runtime_libraries()]
        refs = (_capi._StringRef * max(len(libs), 1))(*[_capi._sref(p) for p in libs])
        self._libs = (libs, refs)  # alive while the engine is
        self.engine = L.mlirExecutionEngineCreate(self.module.module, 2, len(libs), refs, False)
        if not self.engine.ptr:
            raise _capi.CompileError("fa.cpu: the ExecutionEngine could not be created:\n" +
                                     "\n".join(self.context.diagnostics),
                                     self.context.diagnostics)

    def __call__(self, *arrays):
        L = _capi.lib()
        descs = [_desc(a) for a in arrays]
        res = self.results()
        ptrs = [ctypes.pointer(res)] + [ctypes.pointer(d) for d in descs]
        args = (ctypes.c_void_p * len(ptrs))(
            *[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs])
        r = L.mlirExecutionEngineInvokePacked(self.engine, _capi._sref(self.name), args)
        if not r.value:
            raise RuntimeError(f"fa.cpu: the JIT could not run _mlir_ciface_"
                               f"{self.name.decode()} (a missing symbol? see stderr)")
        names = getattr(self.results, "names", None)
        outs = [getattr(res, n) for n in names] if names else [res]
        return [_take(d) for d in outs]


def _runtime_libraries():
    """MLIR's C runner utils (memrefCopy, which the lowered copies call):
    $FA_MLIR_C_RUNNER_UTILS, else next to Debian's libMLIR.so."""
    path = os.environ.get("FA_MLIR_C_RUNNER_UTILS",
                          "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so")
    return [path] if os.path.exists(path) else []


_DESCS = {3: _Desc3, 4: _Desc4}


def _desc(a):
    if a.ndim not in _DESCS:
        _DESCS[a.ndim] = _memref_desc(a.ndim)
    d = _DESCS[a.ndim]()
    d.allocated = d.aligned = a.ctypes.data
    d.offset = 0
    for i in range(a.ndim):
        d.sizes[i] = a.shape[i]
        d.strides[i] = a.strides[i] // a.itemsize
    return d


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def _take(d):
    """A numpy copy of a returned f32 memref; frees the JIT's buffer."""
    shape = tuple(d.sizes)
    n = int(np.prod(shape)) if shape else 1
    if n:
        buf = (ctypes.c_float * n).from_address(d.aligned + 4 * d.offset)
        a = np.ctypeslib.as_array(buf).copy().reshape(shape)
    else:
        a = np.zeros(shape, np.float32)
    if d.allocated:
        _libc.free(d.allocated)
    return a


def _checked(who, q, k, v, causal, window, scale, softcap):
    """q, k, v as contiguous float16 / float32 arrays and the normalized window;
    AttentionInputError otherwise."""
    arrays = []
    for n, a in zip("qkv", (q, k, v)):
        a = np.asarray(a)
        if a.dtype not in _NP_TYPES:
            raise AttentionInputError(f"{who}: {n} is {a.dtype}; float16 or float32")
        arrays.append(np.ascontiguousarray(a))
    window, _ = check_inputs(*[(a.shape, _NP_TYPES[a.dtype], "cpu") for a in arrays],
                             causal=causal, window=window, scale=scale, softcap=softcap)
    return (*arrays, window)


def _pipeline(reference, block_q, block_kv):
    opts = []
    if reference:
        opts.append("reference=1")
    if block_q:
        opts.append(f"block-q={int(block_q)}")
    if block_kv:
        opts.append(f"block-kv={int(block_kv)}")
    return "fa-to-cpu" + ("{" + " ".join(opts) + "}" if opts else "")


def _engine(mlir, pipeline, results, name):
    """The JIT of (mlir, pipeline), compiled once per process."""
    key = (mlir, pipeline)
    with _lock:
        eng = _engines.get(key)
        if eng is None:
            with _capi.compile_lock():
                eng = _engines[key] = _Engine(mlir, pipeline, results, name=name)
    return eng


def _traced(who, score_mod, mask_mod):
    """fa.flex.trace of the functions (None without any); their captured
    tensors must be numpy arrays."""
    if score_mod is None and mask_mod is None:
        return None
    from . import flex
    traced = flex.trace(score_mod, mask_mod)
    for c in traced.captures:
        if not isinstance(c, np.ndarray):
            raise AttentionInputError(
                f"{who}: a score_mod / mask_mod reads a {type(c).__name__}; on the CPU the "
                f"tensors it reads are numpy arrays")
    return traced


def attention(q, k, v, *, causal=False, window=None, scale=None, softcap=None, return_lse=False,
              reference=False, block_q=None, block_kv=None, score_mod=None, mask_mod=None):
    """fa.attention's semantics on numpy arrays through fa-to-cpu (tiled) or
    fa-to-cpu{reference=1} (reference=True). See the module docstring.
    score_mod(score, b, h, q_idx, kv_idx) / mask_mod(b, h, q_idx, kv_idx):
    Python functions traced into the op's regions (fa.flex); the numpy arrays
    they read are passed to the compiled function at each call."""
    q, k, v, window = _checked("fa.cpu.attention", q, k, v, causal, window, scale, softcap)
    traced = _traced("fa.cpu.attention", score_mod, mask_mod)
    if min(q.size, k.size) == 0:
        B, Hq, Nq, _ = q.shape
        out = np.zeros((B, Hq, Nq, v.shape[3]), np.float32)
        return (out, np.full((B, Hq, Nq), -np.inf, np.float32)) if return_lse else out
    mlir = source(q.shape, k.shape, v.shape, _NP_TYPES[q.dtype], bool(causal), window,
                  None if scale is None else float(scale),
                  None if softcap is None else float(softcap), bool(return_lse), traced)
    eng = _engine(mlir, _pipeline(reference, block_q, block_kv),
                  _Results if return_lse else _Desc4, b"attention")
    caps = [np.ascontiguousarray(c) for c in (traced.captures if traced else ())]
    res = eng(q, k, v, *caps)
    return (res[0], res[1]) if return_lse else res[0]


def attention_grad(q, k, v, out, lse, dout, *, causal=False, window=None, scale=None,
                   softcap=None, reference=False, block_q=None, block_kv=None, score_mod=None,
                   mask_mod=None, grad_captures=None):
    """fa.attention_grad's semantics on numpy arrays: dq, dk, dv (float32, the
    shapes of q, k, v) of the attention whose result `out` and log-sum-exp
    `lse` the forward gave (fa.cpu.attention(..., return_lse=True)), for the
    output gradient `dout`. S and P are recomputed from q, k and lse (the tiled
    backward of fa-to-cpu, or its reference lowering with reference=True);
    dk and dv sum over the query heads that share a K/V head. score_mod /
    mask_mod: as for attention() (the pipeline derives score_mod's derivative,
    fa-differentiate-score-mod).

    grad_captures: float arrays that score_mod reads (a learnable bias table,
    ALiBi slopes); their gradients (float32, their shapes, in that order) are
    returned as a fourth result, a list: dq, dk, dv, [d a for a in grad_captures].
    Only score_mod's reads carry gradient (mask_mod's are boolean)."""
    q, k, v, window = _checked("fa.cpu.attention_grad", q, k, v, causal, window, scale,
                               softcap)
    traced = _traced("fa.cpu.attention_grad", score_mod, mask_mod)
    wrt = _grad_capture_positions(traced, grad_captures)
    B, Hq, Nq, _ = q.shape
    o_shape = (B, Hq, Nq, v.shape[3])
    given = {"out": np.asarray(out), "dout": np.asarray(dout), "lse": np.asarray(lse)}
    for n, want in (("out", o_shape), ("dout", o_shape), ("lse", o_shape[:3])):
        if tuple(given[n].shape) != want:
            raise AttentionInputError(f"fa.cpu.attention_grad: {n} must have shape {want} "
                                      f"(from q and v), got {tuple(given[n].shape)}")
    o = np.ascontiguousarray(given["out"], q.dtype)
    do = np.ascontiguousarray(given["dout"], q.dtype)
    lse = np.ascontiguousarray(given["lse"], np.float32)
    if min(q.size, k.size) == 0:
        zeros = (np.zeros(q.shape, np.float32), np.zeros(k.shape, np.float32),
                 np.zeros(v.shape, np.float32))
        if grad_captures is None:
            return zeros
        return (*zeros, [np.zeros(traced.captures[i].shape, np.float32) for i in wrt])
    mlir = grad_source(q.shape, k.shape, v.shape, _NP_TYPES[q.dtype], bool(causal), window,
                       None if scale is None else float(scale),
                       None if softcap is None else float(softcap), traced, wrt)
    results = _GradResults
    if wrt:
        fields = list(_GradResults._fields_) + [
            (f"g{n}", _memref_desc(traced.captures[i].ndim)) for n, i in enumerate(wrt)]
        results = type("_GradCaptureResults", (ctypes.Structure,),
                       {"_fields_": fields, "names": tuple(f for f, _ in fields)})
    eng = _engine(mlir, _pipeline(reference, block_q, block_kv), results, b"attention_grad")
    caps = [np.ascontiguousarray(c) for c in (traced.captures if traced else ())]
    dq, dk, dv, *grads = eng(q, k, v, o, lse, do, *caps)
    if grad_captures is None:
        return dq, dk, dv
    return dq, dk, dv, grads


def _grad_capture_positions(traced, grad_captures):
    """The positions in traced.captures of the arrays of `grad_captures` (by
    identity); AttentionInputError for one the functions do not read or that
    is not a float array."""
    if grad_captures is None:
        return []
    if traced is None or traced.score_mod is None:
        raise AttentionInputError("fa.cpu.attention_grad: grad_captures needs a score_mod "
                                  "that reads them")
    positions = []
    for n, a in enumerate(grad_captures):
        at = [i for i, c in enumerate(traced.captures) if c is a]
        if not at:
            raise AttentionInputError(
                f"fa.cpu.attention_grad: grad_captures[{n}] is not an array that score_mod / "
                f"mask_mod reads (pass the very array object the function reads)")
        if np.asarray(a).dtype.kind != "f":
            raise AttentionInputError(
                f"fa.cpu.attention_grad: grad_captures[{n}] is {np.asarray(a).dtype}; only "
                f"float arrays have gradients")
        if at[0] in positions:
            raise AttentionInputError(
                f"fa.cpu.attention_grad: grad_captures[{n}] is listed twice")
        positions.append(at[0])
    return positions


def reference_numpy(q, k, v, causal=False, window=None, scale=None, softcap=None,
                    score_mod=None, mask_mod=None):
    """fa.attention's semantics in float64 numpy (the tests' oracle): out, lse.
    score_mod(s, b, h, i, j) / mask_mod(b, h, i, j): Python functions (fa.flex's
    model) called once on broadcasting index arrays [B, 1, 1, 1], [1, Hq, 1, 1],
    [1, 1, Nq, 1], [1, 1, 1, Nk]."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    k = np.repeat(k, r, axis=1)
    v = np.repeat(v, r, axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) * (scale if scale is not None else 1 / math.sqrt(D))
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    bi, hi, ii, ji = (np.arange(n).reshape([n if d == a else 1 for d in range(4)])
                      for a, n in enumerate((B, Hq, Nq, Nk)))
    if score_mod is not None:
        s = np.broadcast_to(np.asarray(score_mod(s, bi, hi, ii, ji), np.float64), s.shape)
    if mask_mod is not None:
        s = np.where(np.broadcast_to(np.asarray(mask_mod(bi, hi, ii, ji), bool), s.shape),
                     s, -np.inf)
    window = normalize_window(causal, window)
    if causal and window is None:
        window = (-1, 0)
    if window is not None:
        i = np.arange(Nq)[:, None]
        j = np.arange(Nk)[None, :]
        dist = j - (i + (Nk - Nq))
        left, right = window
        if right >= 0:
            s = np.where(dist > right, -np.inf, s)
        if left >= 0:
            s = np.where(dist < -left, -np.inf, s)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    p = np.exp(s - m)
    l_ = p.sum(-1, keepdims=True)
    out = np.einsum("bhij,bhjd->bhid", p, v) / np.where(l_ == 0, 1, l_)
    with np.errstate(divide="ignore"):
        lse = (m + np.log(l_))[..., 0]
    return out, lse



def reference_grad_numpy(q, k, v, dout, causal=False, window=None, scale=None, softcap=None):
    """The analytic gradients of fa.attention in float64 numpy (the tests'
    oracle): dq, dk, dv for the output gradient `dout`."""
    q, k, v, do = (np.asarray(a, np.float64) for a in (q, k, v, dout))
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    kr, vr = np.repeat(k, r, axis=1), np.repeat(v, r, axis=1)
    scale = scale if scale is not None else 1 / math.sqrt(D)
    u = np.einsum("bhid,bhjd->bhij", q, kr) * scale
    s = softcap * np.tanh(u / softcap) if softcap is not None else u
    window = normalize_window(causal, window)
    if causal and window is None:
        window = (-1, 0)
    hidden = np.zeros(s.shape, bool)
    if window is not None:
        i = np.arange(Nq)[:, None]
        j = np.arange(Nk)[None, :]
        dist = j - (i + (Nk - Nq))
        left, right = window
        if right >= 0:
            hidden |= dist > right
        if left >= 0:
            hidden |= dist < -left
    s = np.where(hidden, -np.inf, s)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    p = np.exp(s - m)
    l_ = p.sum(-1, keepdims=True)
    p = p / np.where(l_ == 0, 1, l_)
    dv = np.einsum("bhij,bhid->bhjd", p, do)
    dp = np.einsum("bhid,bhjd->bhij", do, vr)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    if softcap is not None:
        ds = ds * (1 - np.tanh(u / softcap) ** 2)
    dq = np.einsum("bhij,bhjd->bhid", ds, kr) * scale
    dk = np.einsum("bhij,bhid->bhjd", ds, q) * scale
    fold = lambda x: x.reshape(B, Hkv, r, *x.shape[2:]).sum(2)  # noqa: E731
    return dq, fold(dk), fold(dv)
