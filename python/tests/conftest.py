"""Fixtures of the fa package's tests (no GPU, no torch).

Each test gets its own disk cache (FA_CACHE_DIR in a temporary directory) and
an empty in-memory cache, so hits and misses are the test's own.
"""
import os
import shutil

import pytest

import fa
from fa import bundle, compiler, dispatch


def ptxas():
    return shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas"
                                     if os.path.exists("/usr/local/cuda/bin/ptxas") else None)


needs_compiler = pytest.mark.skipif(not fa.compiler_available(),
                                    reason="the compiler library is not installed")


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("FA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FA_BUNDLE", raising=False)
    compiler._memory.clear()
    for k in compiler.stats:
        compiler.stats[k] = 0
    dispatch.clear()
    bundle._bundles.clear()
    bundle._env_loaded = None
    yield tmp_path / "cache"
    compiler._memory.clear()
    dispatch.clear()
    bundle._bundles.clear()
