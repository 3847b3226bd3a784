"""fa.attention_varlen with torch (skipped where torch is absent, as on the
build machine; the GPU machine's torch runs it on the CPU and, with a kernel
for it (a loaded bundle, FA_BUNDLE, or the compiler), on CUDA): the torch
fallback against an independent numpy computation per sequence (float64,
masks by loops), the argument errors, the fallback's backward per sequence,
and the sm_90a kernels (forward and backward) against the fallback."""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch too old for fa.torch_ops (torch.library.custom_op)",
                allow_module_level=True)

import fa  # noqa: E402
from fa.varlen import _reference  # noqa: E402

# The GPU machine has no compiler: its kernels come from a bundle named by
# FA_BUNDLE, read here because the suite's fixture clears the variable.
_BUNDLE = os.environ.get("FA_BUNDLE")


def dense_numpy(q, k, v, cu_q, cu_k, causal=False, window=None):
    """out [Tq, Hq, D], lse [Hq, Tq] in float64, one sequence at a time."""
    q, k, v = (x.double().cpu().numpy() for x in (q, k, v))
    Tq, Hq, D = q.shape
    Tk, Hkv = k.shape[:2]
    out = np.zeros((Tq, Hq, D))
    lse = np.full((Hq, Tq), -np.inf)
    for s in range(len(cu_q) - 1):
        qs = min(max(cu_q[s], 0), Tq)
        qe = min(max(cu_q[s + 1], qs), Tq)
        ks = min(max(cu_k[s], 0), Tk)
        ke = min(max(cu_k[s + 1], ks), Tk)
        lq, lk = qe - qs, ke - ks
        for h in range(Hq):
            g = h // (Hq // Hkv)
            for i in range(lq):
                scores = []
                for j in range(lk):
                    d = j - (i + lk - lq)
                    left, right = window if window else (-1, 0 if causal else -1)
                    if (right >= 0 and d > right) or (left >= 0 and d < -left):
                        continue
                    scores.append((j, q[qs + i, h] @ k[ks + j, g] / np.sqrt(D)))
                if not scores:
                    continue
                m = max(s_ for _, s_ in scores)
                w = [(j, np.exp(s_ - m)) for j, s_ in scores]
                tot = sum(e for _, e in w)
                out[qs + i, h] = sum(e * v[ks + j, g] for j, e in w) / tot
                lse[h, qs + i] = m + np.log(tot)
    return out, lse


CASES = [
    ([0, 5, 5, 17, 40], [0, 9, 12, 12, 50], 4, 2, True, None),   # empty, no keys, GQA, Nq != Nk
    ([0, 33, 70], [0, 33, 70], 2, 2, False, None),
    ([0, 20, 45], [0, 30, 45], 2, 1, False, (6, 2)),             # a window, MQA
]


@pytest.mark.parametrize("cu_q,cu_k,hq,hkv,causal,window", CASES)
def test_fallback_matches_numpy(cu_q, cu_k, hq, hkv, causal, window):
    g = torch.Generator().manual_seed(1)
    q = torch.randn(cu_q[-1], hq, 16, generator=g)
    k = torch.randn(cu_k[-1], hkv, 16, generator=g)
    v = torch.randn(cu_k[-1], hkv, 16, generator=g)
    cq, ck = torch.tensor(cu_q, dtype=torch.int32), torch.tensor(cu_k, dtype=torch.int32)
    out, lse = fa.attention_varlen(q, k, v, cq, ck, causal=causal, window=window,
                                   return_lse=True, fallback=True)
    ref_out, ref_lse = dense_numpy(q, k, v, cu_q, cu_k, causal, window)
    assert out.shape == q.shape and lse.shape == (hq, cu_q[-1])
    np.testing.assert_allclose(out.double().numpy(), ref_out, atol=1e-5)
    fin = np.isfinite(ref_lse)
    np.testing.assert_allclose(lse.double().numpy()[fin], ref_lse[fin], atol=1e-5)
    assert np.all(np.isneginf(lse.numpy()[~fin]))


def test_errors():
    q = torch.randn(10, 2, 16)
    cu = torch.tensor([0, 4, 10], dtype=torch.int32)
    with pytest.raises(fa.AttentionInputError, match=r"must be int32, got torch.int64 \(use "):
        fa.attention_varlen(q, q, q, cu.long(), fallback=True)
    with pytest.raises(fa.AttentionInputError, match=r"q must be \[T, H, D\]"):
        fa.attention_varlen(q[None], q, q, cu, fallback=True)
    with pytest.raises(fa.AttentionInputError, match="Hq = 2 must be a multiple of Hkv = 3"):
        fa.attention_varlen(q, torch.randn(10, 3, 16), torch.randn(10, 3, 16), cu,
                            fallback=True)
    with pytest.raises(fa.AttentionInputError, match="max_seqlen_q must be a non-negative int"):
        fa.attention_varlen(q, q, q, cu, max_seqlen_q=-1, fallback=True)
    with pytest.raises(fa.UnsupportedError, match="fa's kernels run on CUDA devices"):
        fa.attention_varlen(q, q, q, cu, fallback=False)



def test_fallback_backward_per_sequence():
    """Without a kernel (the CPU), fallback=True computes each sequence with torch, and
    autograd goes through it: the gradients are those of the sequences alone."""
    torch.manual_seed(0)
    lens = [4, 0, 6]
    cu = torch.tensor([0, 4, 4, 10], dtype=torch.int32)
    q, k, v = (torch.randn(10, 2, 16, dtype=torch.float64, requires_grad=True)
               for _ in range(3))
    out = fa.attention_varlen(q, k, v, cu, causal=True, fallback=True)
    out.square().sum().backward()
    for s, (a, b) in enumerate(((0, 4), (4, 10))):
        qs, ks, vs = (t.detach()[a:b].clone().requires_grad_() for t in (q, k, v))
        o = fa.attention_varlen(qs, ks, vs, torch.tensor([0, b - a], dtype=torch.int32),
                                causal=True, fallback=True)
        o.square().sum().backward()
        for t, ts in ((q, qs), (k, ks), (v, vs)):
            assert torch.allclose(t.grad[a:b], ts.grad, atol=1e-12), (s, lens)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_cuda_kernel_matches_fallback(dtype, causal):
    lens_q, lens_k = [300, 0, 129, 1000, 17], [300, 40, 0, 1200, 17]
    cu_q = torch.tensor([0] + np.cumsum(lens_q).tolist(), dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0] + np.cumsum(lens_k).tolist(), dtype=torch.int32, device="cuda")
    q = torch.randn(sum(lens_q), 8, 128, device="cuda", dtype=dtype)
    k = torch.randn(sum(lens_k), 2, 128, device="cuda", dtype=dtype)
    v = torch.randn_like(k)
    if _BUNDLE:
        fa.load_bundle(_BUNDLE)
    try:
        out, lse = fa.attention_varlen(q, k, v, cu_q, cu_k, max(lens_q), causal=causal,
                                       return_lse=True)
    except fa.UnsupportedError as e:
        pytest.skip(f"no varlen kernel here: {e}")
    # torch per sequence (the fallback's computation, checked above against numpy).
    ref, ref_lse = _reference(q, k, v, cu_q, cu_k, causal, None, None, True)
    tol = 4e-3 if dtype == torch.float16 else 3e-2
    assert (out.float() - ref.float()).abs().max().item() <= tol
    fin = torch.isfinite(ref_lse)
    assert (lse[fin] - ref_lse[fin]).abs().max().item() <= 1e-3
    assert bool(torch.all(torch.isneginf(lse[~fin])))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_cuda_backward_matches_fallback(dtype, causal):
    """loss.backward() through fa.attention_varlen runs the `varlen,grad` kernel; its
    gradients (and those of lse) against autograd through the fallback in float32, with
    an empty sequence, one without keys and Nq != Nk."""
    lens_q, lens_k = [300, 0, 129, 700, 17], [300, 40, 0, 900, 17]
    cu_q = torch.tensor([0] + np.cumsum(lens_q).tolist(), dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0] + np.cumsum(lens_k).tolist(), dtype=torch.int32, device="cuda")
    torch.manual_seed(0)
    q = torch.randn(sum(lens_q), 8, 128, device="cuda", dtype=dtype)
    k = torch.randn(sum(lens_k), 2, 128, device="cuda", dtype=dtype)
    v = torch.randn_like(k)
    w_o = torch.randn(q.shape, device="cuda", dtype=torch.float32)
    w_l = torch.randn(8, q.shape[0], device="cuda", dtype=torch.float32)
    if _BUNDLE:
        fa.load_bundle(_BUNDLE)

    def grads(x, **kw):
        leaves = [t.detach().clone().requires_grad_() for t in x]
        out, lse = fa.attention_varlen(*leaves, cu_q, cu_k, causal=causal, return_lse=True,
                                       **kw)
        lse = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
        ((out.float() * w_o).sum() + (lse * w_l).sum()).backward()
        return [t.grad.float() for t in leaves]

    try:
        ours = grads((q, k, v), fallback=False)
    except fa.UnsupportedError as e:
        pytest.skip(f"no varlen backward kernel here: {e}")
    ref = grads((q.float(), k.float(), v.float()), fallback=True)
    tol = 1e-2 if dtype == torch.float16 else 3e-2
    for name, a, b in zip(("dq", "dk", "dv"), ours, ref):
        assert bool(torch.isfinite(a).all()), name
        err = (a - b).abs().max().item() / b.abs().max().item()
        assert err <= tol, (name, err)
    # The sequence without keys and the keys of the empty query sequence: zero gradients.
    assert bool((ours[0][300:429] == 0).all())
    assert bool((ours[1][300:340] == 0).all()) and bool((ours[2][300:340] == 0).all())

