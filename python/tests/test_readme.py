"""The README's CPU example ("Use from PyTorch"), run as written."""
import os
import re
import subprocess
import sys

from conftest import needs_compiler

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


@needs_compiler
def test_readme_cpu_example(tmp_path):
    text = open(README).read()
    m = re.search(r"<!-- readme-cpu-example -->\n```python\n(.*?)```", text, re.S)
    assert m, "README.md has no readme-cpu-example block"
    r = subprocess.run([sys.executable, "-c", m.group(1)], capture_output=True, text=True,
                       cwd=tmp_path, env=dict(os.environ, FA_CACHE_DIR=str(tmp_path / "c")))
    assert r.returncode == 0, r.stderr
    err = float(r.stdout.strip().splitlines()[-1].split("=")[-1])
    assert err < 1e-5 and "fa_f16_d128_causal_lse_kernel" in r.stdout
