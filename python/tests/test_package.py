"""The package without torch: `import fa` imports neither torch nor the compiler;
fa.attention says what is missing."""
import subprocess
import sys

import pytest


def test_import_is_light():
    code = ("import sys, fa; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "assert fa._capi._lib is None, 'compiler loaded'; print(fa.__version__)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0.1.0"


def test_attention_without_torch():
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed here")
    except ImportError:
        pass
    import fa
    with pytest.raises(ImportError, match="needs PyTorch"):
        fa.attention


def test_fa_runtime_is_installed_alongside():
    import fa_runtime
    assert fa_runtime.SCHEMA_VERSION == 1
