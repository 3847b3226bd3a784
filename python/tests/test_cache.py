"""The compile cache: in memory, on disk, keyed by the compiler, safe when
several processes fill one key at once."""
import json
import os
import subprocess
import sys

import pytest

import fa
from fa import cache, compiler

from conftest import needs_compiler

pytestmark = needs_compiler
SPEC = "f16,d64,causal"


def test_memory_hit():
    a = fa.compile(SPEC, chip="sm_80")
    b = fa.compile(SPEC, chip="sm_80")
    assert a is b
    assert compiler.stats == {"compiles": 1, "memory_hits": 1, "disk_hits": 0}


def test_disk_hit(fresh_caches):
    a = fa.compile(SPEC, chip="sm_80")
    compiler._memory.clear()
    b = fa.compile(SPEC, chip="sm_80")
    assert a is not b and a.ptx == b.ptx
    assert compiler.stats == {"compiles": 1, "memory_hits": 0, "disk_hits": 1}
    entries = [d for d in (fresh_caches / "v1").glob("??/*") if d.is_dir()]
    assert len(entries) == 1
    entry = json.loads((entries[0] / "entry.json").read_text())
    assert entry["compiler"] == fa.compiler_id()
    assert entry["pipeline"] == "fa-to-ptx{chip=sm_80}"


def test_key_covers_chip_options_and_compiler(monkeypatch):
    fa.compile(SPEC, chip="sm_80")
    fa.compile(SPEC, chip="sm_90a")
    fa.compile(SPEC, chip="sm_90a", stages=3)
    assert compiler.stats["compiles"] == 3
    compiler._memory.clear()
    monkeypatch.setattr(compiler, "_compiler_id", "another-compiler")
    fa.compile(SPEC, chip="sm_80")
    assert compiler.stats["compiles"] == 4 and compiler.stats["disk_hits"] == 0


def test_damaged_entry_is_recompiled(fresh_caches):
    k = fa.compile(SPEC, chip="sm_80")
    compiler._memory.clear()
    (entry,) = [d for d in (fresh_caches / "v1").glob("??/*") if d.is_dir()]
    (entry / k.manifest["ptx"]).unlink()
    b = fa.compile(SPEC, chip="sm_80")
    assert b.ptx == k.ptx and compiler.stats["compiles"] == 2


def test_disk_cache_off(monkeypatch, fresh_caches):
    monkeypatch.setenv("FA_CACHE_DIR", "off")
    fa.compile(SPEC, chip="sm_80")
    assert not fresh_caches.exists()
    assert fa.compile(SPEC, chip="sm_80", cache=False) is not fa.compile(SPEC, chip="sm_80")


_WORKER = r"""
import json, sys, time
import fa
from fa import compiler
start = float(sys.argv[1])
while time.time() < start:
    time.sleep(0.001)
k = fa.compile("bf16,d128,causal,lse", chip="sm_90a")
print(json.dumps({"stats": compiler.stats, "ptx": len(k.ptx), "name": k.name}))
"""


@pytest.mark.parametrize("processes", [2, 3])
def test_processes_fill_one_key(fresh_caches, processes):
    """Several processes ask for one kernel at the same moment: one compiles,
    the others wait on the key's lock and read its entry; one entry, no
    temporary directory left."""
    import time
    start = time.time() + 1.5
    env = dict(os.environ, FA_CACHE_DIR=str(fresh_caches))
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(start)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(processes)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert sum(r["stats"]["compiles"] for r in results) == 1
    assert sum(r["stats"]["disk_hits"] for r in results) == processes - 1
    assert len({(r["ptx"], r["name"]) for r in results}) == 1
    entries = [d for d in (fresh_caches / "v1").glob("??/*") if d.is_dir()]
    assert len(entries) == 1
    assert list((fresh_caches / "v1" / "tmp").iterdir()) == []


def test_publish_race_loser_reads_winner(tmp_path):
    """Without the lock (cache.publish directly), two writers of one key: the
    second rename fails and it returns the first's entry."""
    def fill(tag):
        def f(d):
            with open(os.path.join(d, "x"), "w") as fh:
                fh.write(tag)
            return {"kernels": [], "tag": tag}
        return f
    a = cache.publish("ab" * 32, fill("first"), str(tmp_path))
    b = cache.publish("ab" * 32, fill("second"), str(tmp_path))
    assert a["tag"] == b["tag"] == "first"
    assert list((tmp_path / "v1" / "tmp").iterdir()) == []
