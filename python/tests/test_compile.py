"""fa.compile: PTX and a valid launch manifest for both chips, MLIR text,
options, diagnostics."""
import subprocess

import pytest

import fa
from fa_runtime import check_manifest

from conftest import needs_compiler, ptxas

pytestmark = needs_compiler


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("spec", ["f16,d128,causal,lse", "bf16,d64,full"])
def test_compile_variant(chip, spec):
    k = fa.compile(spec, chip=chip)
    v = fa.Variant.parse(spec, chip=chip)
    assert isinstance(k, fa.Kernel) and k.variant == v
    assert f".target {chip}" in k.ptx and f".entry {k.name}" in k.ptx
    check_manifest(k.manifest)
    m = k.manifest
    assert (m["chip"], m["dtype"], m["head_dim"], m["causal"], m["lse"]) == \
        (chip, v.dtype, v.head_dim, v.causal, v.lse)
    assert m["function"] == v.func_name() and k.name == v.func_name() + "_kernel"
    assert (chip == "sm_90a") == bool(m["tensor_maps"])


def test_compile_dict_and_variant():
    a = fa.compile({"dtype": "f16", "head_dim": 64, "causal": True}, chip="sm_80")
    b = fa.compile(fa.Variant.make("f16", 64, causal=True, chip="sm_80"))
    assert a.ptx == b.ptx


def test_window_scale_and_options():
    k = fa.compile("bf16,d128,causal,window=256:0,scale=0.1", chip="sm_90a", stages=3)
    m = k.manifest
    assert m["window"] == [256, 0] and m["stages"] == 3
    assert abs(m["scale"] - 0.1) < 1e-7


def test_compile_mlir_text():
    text = fa.Variant.parse("f16,d128").mlir() + fa.Variant.parse("f16,d64,causal,lse").mlir()
    ks = fa.compile(text, chip="sm_80", block_q=64, rows_per_warp=16)
    assert all(k.manifest["block_q"] == 64 and k.manifest["rows_per_warp"] == 16
               for k in ks.values())
    ks = fa.compile(text, chip="sm_80")
    assert isinstance(ks, dict) and len(ks) == 2
    assert {k.manifest["head_dim"] for k in ks.values()} == {64, 128}
    one = fa.compile(fa.Variant.parse("bf16,d64").mlir(), chip="sm_80")
    assert isinstance(one, fa.Kernel)


def test_save_and_runtime_load(tmp_path):
    import fa_runtime
    k = fa.compile("f16,d64,causal", chip="sm_80")
    path = k.save(str(tmp_path / "out"))
    r = fa_runtime.Kernel.load(path)
    assert r.manifest == k.manifest
    assert k.runtime.manifest == k.manifest  # built without touching CUDA
    assert r.grid(dict(B=2, Hq=4, Hkv=2, Nq=300, Nk=300)) == [3, 4, 2]


@pytest.mark.skipif(not ptxas(), reason="no ptxas")
@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
def test_ptx_assembles(tmp_path, chip):
    k = fa.compile("f16,d128,causal", chip=chip)
    p = tmp_path / "k.ptx"
    p.write_text(k.ptx)
    subprocess.run([ptxas(), f"-arch={chip}", str(p), "-o", str(tmp_path / "k.cubin")],
                   check=True)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
def test_softcap_compiles(chip):
    k = fa.compile("f16,d128,softcap=30", chip=chip)
    assert "tanh.approx.f32" in k.ptx


def test_unsupported_is_a_compile_error():
    with pytest.raises(fa.CompileError, match="head dim") as e:
        fa.compile("f16,d256", chip="sm_80")
    assert any("head dim 64 or 128" in d for d in e.value.diagnostics)


def test_invalid_mlir_and_options():
    with pytest.raises(fa.CompileError, match="does not parse"):
        fa.compile("func.func @f( { fa.attention", chip="sm_80")
    with pytest.raises(fa.CompileError, match="stages"):
        fa.compile("f16,d128", chip="sm_90a", stages=99)
    with pytest.raises(TypeError):
        fa.compile(42)


@needs_compiler
def test_compile_varlen_variant(tmp_path, monkeypatch):
    # The varlen Variant compiles to the sm_90a kernel whose contract is
    # token-major ([T, H, D], lse [H, T]); sm_80 has no varlen kernel yet.
    monkeypatch.setenv("FA_CACHE_DIR", str(tmp_path))
    from fa import compiler
    m = compiler.compile_variant(fa.Variant.parse("f16,d64,causal,lse,varlen")).manifest
    assert m["varlen"] is True and m["varlen_layout"] == "thd"
    shapes = {p["name"]: p.get("shape") for p in m["params"]}
    assert shapes["q_map"] == ["Nq", "Hq", "D"] and shapes["lse"] == ["Hq", "Nq"]
    with pytest.raises(fa.CompileError, match="sm_80 kernel does not support varlen yet"):
        compiler.compile_variant(fa.Variant.parse("f16,d64,causal,varlen", chip="sm_80"))


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("mask,dtype,shape", [("bool:11", "bool", [1, 1, "Nq", "Nk"]),
                                              ("f16:B1", "f16", ["B", 1, "Nq", "Nk"]),
                                              ("f32:BH", "f32", ["B", "Hq", "Nq", "Nk"]),
                                              ("bool:B11", "bool", ["B", 1, 1, "Nk"]),
                                              ("bf16:1H1", "bf16", [1, "Hq", 1, "Nk"])])
def test_compile_mask_variant(tmp_path, chip, mask, dtype, shape):
    # attn_mask's kernels (fa.attention(..., attn_mask=)): the mask operand is the
    # parameter `mask` after out, with the variant's dtype and broadcast dims.
    k = fa.compile(f"f16,d128,causal,mask={mask}", chip=chip)
    check_manifest(k.manifest)
    names = [p["name"] for p in k.manifest["params"]]
    assert names.index("mask") == names.index("out") + 1
    (p,) = [p for p in k.manifest["params"] if p["name"] == "mask"]
    assert (p["dtype"], p["shape"]) == (dtype, shape)
    if ptxas():
        path = tmp_path / "k.ptx"
        path.write_text(k.ptx)
        subprocess.run([ptxas(), f"-arch={chip}", str(path), "-o", str(tmp_path / "k.cubin")],
                       check=True)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
def test_compile_mask_grad_variant(tmp_path, chip):
    # The backward of a masked forward (fa.attention(..., attn_mask=) under
    # autograd): the mask operand is the parameter `mask` after dv, with the
    # forward's contract.
    k = fa.compile("bf16,d64,causal,grad,mask=bool:B11", chip=chip)
    check_manifest(k.manifest)
    assert k.manifest["op"] == "attention_grad"
    names = [p["name"] for p in k.manifest["params"]]
    assert names.index("mask") == names.index("dv") + 1
    (p,) = [p for p in k.manifest["params"] if p["name"] == "mask"]
    assert (p["dtype"], p["shape"]) == ("bool", ["B", 1, 1, "Nk"])
    if ptxas():
        path = tmp_path / "k.ptx"
        path.write_text(k.ptx)
        subprocess.run([ptxas(), f"-arch={chip}", str(path), "-o", str(tmp_path / "k.cubin")],
                       check=True)


def test_compile_attention_written_in_linalg():
    # ALiBi written in linalg (the lit test's program): no fa.attention until
    # raise_attention=True runs fa-raise-attention first; then one kernel
    # whose score_mod reads the slope tensor, a kernel parameter.
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test",
                        "Pipelines", "raise-to-ptx-ptxas.mlir")
    text = open(path).read()
    with pytest.raises(fa.CompileError, match="produced no kernel"):
        fa.compile(text, chip="sm_90a", cache=False)
    for chip in ("sm_90a", "sm_80"):
        k = fa.compile(text, chip=chip, raise_attention=True, cache=False)
        assert k.name == "alibi_kernel" and k.manifest["causal"]
        params = {p["name"]: p for p in k.manifest["params"]}
        assert params["arg3"]["shape"] == [4] and params["arg3"]["dtype"] == "f32"
