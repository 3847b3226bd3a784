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
