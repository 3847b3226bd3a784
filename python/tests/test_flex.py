"""fa.flex: Python score_mod / mask_mod traced into fa.attention's regions (no GPU, no torch):
the traced MLIR, the diagnostics of what cannot be traced, the numerics on the CPU pipeline
(fa.cpu.attention) against the same functions run on numpy (fa.flex.reference), the GPU
kernels' compile (manifest, captured tensors as arguments, ptxas) and save / load."""
import numpy as np
import pytest

import fa
import fa.flex as flex
from fa.flex import FlexTraceError

from conftest import needs_compiler, ptxas

rng = np.random.default_rng(7)
SLOPES = np.array([0.5, 0.25, 0.125, 0.0625], np.float32)
DOCS = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 4], np.int32)
TABLE = rng.standard_normal(41).astype(np.float16)
BH = rng.standard_normal((2, 4)).astype(np.float32)
LENS = np.array([9, 0], np.int64)
U8 = np.arange(3, dtype=np.uint8)


def alibi(score, b, h, q_idx, kv_idx):
    return score + SLOPES[h] * (kv_idx - q_idx)


def document(b, h, q_idx, kv_idx):
    return DOCS[q_idx] == DOCS[kv_idx]


def softcap(score, b, h, q_idx, kv_idx):
    return 5.0 * flex.tanh(score / 5.0)


def prefix_lm(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (kv_idx < 3)


def relpos(score, b, h, q_idx, kv_idx):
    return score + TABLE[kv_idx - q_idx + 20]


def stripes(score, b, h, q_idx, kv_idx):
    # floor division and Python's modulo of a negative number, a 2-d capture
    return score * 0.5 + BH[b, h] + flex.where(((kv_idx - q_idx) // 3) % 2 == 0, 0.25, -0.25)


def key_len(b, h, q_idx, kv_idx):
    return kv_idx < LENS[b]


def test_trace_text():
    t = flex.trace(alibi, document)
    assert t.capture_types == ["tensor<4xf32>", "tensor<17xi32>"]
    assert t.captures[0] is SLOPES and t.captures[1] is DOCS
    assert t.score_mod.splitlines()[1].strip() == \
        "^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):"
    body = t.score_mod
    assert "tensor.extract %cap0[%h] : tensor<4xf32>" in body
    assert "arith.subi %j, %i : index" in body
    assert "arith.index_cast" in body and "arith.sitofp" in body and "arith.addf %s," in body
    assert body.rstrip().endswith("}") and "fa.yield" in body
    assert "tensor.extract %cap1[%i] : tensor<17xi32>" in t.mask_mod
    assert "arith.cmpi eq" in t.mask_mod and "fa.yield" in t.mask_mod
    # Cached: the same function reading the same arrays is not run again, a new array (or a
    # rebound number) is a new trace.
    assert flex.trace(alibi, document).score_mod is t.score_mod
    other = SLOPES.copy()
    t3 = flex.trace(lambda s, b, h, i, j: s + other[h], None)
    assert t3.captures[0] is other
    scale = 2.0

    def scaled(s, b, h, i, j):
        return s * scale
    assert "0x40000000" in flex.trace(scaled).score_mod
    scale = 3.0
    assert "0x40400000" in flex.trace(scaled).score_mod
    # The same array read twice is one argument; a capture's values are not in the key.
    t2 = flex.trace(None, lambda b, h, i, j: (DOCS[i] == DOCS[j]) & (DOCS[j] >= 0))
    assert t2.capture_types == ["tensor<17xi32>"]
    assert flex.trace(alibi, document).key() == t.key()


def test_trace_types_and_ops():
    t = flex.trace(relpos, key_len)
    assert "tensor.extract %cap0[" in t.score_mod and "arith.extf" in t.score_mod  # f16 -> f32
    assert "tensor<41xf16>" in t.capture_types[0]
    assert "arith.index_cast" in t.mask_mod and "tensor<2xi64>" in t.capture_types[1]
    t = flex.trace(stripes)
    assert "arith.floordivsi" in t.score_mod and "arith.remsi" in t.score_mod
    assert "arith.select" in t.score_mod and "tensor.extract %cap0[%b, %h] : tensor<2x4xf32>" \
        in t.score_mod
    t = flex.trace(lambda s, b, h, i, j: flex.maximum(s, -1.0) + abs(i - j) ** 2 + (i << 1),
                   lambda b, h, i, j: ~((i ^ j) == 3) & flex.where(i > j, True, False))
    assert "arith.maximumf" in t.score_mod and "math.absi" in t.score_mod
    assert "arith.shli" in t.score_mod and "arith.xori" in t.mask_mod
    # Tensor methods of FlexAttention's examples.
    t = flex.trace(lambda s, b, h, i, j: (s / 30).tanh() * 30 + (i - j).abs().float().clamp(
        max=8.0) * -0.1 + s.sigmoid().exp().sqrt().log())
    for op in ("math.tanh", "math.absi", "arith.minimumf", "math.exp", "math.sqrt"):
        assert op in t.score_mod
    # A numpy scalar is a constant of the region, not an argument.
    half = np.float32(0.5)
    t = flex.trace(lambda s, b, h, i, j: s * half)
    assert t.captures == [] and "arith.constant 0x3F000000 : f32" in t.score_mod
    # 0 / 1 beside a boolean are booleans (mask & 1); an i1 compared with an i1.
    t = flex.trace(None, lambda b, h, i, j: ((i > j) & 1) == (j > 3))
    assert "arith.andi" in t.mask_mod and "arith.cmpi eq" in t.mask_mod and ": index" in t.mask_mod
        # A constant mask_mod, a score_mod returning an integer position.
    assert "arith.constant true" in flex.trace(None, lambda b, h, i, j: True).mask_mod
    assert "arith.sitofp" in flex.trace(lambda s, b, h, i, j: j).score_mod


@pytest.mark.parametrize("fn,kind,message", [
    (lambda s, b, h, i, j: s if i > j else 0.0, "score_mod", "where(cond, a, b)"),
    (lambda b, h, i, j: i > j and j > 0, "mask_mod", "Python bool"),
    (lambda b, h, i, j: max(i, j) > 3, "mask_mod", "maximum(a, b)"),
    (lambda s, b, h, i, j: s > 0, "score_mod", "returned a boolean"),
    (lambda b, h, i, j: i + j, "mask_mod", "must return a boolean"),
    (lambda s, b, h, i, j: s + SLOPES, "score_mod", "used as a scalar"),
    (lambda s, b, h, i, j: s + SLOPES[h, i], "score_mod", "2 indices into a captured tensor"),
    (lambda s, b, h, i, j: s + SLOPES[1:], "score_mod", "no slices"),
    (lambda s, b, h, i, j: s + SLOPES[2], "score_mod", "indexed by constants only"),
    (lambda s, b, h, i, j: s + U8[i], "score_mod", "dtype uint8"),
    (lambda s, b, h, i, j: s + [1, 2][i], "score_mod", "used as a Python int"),
    (lambda s, b, h: s, "score_mod", "takes (score, b, h, q_idx, kv_idx)"),
    (lambda s, b, h, i, j: s + (i > j), "score_mod", "boolean"),
    (lambda s, b, h, i, j: s + "x", "score_mod", "str is not traced"),
    (lambda b, h, i, j: b.new_ones(()), "mask_mod", "tensor methods are not traced"),
    ("not a function", "score_mod", "score_mod must be a Python function, got str"),
])
def test_trace_errors(fn, kind, message):
    with pytest.raises(FlexTraceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        flex.trace(**{kind: fn})


def _inputs(B, Hq, Hkv, Nq, Nk, D, dtype=np.float32):
    return (rng.standard_normal((B, Hq, Nq, D)).astype(dtype),
            rng.standard_normal((B, Hkv, Nk, D)).astype(dtype),
            rng.standard_normal((B, Hkv, Nk, D)).astype(dtype))


CPU_CASES = [  # score_mod, mask_mod, B, Hq, Hkv, Nq, Nk, causal, window
    (alibi, document, 1, 4, 2, 17, 17, False, None),
    (alibi, None, 2, 4, 2, 13, 21, True, None),
    (softcap, prefix_lm, 1, 2, 1, 19, 19, False, None),
    (relpos, None, 1, 2, 2, 21, 21, False, (5, 2)),
    (stripes, key_len, 2, 4, 4, 11, 15, False, None),
    (None, document, 1, 4, 4, 17, 17, True, None),
]


@needs_compiler
@pytest.mark.parametrize("case", range(len(CPU_CASES)))
@pytest.mark.parametrize("reference", [False, True])
def test_cpu_numerics(case, reference):
    sm, mm, B, Hq, Hkv, Nq, Nk, causal, window = CPU_CASES[case]
    q, k, v = _inputs(B, Hq, Hkv, Nq, Nk, 8)
    out, lse = fa.cpu.attention(q, k, v, score_mod=sm, mask_mod=mm, causal=causal,
                                window=window, return_lse=True, reference=reference,
                                block_q=4, block_kv=8)
    ref, rlse = flex.reference(q, k, v, sm, mm, causal=causal, window=window)
    fin = np.isfinite(rlse)
    np.testing.assert_allclose(out, ref, atol=2e-5, rtol=0)
    np.testing.assert_allclose(lse[fin], rlse[fin], atol=2e-5, rtol=0)
    assert (lse[~fin] == -np.inf).all() and (out[~fin] == 0).all()
    if mm is key_len:
        assert (~fin).sum() == Hq * Nq  # the sequence of no key


@needs_compiler
def test_cpu_reads_captures_at_run_time():
    # One compiled function, new values of the captured array: new results (the negative
    # control of the numerics above: the modifier is really applied).
    q, k, v = _inputs(1, 4, 4, 9, 9, 8)
    before = fa.cpu.attention(q, k, v, score_mod=alibi)
    plain = fa.cpu.attention(q, k, v)
    assert np.abs(before - plain).max() > 1e-2
    saved = SLOPES.copy()
    try:
        SLOPES[:] = 0
        np.testing.assert_allclose(fa.cpu.attention(q, k, v, score_mod=alibi), plain,
                                   atol=2e-6)
    finally:
        SLOPES[:] = saved
    np.testing.assert_allclose(fa.cpu.attention(q, k, v, score_mod=alibi), before, atol=0)


@needs_compiler
def test_cpu_rejects_non_numpy_capture():
    class FakeTensor:
        shape, dtype, ndim = (4,), "float32", 1

        def __getitem__(self, i):
            raise AssertionError("never indexed: replaced by a proxy")
    fake = FakeTensor()
    q, k, v = _inputs(1, 1, 1, 4, 4, 8)
    with pytest.raises(fa.AttentionInputError, match="numpy arrays"):
        fa.cpu.attention(q, k, v, score_mod=lambda s, b, h, i, j: s + fake[h])


@needs_compiler
@pytest.mark.parametrize("chip", ["sm_90a", "sm_80"])
def test_gpu_kernel_compiles(chip, tmp_path):
    t = flex.trace(alibi, document)
    kern = flex.kernel(t, chip, "bf16", 128, causal=True, lse=True)
    params = [(p["name"], p.get("shape"), p.get("dtype")) for p in kern.manifest["params"]]
    assert ("arg3", [4], "f32") in params and ("arg4", [17], "i32") in params
    assert any(n == "lse" for n, _, _ in params)
    assert kern.manifest["causal"] and kern.manifest["chip"] == chip
    assert "ld.global" in kern.ptx
    # The same trace and flags: the kernel of this process, not a second compile.
    assert flex.kernel(flex.trace(alibi, document), chip, "bf16", 128, causal=True,
                       lse=True) is kern
    # save / load: a machine without the compiler finds it by the traced MLIR.
    assert flex.save(tmp_path / "k") >= 1
    flex._kernels.clear()
    flex._kernel_memo.clear()
    assert flex.load(tmp_path / "k") >= 1
    again = flex.kernel(flex.trace(alibi, document), chip, "bf16", 128, causal=True, lse=True)
    assert again.ptx == kern.ptx and again.manifest == kern.manifest
    # fa-to-ptx options: another kernel (here fewer stages), saved and found apart.
    if chip == "sm_90a":
        staged = flex.kernel(flex.trace(alibi, document), chip, "bf16", 128, causal=True,
                             lse=True, options={"stages": 2})
        assert staged is not again and staged.manifest["stages"] == 2
        flex.save(tmp_path / "k2")
        flex._kernels.clear()
        flex._kernel_memo.clear()
        flex.load(tmp_path / "k2")
        assert flex.kernel(flex.trace(alibi, document), chip, "bf16", 128, causal=True,
                           lse=True, options={"stages": 2}).ptx == staged.ptx
    _assert_ptxas_takes(kern.ptx, chip, tmp_path)


def _assert_ptxas_takes(ptx, chip, tmp_path):
    """ptxas (when installed) assembles `ptx` for `chip`."""
    if not ptxas():
        return
    import subprocess
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    r = subprocess.run([ptxas(), f"-arch={chip}", str(src), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_module_text():
    t = flex.trace(softcap, None)
    text = flex.module_text(t, "f16", 64, 64, causal=False, lse=True)
    assert "func.func @flex(%q: tensor<?x?x?x64xf16>" in text
    assert "-> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)" in text
    assert "fa.attention %q, %k, %v {} score_mod {" in text


def test_reference_runs_the_functions_on_numpy():
    q, k, v = _inputs(1, 4, 4, 17, 17, 8)
    out, lse = flex.reference(q, k, v, None, document)
    # Row 0 sees keys 0..2 (document 0) only.
    s = q[0, 0, 0] @ k[0, 0, :3].T / np.sqrt(8)
    p = np.exp(s - s.max())
    np.testing.assert_allclose(out[0, 0, 0], p @ v[0, 0, :3] / p.sum(), rtol=1e-5)


def _finite_difference_grads(q, k, v, do, sm, mm, causal, eps=1e-6):
    """d sum(out * do) / d(q, k, v) of flex.reference (float64), central differences."""
    def loss(*qkv):
        return float((flex.reference(*qkv, sm, mm, causal=causal)[0] * do).sum())
    grads = []
    for which, x in enumerate((q, k, v)):
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            args = [q, k, v]
            plus, minus = x.copy(), x.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args[which] = plus
            hi = loss(*args)
            args[which] = minus
            g[idx] = (hi - loss(*args)) / (2 * eps)
        grads.append(g)
    return grads


@needs_compiler
@pytest.mark.parametrize("sm,mm,causal", [(alibi, document, False), (softcap, prefix_lm, False),
                                          (relpos, None, True), (stripes, key_len, False)])
def test_cpu_backward_matches_finite_differences(sm, mm, causal):
    # score_mod's derivative comes from fa-differentiate-score-mod (the CPU pipeline runs it).
    B, Hkv = (2, 4) if mm is key_len else (1, 2)
    q, k, v = (x.astype(np.float64) for x in _inputs(B, 4, Hkv, 7, 9, 4))
    do = rng.standard_normal(q.shape).astype(np.float32).astype(np.float64)
    f32 = [x.astype(np.float32) for x in (q, k, v)]
    out, lse = fa.cpu.attention(*f32, score_mod=sm, mask_mod=mm, causal=causal,
                                return_lse=True)
    want = _finite_difference_grads(q, k, v, do, sm, mm, causal)
    for reference in (False, True):
        got = fa.cpu.attention_grad(*f32, out, lse, do.astype(np.float32), score_mod=sm,
                                    mask_mod=mm, causal=causal, reference=reference,
                                    block_q=4, block_kv=4)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=5e-6, rtol=0)


OPS_CASES = [  # every operator and function the tracer writes, against numpy's
    (lambda s, b, h, i, j: flex.maximum(s, -0.5) + abs(i - j) ** 2 * 0.01 + (i << 1) * 0.1 -
     (j >> 1) * 0.2, lambda b, h, i, j: ~((i ^ j) == 3) & flex.where(i >= j, True, False)),
    (lambda s, b, h, i, j: flex.minimum(s, 1.0) * flex.sigmoid(s) + flex.exp2(-abs(s)) -
     flex.log(1.0 + flex.exp(s)) + flex.sqrt(1.0 + s * s) * flex.rsqrt(4.0 + s * s),
     lambda b, h, i, j: ((i > j) & 1) == (j > 3) | (i % 3 == j % 2)),
    (lambda s, b, h, i, j: s * flex.floor(flex.to_float(i) / 3.0) * 0.1 +
     flex.ceil(flex.log2(flex.to_float(j) + 1.0)) * 0.05 + (i - j) % 5 - (i - j) // 4 * 0.25 +
     flex.tanh(s) - (s ** 2.0) * 0.01 + (s % 0.75) - (-s) // 0.5 * 0.1 + s / (1.0 + (i + j)),
     lambda b, h, i, j: flex.maximum(i, j) - flex.minimum(i, j) <= 9),
]


@needs_compiler
@pytest.mark.parametrize("case", range(len(OPS_CASES)))
def test_cpu_every_op(case):
    sm, mm = OPS_CASES[case]
    q, k, v = _inputs(1, 2, 2, 13, 15, 8)
    out, lse = fa.cpu.attention(q, k, v, score_mod=sm, mask_mod=mm, return_lse=True)
    ref, rlse = flex.reference(q, k, v, sm, mm)
    fin = np.isfinite(rlse)
    np.testing.assert_allclose(out, ref, atol=3e-5, rtol=0)
    np.testing.assert_allclose(lse[fin], rlse[fin], atol=3e-5, rtol=0)


@needs_compiler
@pytest.mark.parametrize("chip", ["sm_90a", "sm_80"])
def test_gpu_every_op_compiles(chip):
    # The operators' regions lower on both chips, forward and backward; a score_mod the
    # compiler cannot differentiate (a float modulo) is a diagnostic naming the op.
    for sm, mm in OPS_CASES[:2]:
        t = flex.trace(sm, mm)
        assert "entry" in flex.kernel(t, chip, "f16", 64).ptx
        assert "entry" in flex.kernel(t, chip, "f16", 64, grad=True).ptx
    with pytest.raises(fa.CompileError, match="cannot differentiate 'arith.remf'"):
        flex.kernel(flex.trace(lambda s, b, h, i, j: s % 0.75), chip, "f16", 64, grad=True)


@needs_compiler
@pytest.mark.parametrize("chip", ["sm_90a", "sm_80"])
def test_fast_math(chip):
    # tanh traces with afn and / with arcp: Gemma's softcap written in Python compiles like
    # the built-in softcap (the MUFU's tanh.approx, the division a multiply): 0.30x our plain
    # kernel on the H100 before, with libdevice's tanhf and div.rn per score.
    t = flex.trace(softcap)
    assert "math.tanh %t1 fastmath<afn> : f32" in t.score_mod
    assert "fastmath<arcp>" in t.score_mod
    assert "fastmath" not in flex.trace(
        lambda s, b, h, i, j: flex.tanh(s, exact=True) * 2.0).score_mod
    ptx = flex.kernel(t, chip, "f16", 128).ptx
    assert "tanh.approx.f32" in ptx and "div.rn.f32" not in ptx
    exact = flex.kernel(flex.trace(lambda s, b, h, i, j: 5.0 * flex.tanh(s / 5.0, exact=True)),
                        chip, "f16", 128).ptx
    assert "tanh.approx.f32" not in exact


# -- gradients of the tensors score_mod reads (fa.cpu.attention_grad(grad_captures=)) ----------

def _learnable(slopes, table):
    """A score_mod non-linear in both captures it reads (so that a coefficient that is
    wrong anywhere shows): ALiBi slopes times a relative-position table, through tanh."""
    def score_mod(score, b, h, q_idx, kv_idx):
        return (flex.tanh(score * 0.5 + slopes[h] * (kv_idx - q_idx) * 0.1) * 2.0 +
                table[kv_idx - q_idx + 20] * slopes[h])
    return score_mod


def _capture_fd(q, k, v, do, make, captures, mm, causal, eps=1e-6):
    """d sum(out * do) / d(each capture) of flex.reference (float64), central differences;
    `make(*captures)` builds the score_mod reading them."""
    def loss(caps):
        return float((flex.reference(q, k, v, make(*caps), mm, causal=causal)[0] * do).sum())
    caps = [c.astype(np.float64) for c in captures]
    grads = []
    for which, c in enumerate(caps):
        g = np.zeros_like(c)
        for idx in np.ndindex(c.shape):
            plus, minus = list(caps), list(caps)
            plus[which], minus[which] = c.copy(), c.copy()
            plus[which][idx] += eps
            minus[which][idx] -= eps
            g[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        grads.append(g)
    return grads


@needs_compiler
@pytest.mark.parametrize("case", ["alibi_table", "bias_bh_lens"])
def test_cpu_capture_gradients_match_finite_differences(case):
    # The derivative with respect to each read element comes from fa-differentiate-score-mod
    # (one forward sweep per read); both CPU lowerings scatter dS_t * coefficient.
    if case == "alibi_table":
        slopes = SLOPES.copy()
        table = TABLE.copy()  # f16: its gradient is f32
        captures, make, mm, causal, (B, Hkv) = [slopes, table], _learnable, None, True, (1, 2)
    else:
        bh = BH.copy()

        def make(bh):
            def bias_bh(score, b, h, q_idx, kv_idx):
                return score * 0.5 + bh[b, h] * flex.where((kv_idx // 3) % 2 == 0, 1.0, -2.0)
            return bias_bh
        # LENS[1] = 0: the second sequence's rows see no key and contribute nothing.
        captures, mm, causal, (B, Hkv) = [bh], key_len, False, (2, 4)
    q, k, v = (x.astype(np.float64) for x in _inputs(B, 4, Hkv, 7, 9, 4))
    do = rng.standard_normal(q.shape).astype(np.float32).astype(np.float64)
    f32 = [x.astype(np.float32) for x in (q, k, v)]
    sm = make(*captures)
    out, lse = fa.cpu.attention(*f32, score_mod=sm, mask_mod=mm, causal=causal,
                                return_lse=True)
    want_qkv = _finite_difference_grads(q, k, v, do, sm, mm, causal)
    want = _capture_fd(q, k, v, do, make, captures, mm, causal)
    assert max(np.abs(w).max() for w in want) > 0.1  # the control: gradients that can be wrong
    for reference in (False, True):
        dq, dk, dv, grads = fa.cpu.attention_grad(
            *f32, out, lse, do.astype(np.float32), score_mod=sm, mask_mod=mm, causal=causal,
            reference=reference, block_q=4, block_kv=4, grad_captures=captures)
        for g, w in zip((dq, dk, dv), want_qkv):
            np.testing.assert_allclose(g, w, atol=5e-6, rtol=0)
        assert len(grads) == len(captures)
        for g, w, c in zip(grads, want, captures):
            assert g.dtype == np.float32 and g.shape == c.shape
            np.testing.assert_allclose(g, w, atol=1e-5, rtol=1e-5)


@needs_compiler
def test_cpu_capture_gradient_of_mask_only_capture_is_zero():
    # A capture that score_mod reads only through a comparison, and one that only mask_mod
    # reads, get zero gradients (booleans carry none); the other still gets its own.
    gate = np.array([1.0, -1.0], np.float32)
    offs = np.array([0.5, 0.25, 0.0, -0.25], np.float32)
    keep = np.ones(9, np.float32)

    def sm(score, b, h, q_idx, kv_idx):  # (a per-row constant would have no gradient)
        return flex.where(gate[h % 2] > 0, score + offs[h] * kv_idx, score - offs[h] * kv_idx)

    def mm(b, h, q_idx, kv_idx):
        return keep[kv_idx] > 0
    q, k, v = _inputs(1, 4, 2, 5, 9, 4)
    out, lse = fa.cpu.attention(q, k, v, score_mod=sm, mask_mod=mm, return_lse=True)
    do = rng.standard_normal(out.shape).astype(np.float32)
    *_, (dgate, doffs, dkeep) = fa.cpu.attention_grad(
        q, k, v, out, lse, do, score_mod=sm, mask_mod=mm, grad_captures=[gate, offs, keep])
    assert not dgate.any() and not dkeep.any()
    assert np.abs(doffs).max() > 1e-3


@needs_compiler
def test_cpu_capture_gradient_errors():
    q, k, v = _inputs(1, 4, 2, 5, 9, 4)
    out, lse = fa.cpu.attention(q, k, v, score_mod=relpos, mask_mod=document, return_lse=True)
    args = (q, k, v, out, lse, np.ones_like(out))
    with pytest.raises(fa.AttentionInputError, match="not an array that score_mod"):
        fa.cpu.attention_grad(*args, score_mod=relpos, mask_mod=document,
                              grad_captures=[TABLE.copy()])  # a copy is not what it reads
    with pytest.raises(fa.AttentionInputError, match="only float arrays have gradients"):
        fa.cpu.attention_grad(*args, score_mod=relpos, mask_mod=document, grad_captures=[DOCS])
    with pytest.raises(fa.AttentionInputError, match="listed twice"):
        fa.cpu.attention_grad(*args, score_mod=relpos, mask_mod=document,
                              grad_captures=[TABLE, TABLE])
    with pytest.raises(fa.AttentionInputError, match="needs a score_mod"):
        fa.cpu.attention_grad(*args, mask_mod=document, grad_captures=[DOCS])


@pytest.mark.parametrize("chip", ["sm_90a", "sm_80"])
def test_gpu_capture_gradient_kernel(chip, tmp_path):
    # The backward kernel with grad_captures: the gradients are f32 parameters grad_argN of
    # the captures' shapes after them (zero-filled and returned by Kernel.grad), added by
    # atomics (the per-head slope's summed over a warp first); ptxas takes it.
    t = flex.trace(alibi_relpos_learnable, None)
    kern = flex.kernel(t, chip, "bf16", 128, causal=True, grad=True, capture_grads=(0, 1))
    params = [(p["name"], p.get("shape"), p.get("dtype")) for p in kern.manifest["params"]]
    names = [n for n, _, _ in params]
    assert ("grad_arg6", [4], "f32") in params and ("grad_arg7", [41], "f32") in params
    assert names.index("arg7") < names.index("grad_arg6") < names.index("B")
    assert "grad_captures(%cap0, %cap1 : tensor<4xf32>, tensor<41xf16>)" in \
        flex.grad_module_text(t, "bf16", 128, 128, causal=True, capture_grads=(0, 1))
    assert "atom.global.add.f32" in kern.ptx or "red.global.add.f32" in kern.ptx
    assert "shfl.sync.bfly" in kern.ptx
    # Without capture_grads: another kernel, no grad_arg parameter.
    plain = flex.kernel(t, chip, "bf16", 128, causal=True, grad=True)
    assert not any(p["name"].startswith("grad_arg") for p in plain.manifest["params"])
    _assert_ptxas_takes(kern.ptx, chip, tmp_path)


def alibi_relpos_learnable(score, b, h, q_idx, kv_idx):
    return score + SLOPES[h] * (kv_idx - q_idx) + TABLE[flex.minimum(
        flex.maximum(kv_idx - q_idx, -20), 20) + 20]


def test_gpu_capture_gradient_needs_an_additive_score_mod():
    # A coefficient that depends on the score (s * w[h]): the kernels cannot form it.
    def scaled(score, b, h, q_idx, kv_idx):
        return score * SLOPES[h]
    with pytest.raises(fa.CompileError, match="coefficient and indices do not depend on the "
                                              "score"):
        flex.kernel(flex.trace(scaled, None), "sm_90a", "f16", 64, grad=True,
                    capture_grads=(0,))
