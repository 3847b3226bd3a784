"""fa.attention's argument checks (pure Python: shapes, dtype names, devices)."""
import pytest

from fa.validation import AttentionInputError, check_inputs, unsupported_reason


def t(shape, dtype="f16", device="cuda:0"):
    return (shape, dtype, device)


def test_valid_gqa():
    window, sizes = check_inputs(t((2, 8, 100, 128)), t((2, 2, 120, 128)), t((2, 2, 120, 128)),
                                 causal=True)
    assert window is None and sizes == (2, 8, 2, 100, 120, 128, 128)


@pytest.mark.parametrize("q,k,v,match", [
    (t((8, 100, 128)), t((2, 2, 120, 128)), t((2, 2, 120, 128)), "rank 3"),
    (t((2, 8, 100, 128)), t((2, 2, 120, 128), "bf16"), t((2, 2, 120, 128)), "one dtype"),
    (t((2, 8, 100, 128)), t((2, 2, 120, 128)), t((2, 2, 120, 128), device="cuda:1"),
     "one device"),
    (t((2, 8, 100, 128)), t((3, 2, 120, 128)), t((3, 2, 120, 128)), "batch sizes differ"),
    (t((2, 8, 100, 128)), t((2, 2, 120, 64)), t((2, 2, 120, 128)), "head dim 64 differs"),
    (t((2, 8, 100, 128)), t((2, 2, 120, 128)), t((2, 2, 110, 128)), "must agree"),
    (t((2, 8, 100, 128)), t((2, 3, 120, 128)), t((2, 3, 120, 128)), "do not divide"),
    (t((2, 8, 100, 128)), t((2, 2, 0, 128)), t((2, 2, 0, 128)), "no keys"),
])
def test_input_errors(q, k, v, match):
    with pytest.raises(AttentionInputError, match=match):
        check_inputs(q, k, v)


def test_flag_errors():
    args = (t((1, 1, 4, 64)), t((1, 1, 4, 64)), t((1, 1, 4, 64)))
    with pytest.raises(AttentionInputError, match="causal"):
        check_inputs(*args, causal=True, window=(4, 4))
    with pytest.raises(AttentionInputError, match="pair"):
        check_inputs(*args, window=5)
    with pytest.raises(AttentionInputError, match="not finite"):
        check_inputs(*args, scale=float("nan"))
    with pytest.raises(AttentionInputError, match="softcap"):
        check_inputs(*args, softcap=0.0)
    assert isinstance(AttentionInputError("x"), ValueError)


def test_unsupported_reasons():
    assert unsupported_reason("f16", "cuda:0", "sm_90a", 128, 128, None) is None
    assert unsupported_reason("bf16", "cuda:0", "sm_90a", 256, 256, None) is None
    assert "CUDA" in unsupported_reason("f16", "cpu", None, 128, 128, None)
    assert "older than sm_80" in unsupported_reason("f16", "cuda:0", None, 128, 128, None)
    assert "f32" in unsupported_reason("f32", "cuda:0", "sm_80", 128, 128, None)
    assert "head dim 256" in unsupported_reason("f16", "cuda:0", "sm_80", 256, 256, None)
    assert "head dim 96" in unsupported_reason("f16", "cuda:0", "sm_90a", 96, 96, None)
    assert "value head dim" in unsupported_reason("f16", "cuda:0", "sm_90a", 128, 64, None)
    # softcap runs on the kernels (issue 16).
    assert unsupported_reason("f16", "cuda:0", "sm_90a", 128, 128, 30.0) is None


# ---------------------------------------------------------------------------
# kv_lens and paged KV caches


def paged(B=4, Hq=32, Hkv=8, Nq=1, P=64, S=16, M=10, D=128, lens=True, **over):
    a = dict(q=t((B, Hq, Nq, D)), k=t((P, Hkv, S, D)), v=t((P, Hkv, S, D)),
             kv_lens=t((B,), "i32") if lens else None, page_table=t((B, M), "i32"))
    a.update(over)
    return a


def test_valid_paged():
    a = paged()
    window, sizes = check_inputs(a.pop("q"), a.pop("k"), a.pop("v"), causal=True, **a)
    assert window is None and sizes == (4, 32, 8, 1, 160, 128, 128)  # Nk = M * S
    a = paged(lens=False, P=1, S=256, M=3, Nq=5)
    assert check_inputs(a.pop("q"), a.pop("k"), a.pop("v"), **a)[1][4] == 768
    # kv_lens on a contiguous cache: the sizes as without it.
    _, sizes = check_inputs(t((2, 8, 1, 64)), t((2, 2, 99, 64)), t((2, 2, 99, 64)),
                            kv_lens=t((2,), "i32"))
    assert sizes == (2, 8, 2, 1, 99, 64, 64)


@pytest.mark.parametrize("over,match", [
    (dict(kv_lens=t((5,), "i32")), r"kv_lens has shape \[5\]; expected \[B\] with B = 4"),
    (dict(kv_lens=t((4, 1), "i32")), r"kv_lens has shape \[4, 1\]"),
    (dict(kv_lens=t((4,), "i64")), r"kv_lens has dtype i64; it must be int32 "
                                   r"\(kv_lens.to\(torch.int32\)\)"),
    (dict(kv_lens=t((4,), "i32", "cuda:1")), "kv_lens is on cuda:1, q, k, v on cuda:0"),
    (dict(page_table=t((3, 10), "i32")), r"page_table has shape \[3, 10\]; expected "
                                         r"\[B, max_pages\] with B = 4"),
    (dict(page_table=t((40,), "i32")), r"page_table has shape \[40\]"),
    (dict(page_table=t((4, 10), "f32")), "page_table has dtype f32; it must be int32"),
    (dict(page_table=t((4, 10), "i32", "cpu")), "page_table is on cpu"),
    (dict(k=t((64, 8, 24, 128)), v=t((64, 8, 24, 128))), "page size 24 .* must be a positive "
                                                          "multiple of 16"),
    (dict(v=t((63, 8, 16, 128))), "v is a pool of 63 pages x 8 heads x 16 keys, k of 64 x 8 x 16"),
    (dict(v=t((64, 8, 32, 128))), "v is a pool of 64 pages x 8 heads x 32 keys"),
    (dict(k=t((0, 8, 16, 128)), v=t((0, 8, 16, 128))), "the page pools k and v have no pages"),
    (dict(page_table=t((4, 0), "i32")), r"page_table has no pages per sequence \(max_pages = 0\)"),
    (dict(k=t((64, 8, 16, 64)), v=t((64, 8, 16, 64))), "k's head dim 64 differs from q's 128"),
    (dict(k=t((64, 3, 16, 128)), v=t((64, 3, 16, 128))), "3 key/value heads do not divide 32"),
    (dict(page_table=None), r"batch sizes differ: q 4, k 64, v 64 \(a paged KV cache needs "
                            r"page_table=\)"),
])
def test_paged_input_errors(over, match):
    a = paged(**over)
    with pytest.raises(AttentionInputError, match=match):
        check_inputs(a.pop("q"), a.pop("k"), a.pop("v"), **a)


def test_paged_empty_output_needs_no_pages():
    a = paged(Nq=0, P=0)
    assert check_inputs(a.pop("q"), a.pop("k"), a.pop("v"), **a)[1][3] == 0
