"""Ahead-of-time bundles: python -m fa.precompile, then the kernels loaded in a
process where the compiler library is hidden (FA_CAPI_LIBRARY pointing at
nothing), as on a GPU server without LLVM."""
import json
import os
import subprocess
import sys

import pytest

import fa
from fa import bundle, dispatch
from fa.validation import UnsupportedError

from conftest import needs_compiler

SPECS = ["f16,d64,causal", "bf16,d128,full,lse", "f16,d128,causal,window=128:0"]


def precompile(out, *args, env=None):
    r = subprocess.run([sys.executable, "-m", "fa.precompile", "--out", str(out), *args],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def built_bundle(tmp_path_factory):
    if not fa.compiler_available():
        pytest.skip("the compiler library is not installed")
    out = tmp_path_factory.mktemp("bundle")
    env = dict(os.environ, FA_CACHE_DIR=str(tmp_path_factory.mktemp("cache")))
    precompile(out, "--chip", "sm_80", "--chip", "sm_90a", *SPECS, env=env)
    return out


def test_precompile_writes_index(built_bundle):
    index = json.loads((built_bundle / "index.json").read_text())
    assert index["format"] == "fa-bundle" and index["version"] == 1
    assert len(index["kernels"]) == 2 * len(SPECS)
    assert index["compiler"] == fa.compiler_id()
    b = fa.Bundle.load(str(built_bundle))
    assert b.validate() == 6
    for chip in ("sm_80", "sm_90a"):
        for s in SPECS:
            k = b.get(fa.Variant.parse(s, chip=chip))
            assert k is not None and k.chip == chip and f".target {chip}" in k.ptx


_HIDDEN = r"""
import json, os, sys
import fa
from fa import dispatch, Variant
from fa.validation import UnsupportedError
assert not fa.compiler_available()
out = {"found": [], "missing": None}
for chip in ("sm_80", "sm_90a"):
    for s in sys.argv[1].split(";"):
        k = dispatch.kernel(Variant.parse(s, chip=chip))
        out["found"].append([chip, s, k.name, len(k.ptx)])
try:
    dispatch.kernel(Variant.parse("bf16,d64,causal", chip="sm_90a"))
except UnsupportedError as e:
    out["missing"] = str(e)
try:
    fa.compile("f16,d64")
except fa.CompilerUnavailable as e:
    out["compile"] = str(e)
out["sources"] = dispatch.sources
print(json.dumps(out))
"""


def test_load_without_compiler(built_bundle, tmp_path):
    env = dict(os.environ, FA_CAPI_LIBRARY=str(tmp_path / "no-such-lib.so"),
               FA_BUNDLE=str(built_bundle), FA_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", _HIDDEN, ";".join(SPECS)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["found"]) == 6 and all(n > 1000 for *_, n in out["found"])
    assert out["sources"] == {"bundle": 6, "compiled": 0}
    assert "bf16,d64,causal" in out["missing"] and str(built_bundle) in out["missing"]
    assert "not available here" in out["compile"]
    assert not (tmp_path / "cache").exists()


def test_load_bundle_api(built_bundle, monkeypatch):
    # A lookup that failed before the bundle was loaded is not remembered after.
    monkeypatch.setenv("FA_CAPI_LIBRARY", "/nonexistent/libFAPythonCAPI.so")
    monkeypatch.setattr(fa._capi, "_lib", None)
    monkeypatch.setattr(fa._capi, "_lib_error", None)
    with pytest.raises(UnsupportedError, match="not available"):
        dispatch.kernel(fa.Variant.parse(SPECS[0], chip="sm_80"))
    fa.load_bundle(str(built_bundle))
    k = dispatch.kernel(fa.Variant.parse(SPECS[0], chip="sm_80"))
    assert dispatch.sources["bundle"] >= 1 and k.variant == fa.Variant.parse(SPECS[0], "sm_80")


@needs_compiler
def test_missing_from_bundle_compiles(built_bundle):
    fa.load_bundle(str(built_bundle))
    before = dispatch.sources["compiled"]
    dispatch.kernel(fa.Variant.parse("bf16,d64,causal", chip="sm_80"))
    assert dispatch.sources["compiled"] == before + 1


@needs_compiler
def test_unsupported_variant():
    with pytest.raises(UnsupportedError, match="head dim"):
        dispatch.kernel(fa.Variant.parse("f16,d256", chip="sm_80"))
    with pytest.raises(UnsupportedError):  # remembered, raised again
        dispatch.kernel(fa.Variant.parse("f16,d256", chip="sm_80"))


def test_precompile_default_sweep_and_merge(tmp_path):
    if not fa.compiler_available():
        pytest.skip("the compiler library is not installed")
    out = tmp_path / "b"
    text = precompile(out, "--chip", "sm_80", "--dtypes", "f16", "--head-dims", "64")
    assert "4 kernels" in text
    precompile(out, "--chip", "sm_80", "bf16,d128,causal")
    assert fa.Bundle.load(str(out)).validate() == 5


def test_bundle_errors(tmp_path):
    with pytest.raises(fa.BundleError, match="not an fa bundle"):
        fa.Bundle.load(str(tmp_path))
    (tmp_path / "index.json").write_text(json.dumps({"format": "fa-bundle", "version": 7,
                                                     "kernels": []}))
    with pytest.raises(fa.BundleError, match="version 7"):
        fa.Bundle.load(str(tmp_path))
    v = fa.Variant.parse("f16,d64", chip="sm_80")
    (tmp_path / "index.json").write_text(json.dumps({
        "format": "fa-bundle", "version": 1,
        "kernels": [{"variant": v.to_json(), "json": "gone_kernel.json"}]}))
    with pytest.raises(fa.BundleError, match="gone_kernel.json, which is missing"):
        fa.Bundle.load(str(tmp_path))
    assert bundle.find(v) is None
