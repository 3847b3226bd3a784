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
