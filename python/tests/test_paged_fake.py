"""fa.attention with kv_lens and paged KV caches against a fake torch and a
fake libcuda (test_torch_fake's fixture): kernels of the compiler's contract
written by hand into a bundle (conftest.paged_bundle), so that the routing,
the launch (every pointer and size, the pool's tensor maps), the checked mode
and the fallback's routing are tested without the kernels. The numerics of
the reference, the split and the combine need torch (test_paged_torch.py)."""
import os
import types
import shutil

import numpy as np
import pytest

import fa

from conftest import paged_bundle
from test_torch_fake import (CLANG, CUDA_INCLUDE, FAKE_SRC, Ctx, Tensor, _live,  # noqa: F401
                             fake, launches, params)

pytestmark = pytest.mark.skipif(
    not (CLANG and os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h"))
         and os.path.exists(FAKE_SRC)), reason="needs clang++-22, cuda.h and the repository")

PAGED_KINDS = "pppppp" + "iiiiiii"  # q k v out kv_lens page_table, 5 sizes, num_pages max_pages


def i32(t, values, device="cuda:0"):
    a = np.asarray(values, dtype=np.int32)
    return Tensor(a.shape, t.int32, device, data=a)


@pytest.fixture
def hidden_compiler(monkeypatch):
    """No compiler: only the bundle's kernels (the one built here may not
    compile kv_lens / pages yet, or may: either way these tests use the
    hand-written manifests)."""
    def unavailable(variant, use_cache=True):
        raise fa.CompilerUnavailable("the compiler is hidden by the test")
    monkeypatch.setattr(fa.compiler, "compile_variant", unavailable)


def pool(t, P, Hkv, S, D=128, device="cuda:0"):
    return Tensor((P, Hkv, S, D), t.float16, device), Tensor((P, Hkv, S, D), t.float16, device)


def test_paged_decode_packs_the_group(fake, tmp_path, hidden_compiler):
    # 64 sequences of one query row, 32 heads over 8 K/V heads: 512 CTAs, no
    # split. The packed call: q as [64, 8, 4, 128], the non-causal kernel with
    # kv_lens and a page table, the pool's maps over [D, S, num_pages * Hkv].
    t = fake.torch
    fa.load_bundle(paged_bundle(tmp_path / "b", ["f16,d128,full,kv_lens,page=16"]))
    B, P, M = 64, 512, 256
    q = Tensor((B, 32, 1, 128), t.float16)
    k, v = pool(t, P, 8, 16)
    lens = i32(t, np.arange(B) * 61 % 4096)
    table = i32(t, np.arange(B * M).reshape(B, M) % P)
    fake.log(PAGED_KINDS)
    out = fa.attention(q, k, v, causal=True, kv_lens=lens, page_table=table)
    lines = fake.log()
    (launch,) = launches(lines)
    assert out.shape == (B, 32, 1, 128)
    assert "grid 1 8 64 block 384" in launch
    p = params(launch)
    assert p[3] == hex(out.data_ptr()) and p[4:6] == [hex(lens.data_ptr()), hex(table.data_ptr())]
    # B, Hq (packed: the K/V heads), Hkv, Nq (the group's 4 heads as rows),
    # Nk = max_pages * page_size, num_pages, max_pages.
    assert p[6:] == "64 8 8 4 4096 512 256".split()
    encodes = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")]
    assert f"addr {hex(k.data_ptr())} dims 128 16 4096 strides 256 4096 " in encodes[1]
    assert f"addr {hex(v.data_ptr())} dims 128 16 4096 strides 256 4096 " in encodes[2]
    assert "dims 128 4 512 strides 256 1024" in encodes[0]  # q as [B*Hkv, 4 rows, D]


def test_paged_prefill_runs_the_causal_kernel(fake, tmp_path, hidden_compiler):
    # Several query rows with causal: rows differ by position, no packing; the
    # causal kernel with lse on sm_80 (cuda:1): plain pointers in the
    # contract's order, the paged sizes last.
    t = fake.torch
    fa.load_bundle(paged_bundle(tmp_path / "b", ["f16,d128,causal,lse,kv_lens,page=64"],
                                chip="sm_80"))
    q = Tensor((3, 8, 100, 128), t.float16, "cuda:1")
    k, v = pool(t, 20, 2, 64, device="cuda:1")
    lens = i32(t, [100, 300, 7], "cuda:1")
    table = i32(t, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 0, 0, 0, 0]], "cuda:1")
    fake.log("ppppppp" + "iiiiiii")
    out, lse = fa.attention(q, k, v, causal=True, return_lse=True, kv_lens=lens,
                            page_table=table)
    (launch,) = launches(fake.log())
    assert "stream 0x5001" in launch and "grid 1 8 3 block 128" in launch
    assert params(launch) == [hex(x.data_ptr()) for x in (q, k, v, out, lse, lens, table)] \
        + "3 8 2 100 320 20 5".split()
    assert lse.shape == (3, 8, 100)


def test_kv_lens_on_a_contiguous_cache(fake, tmp_path, hidden_compiler):
    # kv_lens without pages: packed (8 K/V heads: not split), the kernel with
    # kv_lens and the usual sizes.
    t = fake.torch
    fa.load_bundle(paged_bundle(tmp_path / "b", ["f16,d128,full,kv_lens"]))
    q = Tensor((2, 32, 1, 128), t.float16)
    kv = Tensor((2, 8, 1000, 128), t.float16)
    lens = i32(t, [1000, 3])
    fake.log("ppppp" + "iiiii")
    fa.attention(q, kv, kv, causal=True, kv_lens=lens)
    (launch,) = launches(fake.log())
    assert params(launch)[4:] == [hex(lens.data_ptr())] + "2 8 8 4 1000".split()


def test_checked_mode(fake, tmp_path, hidden_compiler, monkeypatch):
    """FA_CHECK_INDICES=1: the lengths and the page ids each sequence reads
    are checked on the host before anything is launched; unchecked, the same
    call launches (the kernel clamps)."""
    t = fake.torch
    fa.load_bundle(paged_bundle(tmp_path / "b", ["f16,d128,causal,kv_lens,page=16"]))
    q = Tensor((2, 4, 3, 128), t.float16)
    k, v = pool(t, 6, 4, 16)

    def call(lens, table):
        return fa.attention(q, k, v, causal=True, kv_lens=i32(t, lens), page_table=i32(t, table))
    good = [[0, 1, 2], [3, 4, 99]]  # sequence 1 reads 2 pages: entry 2 is never read
    monkeypatch.setenv("FA_CHECK_INDICES", "1")
    fake.log("pppppp" + "iiiiiii")
    call([48, 20], good)
    assert len(launches(fake.log())) == 1
    cases = [
        ([48, 33], good, r"fa.attention: page_table\[1, 2\] = 99: sequence 1 reads page 2 of its "
                         r"row \(pages 0 .. 2: kv_lens\[1\] = 33, page_size 16\), and 99 is not "
                         r"a page of the pool \(0 .. 5\)"),
        ([48, 20], [[0, -1, 2], [3, 4, 5]], r"page_table\[0, 1\] = -1: sequence 0"),
        ([49, 20], good, r"kv_lens\[0\] = 49: sequence 0 has more keys than the capacity 48 "
                         r"\(max_pages 3 x page_size 16\)"),
        ([48, -2], good, r"kv_lens\[1\] = -2: sequence 1 has a negative key length"),
    ]
    for lens, table, match in cases:
        with pytest.raises(fa.AttentionInputError, match=match):
            call(lens, table)
        assert not launches(fake.log())
    monkeypatch.setenv("FA_CHECK_INDICES", "0")
    for lens, table, _ in cases:
        call(lens, table)
    assert len(launches(fake.log())) == len(cases)


def test_runtime_kernel_contract(fake, tmp_path, hidden_compiler, monkeypatch):
    """fa_runtime.Kernel.__call__ directly: kv_lens and page_table are
    required by the paged kernel, checked (dtype, device), the checked mode
    by argument or FA_CHECK_INDICES; a kernel without them refuses them."""
    t = fake.torch
    fa.load_bundle(paged_bundle(tmp_path / "b", ["f16,d128,causal,kv_lens,page=16",
                                                 "f16,d128,causal"]))
    kern = fa.dispatch.kernel(fa.Variant.parse("f16,d128,causal,kv_lens,page=16")).runtime
    plain = fa.dispatch.kernel(fa.Variant.parse("f16,d128,causal")).runtime
    assert (kern.kv_lens, kern.page_size, plain.kv_lens, plain.page_size) == (True, 16, False,
                                                                              None)
    q = Tensor((2, 4, 3, 128), t.float16)
    k, v = pool(t, 6, 4, 16)
    lens, table = i32(t, [48, 70]), i32(t, [[0, 1, 2], [3, 4, 5]])
    with pytest.raises(ValueError, match="kv_lens: missing: kernel .* takes per-sequence key "
                                         "lengths"):
        kern(q, k, v, page_table=table)
    with pytest.raises(ValueError, match="page_table: missing"):
        kern(q, k, v, kv_lens=lens)
    with pytest.raises(ValueError, match="page_table: dtype i64, but kernel .* takes i32"):
        kern(q, k, v, kv_lens=lens, page_table=Tensor((2, 3), t.int64))
    with pytest.raises(ValueError, match="kv_lens: on cuda:1, but q is on cuda:0"):
        kern(q, k, v, kv_lens=i32(t, [1, 2], "cuda:1"), page_table=table)
    with pytest.raises(ValueError, match="kv_lens: kernel .* takes no kv_lens: it was compiled "
                                         "without per-sequence key lengths"):
        plain(q, q, q, kv_lens=lens)
    fake.log("pppppp" + "iiiiiii")
    monkeypatch.delenv("FA_CHECK_INDICES", raising=False)
    kern(q, k, v, kv_lens=lens, page_table=table)  # 70 > 48: clamped by the kernel
    assert len(launches(fake.log())) == 1
    with pytest.raises(ValueError, match=r"kv_lens\[1\] = 70: sequence 1 has more keys"):
        kern(q, k, v, kv_lens=lens, page_table=table, check_indices=True)
    monkeypatch.setenv("FA_CHECK_INDICES", "1")
    with pytest.raises(ValueError, match=r"kv_lens\[1\] = 70"):
        kern(q, k, v, kv_lens=lens, page_table=table)
    kern(q, k, v, kv_lens=lens, page_table=table, check_indices=False)
    assert len(launches(fake.log())) == 1


def test_no_kernel_falls_back_to_the_reference(fake, tmp_path, hidden_compiler, monkeypatch):
    t = fake.torch
    q = Tensor((2, 4, 3, 128), t.float16)
    k, v = pool(t, 6, 4, 16)
    lens, table = i32(t, [48, 20]), i32(t, [[0, 1, 2], [3, 4, 5]])
    with pytest.raises(fa.UnsupportedError, match="no kernel for sm_90a "
                                                  "f16,d128,causal,kv_lens,page=16.*fallback=True"):
        fa.attention(q, k, v, causal=True, kv_lens=lens, page_table=table)
    seen = []

    def reference(q, k, v, causal, window, scale, softcap, return_lse, kv_lens=None,
                  page_table=None):
        seen.append((causal, return_lse, kv_lens, page_table))
        return Tensor(q.shape, q.dtype), Tensor(q.shape[:3], t.float32)
    monkeypatch.setattr(fake.ops, "reference", reference)
    out = fa.attention(q, k, v, causal=True, kv_lens=lens, page_table=table, fallback=True)
    assert seen == [(True, False, lens, table)] and out.shape == (2, 4, 3, 128)


def test_op_with_kv_lens_and_pages(fake, tmp_path, hidden_compiler):
    """Through the op (as under torch.compile): kv_lens and page_table are its
    last two arguments; the fake gives the shapes; there is no backward."""
    t = fake.torch
    op = fake.ops.attention_op
    calls = []
    op.fn = lambda *a: calls.append(a) or (Tensor(a[0].shape, a[0].dtype), Tensor((0,), t.float32))
    t.compiling = True
    q = Tensor((2, 4, 3, 128), t.float16, requires_grad=True)
    k, v = pool(t, 6, 4, 16)
    lens, table = i32(t, [48, 20]), i32(t, [[0, 1, 2], [3, 4, 5]])
    fa.attention(q, k, v, causal=True, kv_lens=lens, page_table=table)
    assert calls[0][3:] == (True, -1, -1, None, None, True, False, lens, table)
    out, lse = op.fake(q, k, v, True, -1, -1, None, None, True, False, lens, table)
    assert out.shape == (2, 4, 3, 128) and lse.shape == (2, 4, 3)
    ctx = Ctx(needs=(True,) + (False,) * 11)
    op.setup_context(ctx, calls[0], (out, lse))
    with pytest.raises(fa.UnsupportedError, match="no gradient through kv_lens or a paged KV "
                                                  "cache"):
        op.backward(ctx, Tensor(out.shape, t.float16), None)
    # Without them the op's arguments are the 10 of before.
    fa.attention(q, q, q, causal=True)
    assert len(calls[1]) == 10


@pytest.fixture
def shapes_only(fake, monkeypatch):
    """The few more torch calls of the split path, on shapes alone (no
    values: test_paged_torch.py checks those with torch)."""
    t = fake.torch

    def like(x, shape, dtype=None):
        return Tensor(shape, dtype or x.dtype, str(x.device))

    def broadcast(a, b):
        a, b = (1,) * (len(b) - len(a)) + tuple(a), (1,) * (len(a) - len(b)) + tuple(b)
        return tuple(max(x, y) for x, y in zip(a, b))
    methods = {
        "unsqueeze": lambda x, d: like(x, x.shape[:d] + (1,) + x.shape[d:]),
        "expand": lambda x, *s: like(x, s),
        "permute": lambda x, *p: like(x, tuple(x.shape[i] for i in p)),
        "clamp": lambda x, lo, hi: like(x, x.shape),
        "clamp_": lambda x, lo, hi: x,
        "nan_to_num_": lambda x, v: x,
        "__sub__": lambda x, y: like(x, broadcast(x.shape, y.shape)),
    }
    for name, fn in methods.items():
        monkeypatch.setattr(Tensor, name, fn, raising=False)
    t.arange = lambda lo, hi, step, device, dtype: Tensor((-(-(hi - lo) // step),), dtype, device)
    t.full = lambda shape, value, device, dtype: Tensor(shape, dtype, str(device))
    t.softmax = lambda x, dim: like(x, x.shape)
    t.logsumexp = lambda x, dim: like(x, x.shape[:-1])
    t.matmul = lambda a, b: like(a, broadcast(a.shape[:-2], b.shape[:-2]) + (a.shape[-2],
                                                                          b.shape[-1]))
    pads = []

    def pad(x, p):
        pads.append(p)
        return like(x, x.shape[:-1] + (x.shape[-1] + p[0] + p[1],))
    t.nn = types.SimpleNamespace(functional=types.SimpleNamespace(pad=pad))
    return pads


@pytest.mark.parametrize("M,splits,padded", [(2048, 16, 0), (2053, 16, 11)])
def test_paged_split_launch(fake, tmp_path, hidden_compiler, shapes_only, M, splits, padded):
    """One sequence of a long paged cache (8 K/V heads on 132 SMs): the plan
    splits it in chunks of whole pages; the launch is the kernel with kv_lens,
    the table and lse over B*S sequences: the packed query repeated, the
    table [B*S, c] (padded with a copy only when S does not divide M), the
    per-chunk lengths a new [B*S] int32 tensor; the pool unchanged."""
    t = fake.torch
    fa.load_bundle(paged_bundle(tmp_path / "b", ["f16,d128,full,lse,kv_lens,page=16"]))
    q = Tensor((1, 32, 1, 128), t.float16)
    k, v = pool(t, M + 7, 8, 16)
    lens = i32(t, [16 * M - 5])
    table = i32(t, np.arange(M).reshape(1, M))
    fake.log("ppppppp" + "iiiiiii")
    out = fa.attention(q, k, v, causal=True, kv_lens=lens, page_table=table)
    (launch,) = launches(fake.log())
    c = -(-M // splits)
    assert out.shape == (1, 32, 1, 128)
    assert shapes_only == ([(0, padded)] if padded else [])
    p = params(launch)
    # (The fake's views share their base's address: _live gives the base.)
    got_lens, got_table = _live[int(p[5], 16)], _live[int(p[6], 16)]
    assert np.prod(got_lens.shape) == splits and str(got_lens.dtype) == "torch.int32"
    assert got_lens is not lens and np.prod(got_table.shape) == splits * c
    assert (got_table is table) == (not padded)  # a view of the table unless padded
    assert p[7:] == [str(x) for x in (splits, 8, 8, 4, 16 * c, M + 7, c)]
    assert f"grid 1 8 {splits} " in launch
