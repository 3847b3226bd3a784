"""fa.Variant: canonical form, command-line spelling, the MLIR it compiles."""
import math

import pytest

from fa import Variant, chip_for_capability


def test_defaults_are_canonical():
    a = Variant.make("f16", 128, scale=1 / math.sqrt(128))
    b = Variant.make("f16", 128)
    assert a == b and hash(a) == hash(b) and a.scale is None


def test_causal_window_normalization():
    assert Variant.make(causal=True, window=(-1, 0)) == Variant.make(causal=True)
    assert Variant.make(causal=True, window=(64, -1)).window == (64, 0)
    assert Variant.make(window=(-1, -1)) == Variant.make()
    with pytest.raises(ValueError, match="right = 3 with causal"):
        Variant.make(causal=True, window=(8, 3))
    with pytest.raises(ValueError, match="left = -2"):
        Variant.make(window=(-2, 0))


@pytest.mark.parametrize("spec", ["f16,d128,causal,lse", "bf16,d64,full,window=256:0",
                                  "f16,d128,full,scale=0.25", "bf16,d256,causal,stages=3",
                                  "f16,d64,full,softcap=30.0"])
def test_spec_roundtrip(spec):
    v = Variant.parse(spec, chip="sm_90a")
    assert Variant.parse(v.spec(), chip="sm_90a") == v


def test_parse_errors():
    with pytest.raises(ValueError, match="'f64'"):
        Variant.parse("f64,d128")
    with pytest.raises(ValueError, match="chip"):
        Variant.make(chip="sm_75")
    with pytest.raises(ValueError, match="softcap"):
        Variant.make(softcap=-1.0)


def test_mlir_text():
    v = Variant.parse("bf16,d64,causal,lse,window=32:0,scale=0.5")
    text = v.mlir()
    assert f"func.func @{v.func_name()}(%q: tensor<?x?x?x64xbf16>" in text
    assert "causal" in text and "window = array<i64: 32, 0>" in text
    assert "scale = 0x3F000000 : f32" in text
    assert "-> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)" in text


def test_names_are_distinct():
    names = {Variant.parse(s).func_name() for s in
             ["f16,d128", "f16,d128,causal", "f16,d128,lse", "f16,d128,scale=0.1",
              "f16,d128,scale=0.2", "f16,d128,stages=3", "f16,d128,window=8:8"]}
    assert len(names) == 7


def test_chip_for_capability():
    assert chip_for_capability(9, 0) == "sm_90a"
    assert chip_for_capability(8, 0) == "sm_80"
    assert chip_for_capability(8, 9) == "sm_80"
    assert chip_for_capability(10, 0) == "sm_80"
    assert chip_for_capability(7, 5) is None


def test_paged_variants():
    v = Variant.parse("f16,d128,causal,kv_lens,page=64", chip="sm_80")
    assert (v.kv_lens, v.page_size, v.chip) == (True, 64, "sm_80")
    assert v.spec() == "f16,d128,causal,kv_lens,page=64"
    assert Variant.parse(v.spec(), chip="sm_80") == v
    assert Variant.from_json(v.to_json()) == v
    assert v.to_json()["page_size"] == 64 and v.to_json()["kv_lens"] is True
    assert "page_size" not in Variant.parse("f16,d128").to_json()  # unchanged JSON
    assert "kv_lens" not in Variant.parse("f16,d128").to_json()
    assert Variant.parse("f16,d128,page_size=16") == Variant.make(page_size=16)
    assert Variant.make(page_size=0) == Variant.make()
    names = {Variant.parse(s).func_name() for s in
             ["f16,d128", "f16,d128,kv_lens", "f16,d128,page=16", "f16,d128,kv_lens,page=16",
              "f16,d128,kv_lens,page=64"]}
    assert len(names) == 5
    assert v.func_name() == "fa_f16_d128_causal_kvlens_page64"
    with pytest.raises(ValueError, match="page_size: 24 is not a positive multiple of 16"):
        Variant.make(page_size=24)
    with pytest.raises(ValueError, match="page='x' is not an integer"):
        Variant.parse("f16,d128,page=x")
    with pytest.raises(ValueError, match="no backward kernel of an attention with kv_lens"):
        Variant.parse("f16,d128,kv_lens,grad")
    with pytest.raises(ValueError, match="no backward kernel"):
        Variant.make(grad=True, page_size=16)


def test_paged_mlir_text():
    v = Variant.parse("bf16,d64,full,lse,kv_lens,page=32")
    text = v.mlir()
    pool = "tensor<?x?x32x64xbf16>"
    assert (f"func.func @{v.func_name()}(%q: tensor<?x?x?x64xbf16>, %k: {pool}, %v: {pool}, "
            f"%kv_lens: tensor<?xi32>, %page_table: tensor<?x?xi32>)") in text
    assert ("fa.attention %q, %k, %v kv_lens(%kv_lens : tensor<?xi32>) "
            "pages(%page_table : tensor<?x?xi32>) : "
            f"tensor<?x?x?x64xbf16>, {pool}, {pool} -> (tensor<?x?x?x64xbf16>, "
            f"tensor<?x?x?xf32>)") in text
    # The clauses come before the attribute dictionary; kv_lens alone on a
    # contiguous cache; a table alone.
    c = Variant.parse("f16,d128,causal,kv_lens").mlir()
    assert "kv_lens(%kv_lens : tensor<?xi32>) {causal} : tensor<?x?x?x128xf16>, " \
           "tensor<?x?x?x128xf16>" in c and "pages(" not in c
    p = Variant.parse("f16,d128,causal,page=16").mlir()
    assert "%v pages(%page_table : tensor<?x?xi32>) {causal}" in p and "kv_lens" not in p


def test_varlen_variants():
    v = Variant.parse("bf16,d128,causal,lse,varlen")
    assert v.varlen and v.spec() == "bf16,d128,causal,lse,varlen"
    assert Variant.parse(v.spec()) == v and Variant.from_json(v.to_json()) == v
    assert v.to_json()["varlen"] is True
    assert "varlen" not in Variant.parse("bf16,d128").to_json()  # unchanged JSON
    assert v.func_name() == "fa_bf16_d128_causal_lse_varlen"
    assert Variant.parse("bf16,d128,causal,lse") != v
    for bad in ("bf16,d128,varlen,kv_lens", "bf16,d128,varlen,page=16"):
        with pytest.raises(ValueError, match="varlen: packed sequences take no kv_lens"):
            Variant.parse(bad)
    # The backward of packed sequences: sm_90a's kernel, on the batch-1 planes.
    g = Variant.parse("bf16,d128,causal,grad,varlen")
    assert g.grad and g.varlen and Variant.parse(g.spec()) == g
    text = g.mlir()
    assert "tensor<1x?x?x128xbf16>" in text and "tensor<1x?x?xf32>" in text
    assert ("fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cu_seqlens_q, %cu_seqlens_k "
            ": tensor<?xi32>, tensor<?xi32>) {causal}") in text
    with pytest.raises(ValueError, match="backward kernel of packed sequences is sm_90a's"):
        Variant.make("bf16", 128, grad=True, varlen=True, chip="sm_80")


def test_varlen_mlir_text():
    text = Variant.parse("bf16,d128,causal,lse,varlen").mlir()
    t = "tensor<1x?x?x128xbf16>"
    assert (f"(%q: {t}, %k: {t}, %v: {t}, %cu_seqlens_q: tensor<?xi32>, "
            f"%cu_seqlens_k: tensor<?xi32>) -> ({t}, tensor<1x?x?xf32>)") in text
    assert ("fa.attention %q, %k, %v varlen(%cu_seqlens_q, %cu_seqlens_k : tensor<?xi32>, "
            f"tensor<?xi32>) {{causal}} : {t}, {t}, {t} -> ({t}, tensor<1x?x?xf32>)") in text


def test_mask_variants():
    v = Variant.parse("bf16,d128,causal,lse,mask=bool:B1")
    assert v.mask == "bool:B1" and v.spec() == "bf16,d128,causal,lse,mask=bool:B1"
    assert Variant.parse(v.spec()) == v and Variant.from_json(v.to_json()) == v
    assert v.to_json()["mask"] == "bool:B1"
    assert "mask" not in Variant.parse("bf16,d128").to_json()  # unchanged JSON
    assert v.func_name() == "fa_bf16_d128_causal_lse_mask_boolB1"
    names = {Variant.make(mask=m).func_name() for m in
             (None, "bool:11", "bool:BH", "f16:11", "f32:1H", "bf16:B1")}
    assert len(names) == 6
    for bad in ("i32:11", "bool:HB", "bool", "f16:1"):
        with pytest.raises(ValueError, match="is not <dtype>:<dims>"):
            Variant.make(mask=bad)
    for bad in ("f16,d128,mask=bool:11,kv_lens", "f16,d128,mask=bool:11,varlen",
                "f16,d128,mask=bool:11,fp8", "f16,d128,mask=bool:11,grad,varlen"):
        with pytest.raises(ValueError, match="mask: a mask operand is taken by the 16-bit "
                           "forward and backward kernels"):
            Variant.parse(bad)
    g = Variant.parse("f16,d128,causal,grad,mask=bool:B11")
    assert g.grad and g.mask == "bool:B11" and Variant.parse(g.spec()) == g


def test_mask_grad_mlir_text():
    # The backward of a masked forward: the mask is the argument after do.
    text = Variant.make("bf16", 128, causal=True, grad=True, mask="bool:B11").mlir()
    t, mt = "tensor<?x?x?x128xbf16>", "tensor<?x1x1x?xi1>"
    assert (f"(%q: {t}, %k: {t}, %v: {t}, %o: {t}, %lse: tensor<?x?x?xf32>, %do: {t}, "
            f"%mask: {mt}) -> ({t}, {t}, {t})") in text
    assert f"fa.attention_grad %q, %k, %v, %o, %lse, %do mask(%mask : {mt}) {{causal}}" in text


@pytest.mark.parametrize("mask,mt", [("bool:11", "tensor<1x1x?x?xi1>"),
                                     ("f16:BH", "tensor<?x?x?x?xf16>"),
                                     ("f32:1H", "tensor<1x?x?x?xf32>"),
                                     ("bf16:B1", "tensor<?x1x?x?xbf16>")])
def test_mask_mlir_text(mask, mt):
    text = Variant.make("f16", 64, causal=True, mask=mask).mlir()
    t = "tensor<?x?x?x64xf16>"
    assert f"(%q: {t}, %k: {t}, %v: {t}, %mask: {mt}) -> {t}" in text
    assert f"fa.attention %q, %k, %v mask(%mask : {mt}) {{causal}} : {t}, {t}, {t}" in text
