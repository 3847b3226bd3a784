"""fa.attention's torch path without torch or a GPU: fa.torch_ops imported
against a fake torch module (just what it and fa_runtime use), kernels compiled
for real, launched through fa_runtime into a fake libcuda built from
test/python/Inputs/fake_libcuda.cpp (cuda.h's prototypes; every call logged).
Checks the plumbing: validation before the op, the chip from the device's
compute capability, what reaches cuLaunchKernel (grid, stream, pointers,
sizes), the per-call memo, UnsupportedError and the fallback's routing, the
fake (meta) implementation, backward's error. Numerics need the GPU
(bench/python_h200.py)."""
import ctypes
import importlib
import os
import shutil
import subprocess
import sys
import types

import pytest

import fa
from fa_runtime.manifest import contiguous_strides

from conftest import needs_compiler

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_SRC = os.path.join(REPO, "test", "python", "Inputs", "fake_libcuda.cpp")
CLANG = shutil.which("clang++-22")
CUDA_INCLUDE = "/usr/local/cuda/include"

pytestmark = [needs_compiler, pytest.mark.skipif(
    not (CLANG and os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h"))
         and os.path.exists(FAKE_SRC)), reason="needs clang++-22, cuda.h and the repository")]


class Dtype:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __str__(self):
        return "torch." + self.name


class Device:
    def __init__(self, spec):
        spec = str(spec)
        self.type, _, idx = spec.partition(":")
        self.index = int(idx) if idx else None

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


_next = [0]


class Tensor:
    def __init__(self, shape, dtype, device="cuda:0", strides=None, requires_grad=False):
        self.shape, self.dtype, self.device = tuple(shape), dtype, Device(device)
        self._strides = tuple(strides) if strides else contiguous_strides(self.shape)
        _next[0] += 1
        self._ptr = 0 if self.device.type == "cpu" else (1 << 40) + 0x1000000 * _next[0]
        self.requires_grad = requires_grad

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self._ptr

    def contiguous(self):
        if self._strides == contiguous_strides(self.shape):
            return self
        return Tensor(self.shape, self.dtype, str(self.device))

    def new_empty(self, shape, dtype=None):
        return Tensor(shape, dtype or self.dtype, str(self.device))

    def view(self, *shape):
        t = Tensor(shape, self.dtype, str(self.device))
        t._ptr = self._ptr  # the same memory
        return t

    reshape = view


class CustomOp:
    """torch.library.custom_op's object: calls the function; keeps the fake and
    autograd registrations for the test to call."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn
        self.fake = self.backward = self.setup_context = None
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)

    def register_fake(self, fn):
        self.fake = fn
        return fn

    def register_autograd(self, backward, setup_context=None):
        self.backward, self.setup_context = backward, setup_context


@pytest.fixture
def fake(tmp_path, monkeypatch):
    lib = tmp_path / "libfakecuda.so"
    subprocess.run([CLANG, "-std=c++17", "-shared", "-fPIC", f"-I{CUDA_INCLUDE}", FAKE_SRC,
                    "-o", str(lib)], check=True)
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.float16, torch.bfloat16 = Dtype("float16", 2), Dtype("bfloat16", 2)
    torch.float32, torch.float64 = Dtype("float32", 4), Dtype("float64", 8)
    torch.uint8 = Dtype("uint8", 1)
    torch.empty = lambda shape, device, dtype: Tensor(shape, dtype, str(device))
    torch.frombuffer = lambda buf, dtype: Tensor((len(buf),), dtype, "cpu")
    caps = {0: (9, 0), 1: (8, 0), 2: (7, 5)}
    torch.cuda = types.SimpleNamespace(
        current_stream=lambda device: types.SimpleNamespace(
            cuda_stream=0x5000 + Device(device).index),
        get_device_capability=lambda idx: caps[idx], current_device=lambda: 0,
        get_device_properties=lambda idx: types.SimpleNamespace(multi_processor_count=132))
    Tensor.to = lambda self, device, non_blocking=False: Tensor(self.shape, self.dtype, str(device))
    torch.library = types.SimpleNamespace(
        custom_op=lambda name, mutates_args: (lambda fn: CustomOp(name, fn)))
    torch.compiling = False
    torch.grad = True
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: torch.compiling)
    torch.is_grad_enabled = lambda: torch.grad
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setenv("FA_LIBCUDA", str(lib))
    import fa_runtime.driver as driver
    monkeypatch.setattr(driver, "_lib", None)
    monkeypatch.setattr(driver, "_initialized", False)
    monkeypatch.setattr(driver, "_ctxs", {})
    monkeypatch.setattr(driver, "_sms", {})
    sys.modules.pop("fa.torch_ops", None)
    ops = importlib.import_module("fa.torch_ops")
    monkeypatch.delitem(fa.__dict__, "attention", raising=False)
    handle = ctypes.CDLL(str(lib))
    handle.fake_cuda_log.restype = ctypes.c_char_p

    def log(kinds=None):
        if kinds:
            handle.fake_cuda_set_param_kinds(kinds.encode())
            return None
        lines = handle.fake_cuda_log().decode().splitlines()
        handle.fake_cuda_reset()
        return lines
    yield types.SimpleNamespace(torch=torch, ops=ops, log=log)
    sys.modules.pop("fa.torch_ops", None)
    fa.__dict__.pop("attention", None)


def launches(lines):
    return [x for x in lines if x.startswith("cuLaunchKernel")]


def test_launch_sm90(fake):
    t = fake.torch
    fake.log("ppppp" + "iiiii")  # q_map k_map v_map out lse, B Hq Hkv Nq Nk
    q = Tensor((2, 8, 1000, 128), t.float16, "cuda:0")
    k = Tensor((2, 2, 300, 128), t.float16, "cuda:0")
    out, lse = fa.attention(q, k, k, causal=True, return_lse=True)
    assert fa.attention is fake.ops.attention  # resolved through fa.__getattr__
    assert (out.shape, lse.shape, str(lse.dtype)) == ((2, 8, 1000, 128), (2, 8, 1000),
                                                       "torch.float32")
    (launch,) = launches(fake.log())
    assert "stream 0x5000" in launch and launch.endswith("2 8 2 1000 300")
    assert launch.split(" params ")[1].split()[3:5] == [hex(out.data_ptr()), hex(lse.data_ptr())]
    # Second call: served by the memo (no new compile, one launch).
    compiles = fa.compiler.stats["compiles"]
    fake.log("ppppiiiii")  # the kernel without lse
    out2 = fa.attention(q, k, k, causal=True)
    assert fa.compiler.stats["compiles"] == compiles + 1  # the no-lse kernel is another variant
    fa.attention(q, k, k, causal=True)
    assert fa.compiler.stats["compiles"] == compiles + 1
    assert out2.shape == (2, 8, 1000, 128)
    assert len(launches(fake.log())) == 2


def test_gqa_decode_packs_the_group_into_rows(fake):
    # One query row of 32 heads over 8 K/V heads, 64 sequences (512 CTAs: no
    # split): the launch sees q as [64, 8, 4, 128] (the group's 4 heads as 4
    # rows of one tile, fa.decode) and the non-causal kernel; out is a view.
    t = fake.torch
    fake.log("ppppiiiii")
    q = Tensor((64, 32, 1, 128), t.float16, "cuda:0")
    kv = Tensor((64, 8, 4096, 128), t.float16, "cuda:0")
    out = fa.attention(q, kv, kv, causal=True)
    (launch,) = launches(fake.log())
    assert launch.endswith("64 8 8 4 4096")  # B, Hq, Hkv, Nq (rows), Nk
    assert out.shape == (64, 32, 1, 128)
    assert "grid 1 8 64 " in launch
    # Two query rows with causal: rows differ by position, no packing.
    fake.log("ppppiiiii")
    q2 = Tensor((64, 32, 2, 128), t.float16, "cuda:0")
    fa.attention(q2, kv, kv, causal=True)
    (launch,) = launches(fake.log())
    assert launch.endswith("64 32 8 2 4096")


def test_chip_from_capability(fake):
    t = fake.torch
    fake.log("ppppiiiii")  # sm_80: q k v out, sizes
    q = Tensor((1, 4, 33, 64), t.bfloat16, "cuda:1")
    kv = Tensor((1, 1, 65, 64), t.bfloat16, "cuda:1")
    out = fa.attention(q, kv, kv)
    (launch,) = launches(fake.log())
    assert "stream 0x5001" in launch
    assert launch.split(" params ")[1].split() == [hex(x.data_ptr()) for x in (q, kv, kv, out)] \
        + "1 4 1 33 65".split()
    assert fake.ops.chip_for_device(Device("cuda:1")) == "sm_80"
    assert fake.ops.chip_for_device(Device("cuda:0")) == "sm_90a"


def test_fa_chip_sm80_on_a_later_gpu(fake, monkeypatch):
    # FA_CHIP=sm_80: the A100 kernels on a 9.0 device (how they are measured
    # on an H200); a device below 8.0 still has none.
    monkeypatch.setattr(fake.ops, "_CHIP_ENV", "sm_80")
    fake.ops._chips.clear()
    assert fake.ops.chip_for_device(Device("cuda:0")) == "sm_80"
    assert fake.ops.chip_for_device(Device("cuda:2")) is None


def test_errors_and_fallback(fake, monkeypatch):
    t = fake.torch
    q = Tensor((1, 4, 64, 128), t.float16, "cuda:0")
    with pytest.raises(fa.AttentionInputError, match="rank 3"):
        fa.attention(Tensor((4, 64, 128), t.float16), q, q)
    with pytest.raises(fa.AttentionInputError, match="must be torch tensors"):
        fa.attention([1], q, q)
    q96 = Tensor((1, 4, 64, 96), t.float16, "cuda:0")
    with pytest.raises(fa.UnsupportedError, match="head dim 96.*fallback=True"):
        fa.attention(q96, q96, q96)
    old = Tensor((1, 4, 64, 128), t.float16, "cuda:2")
    with pytest.raises(fa.UnsupportedError, match="older than sm_80"):
        fa.attention(old, old, old)
    cpu = Tensor((1, 4, 64, 128), t.float16, "cpu")
    with pytest.raises(fa.UnsupportedError, match="CUDA"):
        fa.attention(cpu, cpu, cpu)
    seen = []

    def reference(q, k, v, causal, window, scale, softcap, return_lse):
        seen.append((causal, window, scale, softcap, return_lse))
        B, H, N, D = q.shape
        return Tensor(q.shape, q.dtype, str(q.device)), Tensor((B, H, N), t.float32,
                                                               str(q.device))
    monkeypatch.setattr(fake.ops, "reference", reference)
    out, lse = fa.attention(q96, q96, q96, softcap=30.0, return_lse=True, fallback=True)
    assert seen == [(False, None, None, 30.0, True)] and lse.shape == (1, 4, 64)
    monkeypatch.setattr(fake.ops, "_FALLBACK_ENV", True)
    fa.attention(q96, q96, q96, causal=True, window=(16, 0))
    assert seen[-1] == (True, (16, 0), None, None, False)
    # The memo remembers the reason, not the fallback: without it, it raises again.
    with pytest.raises(fa.UnsupportedError, match="head dim 96"):
        fa.attention(q96, q96, q96, softcap=30.0, return_lse=True, fallback=False)


def test_softcap_runs_on_the_kernel(fake):
    # softcap is a kernel variant (issue 16): compiled and launched, no fallback.
    t = fake.torch
    fake.log("ppppiiiii")
    q = Tensor((1, 4, 64, 128), t.float16, "cuda:0")
    out = fa.attention(q, q, q, softcap=30.0)
    (launch,) = launches(fake.log())
    assert launch.endswith("1 4 4 64 64") and out.shape == (1, 4, 64, 128)


def test_op_fake_and_backward(fake):
    t = fake.torch
    op = fake.ops.attention_op
    assert op.name == "fa::attention"
    q = Tensor((2, 8, 10, 64), t.bfloat16, "cuda:0")
    k = Tensor((2, 2, 12, 64), t.bfloat16, "cuda:0")
    out, lse = op.fake(q, k, k, True, -1, -1, None, None, True, False)
    assert (out.shape, str(out.dtype), lse.shape, str(lse.dtype)) == \
        ((2, 8, 10, 64), "torch.bfloat16", (2, 8, 10), "torch.float32")
    out, lse = op.fake(q, k, k, False, -1, -1, None, None, False, False)
    assert lse.shape == (0,)
    with pytest.raises(NotImplementedError, match="no backward yet"):
        op.backward(None, out, lse)


def test_dispatcher_only_when_needed(fake):
    """Eager calls on plain tensors run the op's body directly; the op itself
    is used under torch.compile and when autograd must record the call."""
    t = fake.torch
    op = fake.ops.attention_op
    fake.log("ppppiiiii")
    q = Tensor((1, 2, 8, 64), t.float16, "cuda:1")
    fa.attention(q, q, q)
    assert op.calls == 0 and len(launches(fake.log())) == 1
    g = Tensor((1, 2, 8, 64), t.float16, "cuda:1", requires_grad=True)
    fa.attention(g, q, q)
    assert op.calls == 1
    t.grad = False  # torch.no_grad()
    fa.attention(g, q, q)
    assert op.calls == 1
    t.compiling = True
    fa.attention(q, q, q)
    assert op.calls == 2 and len(launches(fake.log())) == 3


def test_op_arguments(fake):
    """fa.attention normalizes its flags before the op: the window, causal's
    right edge, scale and softcap as floats."""
    t = fake.torch
    op = fake.ops.attention_op
    calls = []
    op.fn = lambda *a: calls.append(a) or (a[0], a[0])
    t.compiling = True  # as under torch.compile: through the op
    q = Tensor((1, 2, 8, 64), t.float16, "cuda:0")
    fa.attention(q, q, q, causal=True, window=(4, -1), scale=1, softcap=None)
    fa.attention(q, q, q, window=(-1, -1))
    assert [c[3:] for c in calls] == [(True, 4, 0, 1.0, None, False, False),
                                      (False, -1, -1, None, None, False, False)]
