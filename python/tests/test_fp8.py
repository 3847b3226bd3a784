"""The fp8 variant (Variant fp8, fa.attention_fp8): spelling, MLIR text, the compiled kernel's
quantization kernels in its manifest and PTX, and the input checks (no GPU needed)."""
import os

import pytest

import fa
from fa.variant import Variant
from fa_runtime import check_manifest

from conftest import needs_compiler, ptxas


def test_fp8_variant_spelling_and_text():
    v = Variant.parse("bf16,d128,causal,lse,fp8")
    assert v.fp8 and v.spec() == "bf16,d128,causal,lse,fp8"
    assert Variant.from_json(v.to_json()) == v and v.to_json()["fp8"] is True
    assert v.func_name() == "fa_fp8_bf16_d128_causal_lse"
    text = v.mlir()
    # e4m3 inputs, per-block descales of the kernel's 128 x 128 tiles, bf16 out.
    assert "%q: tensor<?x?x?x128xf8E4M3FN>" in text
    assert "descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, " \
           "tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>}" in text
    assert "-> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)" in text
    # Without fp8 the same spelling is another kernel.
    assert Variant.parse("bf16,d128,causal,lse") != v
    for bad in ("f16,d128,fp8,grad", "f16,d128,fp8,softcap=30", "f16,d128,fp8,kv_lens"):
        with pytest.raises(ValueError, match="fp8: the sm_90a forward kernel only"):
            Variant.parse(bad)
    with pytest.raises(ValueError, match="fp8: the sm_90a forward kernel only"):
        Variant.parse("f16,d128,fp8", chip="sm_80")


@needs_compiler
def test_fp8_variant_compiles_with_its_quantization_kernels(tmp_path):
    k = fa.compile(Variant.parse("f16,d64,full,fp8"), chip="sm_90a")
    m = k.manifest
    check_manifest(m)
    assert (m["dtype"], m["out_dtype"], m["head_dim"]) == ("f8e4m3", "f16", 64)
    aux = {a["op"]: a for a in m["auxiliary_kernels"]}
    assert sorted(aux) == ["attention_fp8_quantize_k", "attention_fp8_quantize_q",
                           "attention_fp8_quantize_v"]
    assert [p["tensor"] for p in aux["attention_fp8_quantize_v"]["params"]
            if p["type"] == "ptr"] == ["v", "v_t", "v_descale"]
    assert aux["attention_fp8_quantize_q"]["grid"] == [{"ceil_div": ["Nq", 128]}, "Hq", "B"]
    for a in aux.values():
        assert f".entry {a['kernel']}(" in k.ptx
    assert "cvt.rn.satfinite.e4m3x2.f32" in k.ptx
    if ptxas():
        path = os.path.join(str(tmp_path), "fp8.ptx")
        with open(path, "w") as f:
            f.write(k.ptx)
        import subprocess
        out = subprocess.run([ptxas(), "-arch=sm_90a", "-v", path, "-o", os.devnull],
                             capture_output=True, text=True, check=True).stderr
        assert out.count("0 bytes spill stores") == 4  # the kernel and its three


def test_attention_fp8_checks_its_inputs():
    torch = pytest.importorskip("torch")
    q = torch.zeros(1, 2, 8, 64, dtype=torch.float16)
    with pytest.raises(fa.AttentionInputError, match="share one dtype"):
        fa.attention_fp8(q, q.float(), q)
    with pytest.raises(fa.AttentionInputError, match="a multiple of k's heads"):
        fa.attention_fp8(q, q[:, :0], q[:, :0])
    with pytest.raises(fa.AttentionInputError, match="one CUDA device"):
        fa.attention_fp8(q, q, q)


@needs_compiler
def test_fp8_transpose_v_kernel_takes_v_as_stored():
    """fa-to-ptx{transpose-v=true}: the kernel's v_map is v's (as stored, like k), its manifest
    says so (transpose_v, no v_key_order, no quantization kernels: they write V^T), and the
    runtime passes v itself: no transposing pre-pass, a v_t refused."""
    from fa.variant import Variant as V
    from fa_runtime import Kernel
    variant = V.parse("f16,d128,causal,fp8")
    k = fa.compile(variant.mlir(), chip="sm_90a", transpose_v=True)
    m = k.manifest
    check_manifest(m)
    assert m["transpose_v"] is True and "v_key_order" not in m
    assert "auxiliary_kernels" not in m
    v_map = next(p for p in m["params"] if p["name"] == "v_map")
    assert (v_map["tensor"], v_map["shape"]) == ("v", ["B", "Hkv", "Nk", "D"])
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in k.ptx
    kern = Kernel(m, k.ptx.encode())
    assert kern._fp8 and not kern._fp8_v_t
    with pytest.raises(ValueError, match="takes v as stored"):
        kern(None, None, None, q_descale=1, k_descale=1, v_descale=1, v_t=object())
    # The default build reads v_t from the pre-pass.
    k0 = fa.compile(variant.mlir(), chip="sm_90a")
    assert k0.manifest["transpose_v"] is False and "v_key_order" in k0.manifest
    kern0 = Kernel(k0.manifest, k0.ptx.encode())
    assert kern0._fp8 and kern0._fp8_v_t
