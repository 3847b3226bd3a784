"""kv_lens and paged KV caches with torch (skipped where torch is absent, as
on the build machine; the GPU machine's torch runs them, on the CPU and, when
there is one, on CUDA): fa.torch_ops.reference against an independent dense
computation in numpy (keys gathered one by one, masks by loops, float64);
the decode split through the page table (and on a contiguous cache with one
K/V head) against the unsplit reference, with kernels simulated by the
reference itself (prime lengths, empty chunks and sequences, lengths past the
capacity, out-of-pool page ids, a table padded or not); the combine with -inf
chunks; fa.attention's fallback, checked mode and the custom op (opcheck,
torch.compile)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch too old for fa.torch_ops (torch.library.custom_op)",
                allow_module_level=True)

import fa  # noqa: E402
from fa import decode, torch_ops  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def dense_numpy(q, k, v, kv_lens=None, page_table=None, causal=False, window=None, scale=None,
                softcap=None):
    """out [B, Hq, Nq, Dv], lse [B, Hq, Nq] in float64, written without
    torch_ops: for each sequence its keys gathered one by one (the page id
    clamped into the pool), each (row, key) kept or not by the rules of
    docs/Attention.md with the sequence's own length and diagonal."""
    q, k, v = (np.asarray(x.double().cpu().numpy()) for x in (q, k, v))
    B, Hq, Nq, D = q.shape
    Hkv = k.shape[1]
    G = Hq // Hkv
    if page_table is not None:
        table = page_table.cpu().numpy()
        P, S = k.shape[0], k.shape[2]
        cap = table.shape[1] * S
    else:
        cap = k.shape[2]
    lens = [cap] * B if kv_lens is None else [min(max(int(n), 0), cap) for n in kv_lens.cpu()]
    c = 1 / math.sqrt(D) if scale is None else scale
    if causal:
        window = (window[0] if window else -1, 0)
    out = np.zeros((B, Hq, Nq, v.shape[-1]))
    lse = np.full((B, Hq, Nq), -np.inf)
    for b in range(B):
        L = lens[b]
        for h in range(Hq):
            g = h // G
            keys, vals = [], []
            for j in range(L):
                if page_table is not None:
                    page = min(max(int(table[b, j // S]), 0), P - 1)
                    keys.append(k[page, g, j % S])
                    vals.append(v[page, g, j % S])
                else:
                    keys.append(k[b, g, j])
                    vals.append(v[b, g, j])
            for i in range(Nq):
                seen = []
                for j in range(L):
                    d = j - (i + L - Nq)
                    if window and ((window[1] >= 0 and d > window[1]) or
                                   (window[0] >= 0 and d < -window[0])):
                        continue
                    s = c * float(q[b, h, i] @ keys[j])
                    if softcap:
                        s = softcap * math.tanh(s / softcap)
                    seen.append((s, vals[j]))
                if not seen:
                    continue
                m = max(s for s, _ in seen)
                w = [math.exp(s - m) for s, _ in seen]
                out[b, h, i] = sum(wj * vj for wj, (_, vj) in zip(w, seen)) / sum(w)
                lse[b, h, i] = m + math.log(sum(w))
    return out, lse


def paged_case(device, B=4, Hq=4, Hkv=2, Nq=1, P=9, S=16, M=5, D=32, Dv=None, seed=0,
               lens=(0, 17, 80, 200), bad_pages=True):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, Hq, Nq, D, generator=g)
    k = torch.randn(P, Hkv, S, D, generator=g)
    v = torch.randn(P, Hkv, S, Dv or D, generator=g)
    table = torch.randperm(P * M, generator=g)[:B * M].remainder(P).view(B, M)
    if bad_pages:  # out of the pool: clamped to 0 and P - 1
        table[1, 0], table[-1, -1] = -3, P + 5
    kv_lens = torch.tensor(lens[:B], dtype=torch.int32)
    return [x.to(device) for x in (q, k, v, kv_lens, table.to(torch.int32))]


def assert_close(out, lse, want_out, want_lse, atol=2e-5):
    np.testing.assert_allclose(out.double().cpu().numpy(), want_out, atol=atol, rtol=1e-4)
    if lse is not None:
        got = lse.double().cpu().numpy()
        assert np.array_equal(np.isneginf(got), np.isneginf(want_lse))
        fin = np.isfinite(want_lse)
        np.testing.assert_allclose(got[fin], want_lse[fin], atol=atol, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("flags", [dict(), dict(causal=True), dict(window=(6, 3)),
                                   dict(causal=True, window=(10, 0), softcap=3.0),
                                   dict(scale=0.3)])
@pytest.mark.parametrize("Nq", [1, 5, 40])
def test_reference_paged_against_numpy(device, flags, Nq):
    # Lengths 0 (a row with no key: out 0, lse -inf), 17 (a page and one key),
    # 80 (the capacity: 5 pages of 16), 200 (past it: clamped); with 5 and 40
    # query rows, causal rows before a sequence's diagonal see nothing.
    q, k, v, lens, table = paged_case(device, Nq=Nq, Dv=24)
    out, lse = torch_ops.reference(q, k, v, return_lse=True, kv_lens=lens, page_table=table,
                                   **flags)
    want_out, want_lse = dense_numpy(q, k, v, lens, table, **flags)
    assert_close(out, lse, want_out, want_lse)
    # Without kv_lens: every sequence at the capacity.
    out, lse = torch_ops.reference(q, k, v, return_lse=True, page_table=table, **flags)
    assert_close(out, lse, *dense_numpy(q, k, v, None, table, **flags))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("flags", [dict(), dict(causal=True), dict(window=(4, 4))])
def test_reference_kv_lens_contiguous_against_numpy(device, flags):
    g = torch.Generator().manual_seed(1)
    q = torch.randn(3, 6, 7, 16, generator=g).to(device)
    k = torch.randn(3, 2, 50, 16, generator=g).to(device)
    v = torch.randn(3, 2, 50, 16, generator=g).to(device)
    lens = torch.tensor([50, 0, 23], dtype=torch.int32, device=device)
    out, lse = torch_ops.reference(q, k, v, return_lse=True, kv_lens=lens, **flags)
    assert_close(out, lse, *dense_numpy(q, k, v, lens, None, **flags))


def simulated_kernels(monkeypatch, calls):
    """torch_ops._kernel returns, for any variant, a 'kernel' that checks
    what it is given against the contract and computes with the reference:
    the packed and split paths run as they would on the GPU."""
    def kernel(q, v, causal, window, scale, softcap, return_lse, fallback, grad=False,
               kv_lens=False, page_size=None):
        def run(qq, kk, vv, out=None, lse=None, *, kv_lens=None, page_table=None,
                check_indices=None):
            B = qq.shape[0]
            assert (kv_lens is not None) == kv_lens_wanted
            assert (page_table is not None) == (page_size is not None)
            if kv_lens is not None:
                assert kv_lens.dtype == torch.int32 and kv_lens.shape == (B,)
            if page_table is not None:
                assert page_table.dtype == torch.int32 and page_table.shape[0] == B
                assert page_table.is_contiguous() and kk.shape[2] == page_size
            else:
                assert kk.shape[0] == B
            calls.append(dict(q=tuple(qq.shape), k=tuple(kk.shape), causal=causal,
                              lens=None if kv_lens is None else kv_lens.tolist(),
                              table=None if page_table is None else tuple(page_table.shape)))
            o, l_ = torch_ops.reference(qq, kk, vv, causal, window, scale, softcap, True,
                                        kv_lens=kv_lens, page_table=page_table)
            return (o, l_) if return_lse else o
        kv_lens_wanted = kv_lens
        return run
    monkeypatch.setattr(torch_ops, "_kernel", kernel)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("splits,M", [(2, 6), (3, 6), (4, 6), (6, 6), (4, 7), (5, 13)])
def test_split_through_the_page_table(device, monkeypatch, splits, M):
    """_run_packed with S chunks of ceil(M / S) pages against the unsplit
    reference: prime lengths (0, 1, 17, 97 of a capacity of 16 M), so chunks
    are partial or empty, a sequence with no key at all (out 0, lse -inf:
    every chunk -inf, no NaN), one past the capacity, out-of-pool page ids."""
    calls = []
    simulated_kernels(monkeypatch, calls)
    lens = (0, 1, 17, 97, 16 * M + 3)
    q, k, v, kv_lens, table = paged_case(device, B=5, Hq=8, Hkv=2, P=11, M=M, lens=lens)
    want_out, want_lse = torch_ops.reference(q, k, v, causal=True, return_lse=True,
                                             kv_lens=kv_lens, page_table=table)
    out, lse = torch_ops._run_packed(q, k, v, splits, None, None, True, kv_lens, table)
    assert not torch.isnan(out).any() and not torch.isnan(lse).any()
    assert_close(out, lse, want_out.double().cpu().numpy(), want_lse.double().cpu().numpy())
    (call,) = calls
    c = decode.page_chunk(M, splits)
    assert call["q"] == (5 * splits, 2, 4, 32)  # the group's 4 heads packed, repeated S times
    assert call["table"] == (5 * splits, c) and call["k"] == (11, 2, 16, 32)
    assert call["lens"] == decode.split_lengths(kv_lens.tolist(), splits, 16 * c, 16 * M)
    # The sequence with no key: out 0, lse -inf.
    assert torch.all(out[0] == 0) and torch.all(torch.isneginf(lse[0]))
    # Without kv_lens: the chunks' lengths still say where the padding starts.
    calls.clear()
    out, lse = torch_ops._run_packed(q, k, v, splits, None, None, True, None, table)
    want = torch_ops.reference(q, k, v, return_lse=True, page_table=table)
    assert_close(out, lse, *(x.double().cpu().numpy() for x in want))
    assert calls[0]["lens"] == decode.split_lengths(5, splits, 16 * c, 16 * M)


@pytest.mark.parametrize("device", DEVICES)
def test_packed_without_split(device, monkeypatch):
    calls = []
    simulated_kernels(monkeypatch, calls)
    q, k, v, kv_lens, table = paged_case(device, B=4, Hq=8, Hkv=2)
    out, lse = torch_ops._run_packed(q, k, v, 1, None, None, True, kv_lens, table)
    assert_close(out, lse, *dense_numpy(q, k, v, kv_lens, table))
    assert calls[0]["q"] == (4, 2, 4, 32) and calls[0]["lens"] == kv_lens.tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_kv_lens_split_with_one_kv_head(device, monkeypatch):
    # One K/V head: the contiguous cache [B, 1, Nk, D] is the free view
    # [B*S, 1, Nk/S, D]; the lengths per chunk as with pages.
    calls = []
    simulated_kernels(monkeypatch, calls)
    g = torch.Generator().manual_seed(2)
    q = torch.randn(3, 4, 1, 32, generator=g).to(device)
    k = torch.randn(3, 1, 96, 32, generator=g).to(device)
    v = torch.randn(3, 1, 96, 32, generator=g).to(device)
    lens = torch.tensor([0, 53, 96], dtype=torch.int32, device=device)
    out, lse = torch_ops._run_packed(q, k, v, 4, None, None, True, lens, None)
    assert_close(out, lse, *dense_numpy(q, k, v, lens, None))
    assert calls[0]["k"] == (12, 1, 24, 32) and calls[0]["lens"] == [0] * 4 + [24, 24, 5, 0] \
        + [24] * 4


@pytest.mark.parametrize("device", DEVICES)
def test_combine_with_empty_chunks(device):
    # Rows: all chunks with keys; one empty chunk (-inf, output 0); every
    # chunk empty (a sequence of length 0).
    lse = torch.tensor([[0.5, 1.5, -0.25], [2.0, float("-inf"), 0.0],
                        [float("-inf")] * 3], device=device)
    parts = torch.randn(3, 3, 8, device=device)
    parts[1, 1] = 0
    parts[2] = 0
    out, tot = torch_ops.combine(parts, lse, torch.float32, empty_chunks=True)
    assert not torch.isnan(out).any() and not torch.isnan(tot).any()
    for r in range(2):
        w = torch.softmax(lse[r], 0)
        torch.testing.assert_close(out[r, 0], (w[:, None] * parts[r]).sum(0))
        torch.testing.assert_close(tot[r], torch.logsumexp(lse[r], 0))
    assert torch.all(out[2] == 0) and torch.isneginf(tot[2])
    # Without empty_chunks (the contiguous split: every chunk has keys) the
    # all -inf row would be NaN, which is why the paged path asks for it.
    assert torch.isnan(torch_ops.combine(parts, lse, torch.float32)[0][2]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_fa_attention_fallback_and_checked_mode(device, monkeypatch):
    monkeypatch.setattr(torch_ops, "_FALLBACK_ENV", False)
    q, k, v, kv_lens, table = paged_case(device, Nq=3, bad_pages=False, lens=(0, 17, 80, 33))
    out, lse = fa.attention(q, k, v, causal=True, return_lse=True, kv_lens=kv_lens,
                            page_table=table, fallback=True)
    assert_close(out, lse, *dense_numpy(q, k, v, kv_lens, table, causal=True))
    with pytest.raises(fa.AttentionInputError, match="kv_lens has dtype i64"):
        fa.attention(q, k, v, kv_lens=kv_lens.long(), page_table=table, fallback=True)
    monkeypatch.setenv("FA_CHECK_INDICES", "1")
    table[3, 2] = 9  # sequence 3 reads pages 0 .. 2 (33 keys): 9 is past the pool of 9
    with pytest.raises(fa.AttentionInputError, match=r"page_table\[3, 2\] = 9: sequence 3"):
        fa.attention(q, k, v, kv_lens=kv_lens, page_table=table, fallback=True)
    monkeypatch.setenv("FA_CHECK_INDICES", "0")
    fa.attention(q, k, v, kv_lens=kv_lens, page_table=table, fallback=True)  # clamped


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the split plan runs on CUDA only")
def test_run_plans_the_split_on_cuda(monkeypatch):
    """fa.attention on CUDA with simulated kernels: the plan (fa.decode) splits
    one sequence of a long paged cache, the result matches the reference."""
    calls = []
    simulated_kernels(monkeypatch, calls)
    torch_ops._sms.clear()
    q, k, v, kv_lens, table = paged_case("cuda", B=2, Hq=16, Hkv=4, P=1300, S=16, M=1283,
                                         lens=(20011, 9001))
    out, lse = fa.attention(q, k, v, causal=True, return_lse=True, kv_lens=kv_lens,
                            page_table=table)
    want = torch_ops.reference(q, k, v, causal=True, return_lse=True, kv_lens=kv_lens,
                               page_table=table)
    assert_close(out, lse, *(x.double().cpu().numpy() for x in want), atol=1e-4)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    S = decode.plan_page_splits(2, 16, 4, 1, 1283, 16, sms)
    assert S > 1 and calls[0]["q"][0] == 2 * S


def test_opcheck_and_compile():
    q, k, v, kv_lens, table = paged_case("cpu", Nq=2, bad_pages=False)
    args = (q, k, v, True, -1, -1, None, None, True, True, kv_lens, table)
    if hasattr(torch.library, "opcheck"):
        torch.library.opcheck(torch.ops.fa.attention.default, args)

    def f(q, k, v, lens, table):
        return fa.attention(q, k, v, causal=True, kv_lens=lens, page_table=table, fallback=True)
    compiled = torch.compile(f, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(q, k, v, kv_lens, table), f(q, k, v, kv_lens, table))
