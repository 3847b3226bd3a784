"""fa.cpu: the fa-to-cpu pipeline JIT-compiled by MLIR's ExecutionEngine,
on numpy arrays, against a float64 numpy reference."""
import numpy as np
import pytest

import fa
from fa.validation import AttentionInputError

from conftest import needs_compiler

pytestmark = needs_compiler


def inputs(B, Hq, Hkv, Nq, Nk, D, dtype, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, Hq, Nq, D)).astype(dtype)
    k = rng.standard_normal((B, Hkv, Nk, D)).astype(dtype)
    v = rng.standard_normal((B, Hkv, Nk, D)).astype(dtype)
    return q, k, v


CASES = [
    dict(),
    dict(causal=True),
    dict(causal=True, window=(5, 0)),
    dict(window=(3, 4)),
    dict(scale=0.3, softcap=2.0),
]


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items())
                         or "plain")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cpu_matches_numpy(kw, dtype):
    from fa import cpu
    q, k, v = inputs(2, 4, 2, 13, 17, 16, dtype)
    out, lse = cpu.attention(q, k, v, return_lse=True, **kw)
    ref_out, ref_lse = cpu.reference_numpy(q, k, v, **kw)
    tol = 1e-5 if dtype == np.float32 else 2e-3
    assert out.shape == (2, 4, 13, 16) and out.dtype == np.float32
    np.testing.assert_allclose(out, ref_out, atol=tol, rtol=tol)
    np.testing.assert_allclose(lse, ref_lse, atol=tol, rtol=tol)


def test_cpu_reference_lowering_and_blocks():
    from fa import cpu
    q, k, v = inputs(1, 2, 1, 20, 9, 8, np.float32, seed=1)
    a = cpu.attention(q, k, v, causal=True)
    b = cpu.attention(q, k, v, causal=True, reference=True)
    c = cpu.attention(q, k, v, causal=True, block_q=4, block_kv=2)
    ref, _ = cpu.reference_numpy(q, k, v, causal=True)
    for x in (a, b, c):
        np.testing.assert_allclose(x, ref, atol=1e-5)


def test_cpu_fully_masked_rows():
    from fa import cpu
    q, k, v = inputs(1, 1, 1, 6, 6, 8, np.float32, seed=2)
    out, lse = cpu.attention(q, k, v, window=(-1, -1), return_lse=True)  # plain
    assert np.isfinite(lse).all()
    # Nq > Nk, causal bottom-right: the first Nq - Nk rows see no key.
    q2 = np.concatenate([q, q], axis=2)
    out, lse = cpu.attention(q2, k, v, causal=True, return_lse=True)
    assert (out[0, 0, :6] == 0).all() and np.isneginf(lse[0, 0, :6]).all()


def test_cpu_errors():
    from fa import cpu
    q, k, v = inputs(1, 2, 1, 4, 4, 8, np.float32)
    with pytest.raises(AttentionInputError, match="float64"):
        cpu.attention(q.astype(np.float64), k, v)
    with pytest.raises(AttentionInputError, match="do not divide"):
        cpu.attention(np.zeros((1, 3, 4, 8), np.float32), np.zeros((1, 2, 4, 8), np.float32),
                      np.zeros((1, 2, 4, 8), np.float32))


def test_fa_cpu_attribute():
    assert fa.cpu.attention is not None


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items())
                         or "plain")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cpu_grad_matches_numpy(kw, dtype):
    from fa import cpu
    q, k, v = inputs(2, 4, 2, 13, 17, 16, dtype, seed=3)
    dout = np.random.default_rng(4).standard_normal((2, 4, 13, 16)).astype(dtype)
    out, lse = cpu.attention(q, k, v, return_lse=True, **kw)
    dq, dk, dv = cpu.attention_grad(q, k, v, out, lse, dout, **kw)
    ref = cpu.reference_grad_numpy(q, k, v, dout, **kw)
    # f16: o and dout are rounded to f16 on the way in, and dq / dk / dv to f16
    # on the way out (the op's results have q's type).
    tol = 2e-5 if dtype == np.float32 else 5e-3
    for got, want, shape in zip((dq, dk, dv), ref, (q.shape, k.shape, v.shape)):
        assert got.shape == shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, atol=tol, rtol=tol)


def test_cpu_grad_reference_lowering_blocks_and_masked_rows():
    from fa import cpu
    # Nq > Nk with causal: the first rows see no key, their gradients are 0.
    q, k, v = inputs(1, 2, 1, 20, 9, 8, np.float32, seed=5)
    dout = np.random.default_rng(6).standard_normal((1, 2, 20, 8)).astype(np.float32)
    out, lse = cpu.attention(q, k, v, causal=True, return_lse=True)
    ref = cpu.reference_grad_numpy(q, k, v, dout, causal=True)
    for kw in (dict(), dict(reference=True), dict(block_q=4, block_kv=2)):
        got = cpu.attention_grad(q, k, v, out, lse, dout, causal=True, **kw)
        for g, w in zip(got, ref):
            np.testing.assert_allclose(g, w, atol=2e-5, rtol=2e-5)
        assert np.all(got[0][:, :, :11] == 0)
    # Another dout: another dq (the check is not vacuous).
    other = cpu.attention_grad(q, k, v, out, lse, dout * 2, causal=True)
    assert not np.allclose(other[0], ref[0])


def test_cpu_grad_errors():
    from fa import cpu
    q, k, v = inputs(1, 2, 1, 4, 4, 8, np.float32)
    out, lse = cpu.attention(q, k, v, return_lse=True)
    with pytest.raises(AttentionInputError, match="dout must have shape"):
        cpu.attention_grad(q, k, v, out, lse, out[:, :, :3])
    with pytest.raises(AttentionInputError, match="lse must have shape"):
        cpu.attention_grad(q, k, v, out, lse[..., None], out)
    with pytest.raises(AttentionInputError, match="float16 or float32"):
        cpu.attention_grad(q.astype(np.int32), k, v, out, lse, out)
