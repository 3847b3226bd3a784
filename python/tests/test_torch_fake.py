"""fa.attention's torch path without torch or a GPU: fa.torch_ops imported
against a fake torch module (just what it and fa_runtime use), kernels compiled
for real, launched through fa_runtime into a fake libcuda built from
test/python/Inputs/fake_libcuda.cpp (cuda.h's prototypes; every call logged).
Checks the plumbing: validation before the op, the chip from the device's
compute capability, what reaches cuLaunchKernel (grid, stream, pointers,
sizes), the per-call memo, UnsupportedError and the fallback's routing, the
fake (meta) implementation; the backward: the launch of a backward kernel (a
hand-written manifest of the compiler's contract, conftest.grad_manifest) with
delta and dq computed on numpy data carried by the fake tensors, autograd's
setup_context/backward, the lse kept for it, its fallback and errors. Numerics
of the kernels need the GPU (bench/python_h200.py, bench/bench_backward.py)."""
import ctypes
import importlib
import os
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

import fa
from fa_runtime.manifest import contiguous_strides

from conftest import grad_bundle, grad_manifest, needs_compiler

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_SRC = os.path.join(REPO, "test", "python", "Inputs", "fake_libcuda.cpp")
CLANG = shutil.which("clang++-22")
CUDA_INCLUDE = "/usr/local/cuda/include"

pytestmark = [needs_compiler, pytest.mark.skipif(
    not (CLANG and os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h"))
         and os.path.exists(FAKE_SRC)), reason="needs clang++-22, cuda.h and the repository")]


class Dtype:
    def __init__(self, name, size, np_type=None):
        self.name, self.itemsize, self.np = name, size, np_type

    def __str__(self):
        return "torch." + self.name


F16, BF16 = Dtype("float16", 2, np.float16), Dtype("bfloat16", 2, np.float32)
F32, F64, U8 = Dtype("float32", 4, np.float32), Dtype("float64", 8, np.float64), Dtype("uint8", 1)
I32, I64 = Dtype("int32", 4, np.int32), Dtype("int64", 8, np.int64)
BOOL = Dtype("bool", 1, np.bool_)


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
_live = {}  # data_ptr -> Tensor: what a logged launch pointer was


class Tensor:
    """A tensor's metadata; `data` (a numpy array, optional) for the few ops
    whose arithmetic a test checks (float, mul_, sum, sub_, to, zeros)."""

    def __init__(self, shape, dtype, device="cuda:0", strides=None, requires_grad=False,
                 data=None):
        self.shape, self.dtype, self.device = tuple(shape), dtype, Device(device)
        self._strides = tuple(strides) if strides else contiguous_strides(self.shape)
        _next[0] += 1
        self._ptr = 0 if self.device.type == "cpu" else (1 << 40) + 0x1000000 * _next[0]
        self.requires_grad = requires_grad
        self.data = data
        _live[self._ptr] = self

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self._ptr

    def dim(self):
        return len(self.shape)

    def tolist(self):
        return self.data.tolist()

    def _like(self, shape, dtype, data):
        return Tensor(shape, dtype, str(self.device), data=data)

    def contiguous(self):
        if self._strides == contiguous_strides(self.shape):
            return self
        return self._like(self.shape, self.dtype, self.data)

    def float(self):
        return self._like(self.shape, F32, None if self.data is None else
                          self.data.astype(np.float32))

    def mul_(self, other):
        self.data = None if self.data is None or other.data is None else self.data * other.data
        return self

    def sub_(self, other):
        self.data = None if self.data is None or other.data is None else self.data - other.data
        return self

    def sum(self, dim):
        assert dim == -1
        return self._like(self.shape[:-1], self.dtype, None if self.data is None else
                          self.data.sum(-1))

    def to(self, where, non_blocking=False):
        if isinstance(where, Dtype):  # a conversion
            t = self._like(self.shape, where, None if self.data is None else
                           self.data.astype(where.np))
            t.source = self
            return t
        return Tensor(self.shape, self.dtype, str(where))  # a copy to a device

    def new_empty(self, shape, dtype=None):
        return Tensor(shape, dtype or self.dtype, str(self.device))

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        t = Tensor(shape, self.dtype, str(self.device))
        t._ptr = self._ptr  # the same memory
        return t

    reshape = view

    def expand(self, shape):
        """A broadcast view: stride 0 where a dim of 1 grows."""
        assert len(shape) == len(self.shape)
        strides = [0 if n != m else st for n, m, st in zip(shape, self.shape, self._strides)]
        t = Tensor(shape, self.dtype, str(self.device), strides=strides,
                   requires_grad=self.requires_grad)
        t._ptr = self._ptr
        return t


class CustomOp:
    """torch.library.custom_op's object: calls the function; keeps the fake and
    autograd registrations for the test to call."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn
        self.fake = self.backward = self.setup_context = None
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        self.args = args
        self.result = self.fn(*args)
        return self.result

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
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.uint8 = \
        F16, BF16, F32, F64, U8
    torch.int32, torch.int64, torch.bool = I32, I64, BOOL
    torch.empty = lambda shape, device, dtype: Tensor(shape, dtype, str(device))
    torch.zeros = lambda shape, device, dtype: Tensor(shape, dtype, str(device),
                                                      data=np.zeros(shape, dtype.np))
    torch.zeros_like = lambda t: torch.zeros(t.shape, t.device, t.dtype)
    torch.frombuffer = lambda buf, dtype: Tensor((len(buf),), dtype, "cpu")
    caps = {0: (9, 0), 1: (8, 0), 2: (7, 5)}
    torch.cuda = types.SimpleNamespace(
        current_stream=lambda device: types.SimpleNamespace(
            cuda_stream=0x5000 + Device(device).index),
        get_device_capability=lambda idx: caps[idx], current_device=lambda: 0,
        get_device_properties=lambda idx: types.SimpleNamespace(multi_processor_count=132))
    torch.library = types.SimpleNamespace(
        custom_op=lambda name, mutates_args: (lambda fn: CustomOp(name, fn)))
    torch.compiling = False
    torch.grad = True
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: torch.compiling)
    torch.is_grad_enabled = lambda: torch.grad
    monkeypatch.setitem(sys.modules, "torch", torch)
    _live.clear()
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


def test_short_causal_takes_dynamic_tiles(fake):
    # Causal self-attention of at most 2048 tokens on sm_90a: the kernel with dynamic tiles
    # (torch_ops._short_causal), which takes the stream's tile counter after out (one
    # zeroed int32 [2] tensor, the same on the next call); 4096 tokens, or Nq != Nk, the
    # default kernel (one tile per CTA, no counter).
    t = fake.torch
    q = Tensor((2, 8, 1000, 128), t.float16, "cuda:0")
    kv = Tensor((2, 2, 1000, 128), t.float16, "cuda:0")
    fake.log("ppppp" + "iiiii")  # q_map k_map v_map out tile_counter, B Hq Hkv Nq Nk
    fa.attention(q, kv, kv, causal=True)
    fa.attention(q, kv, kv, causal=True)
    first, second = launches(fake.log())
    assert "grid 128 1 1 " in first  # persistent: min(8 * 8 * 2 tiles, 132 SMs)
    counter = params(first)[4]
    assert params(second)[4] == counter and params(first)[5:] == "2 8 2 1000 1000".split()
    fake.log("ppppiiiii")
    q4 = Tensor((1, 8, 4096, 128), t.float16, "cuda:0")
    kv4 = Tensor((1, 2, 4096, 128), t.float16, "cuda:0")
    fa.attention(q4, kv4, kv4, causal=True)
    (launch,) = launches(fake.log())
    assert "grid 32 8 1 " in launch and len(params(launch)) == 9


@pytest.fixture
def only_default_kernels(monkeypatch):
    """fa.dispatch as with a bundle made without the kernels of non-default schedules (and no
    compiler): a variant with fa-to-ptx options is not there. Returns the options asked for,
    in order."""
    asked = []
    real = fa.dispatch.kernel

    def kernel(variant):
        asked.append(variant.options)
        if variant.options:
            raise fa.UnsupportedError(f"{variant.spec()}: not in the loaded bundles")
        return real(variant)
    monkeypatch.setattr(fa.dispatch, "kernel", kernel)
    return asked


def test_short_causal_without_the_dynamic_kernel(fake, only_default_kernels):
    # A bundle made without the dynamic-tiles kernels and no compiler: the default kernel
    # runs (asked once: the choice is memoized).
    t = fake.torch
    asked = only_default_kernels
    q = Tensor((1, 4, 300, 64), t.bfloat16, "cuda:0")
    fake.log("ppppiiiii")
    fa.attention(q, q, q, causal=True)
    fa.attention(q, q, q, causal=True)
    first, second = launches(fake.log())
    assert "grid 3 4 1 " in first and "grid 3 4 1 " in second
    assert len(params(first)) == len(params(second)) == 9
    assert asked == [(("dynamic-tiles", "true"),), ()]


def test_wide_d64_takes_three_warpgroups(fake):
    # Head dim 64 with at least 2048 query rows and keys, causal or not: the kernel with
    # three consumer warpgroups (torch_ops._prefill_schedule: fa-to-ptx{block-q=192}), 512
    # threads over 192-row tiles, persistent CTAs without a mask band (min(22 x 8 tiles,
    # 132 SMs)); 1024 rows, or head dim 128, the default kernels.
    t = fake.torch
    fake.log("ppppiiiii")
    q = Tensor((1, 8, 4096, 64), t.float16, "cuda:0")
    fa.attention(q, q, q)
    fa.attention(q, q, q, causal=True)
    full, causal = launches(fake.log())
    assert "grid 132 1 1 block 512" in full and "grid 22 8 1 block 512" in causal
    fake.log("ppppiiiii")
    q1 = Tensor((1, 8, 1024, 64), t.float16, "cuda:0")
    q2 = Tensor((1, 8, 4096, 128), t.float16, "cuda:0")
    fa.attention(q1, q1, q1)
    fa.attention(q2, q2, q2, causal=True)
    short, d128 = launches(fake.log())
    assert "block 384" in short and "grid 32 8 1 block 384" in d128


def test_wide_d64_without_the_kernel(fake, only_default_kernels):
    # A bundle made without the three-warpgroup kernels and no compiler: the default kernel.
    t = fake.torch
    asked = only_default_kernels
    q = Tensor((1, 4, 2048, 64), t.bfloat16, "cuda:0")
    fake.log("ppppiiiii")
    fa.attention(q, q, q)
    (launch,) = launches(fake.log())
    assert "grid 64 1 1 block 384" in launch  # persistent: min(16 x 4 tiles, 132 SMs)
    assert asked == [(("block-q", "192"),), ()]


def test_gqa_decode_packs_the_group_into_rows(fake):
    # One query row of 32 heads over 8 K/V heads, 64 sequences (512 tiles: no
    # split): the launch sees q as [64, 8, 4, 128] (the group's 4 heads as 4
    # rows of one tile, fa.decode) and the non-causal kernel, which runs
    # persistent CTAs (a 1-D grid of min(512 tiles, the fake's 132 SMs)); out
    # is a view.
    t = fake.torch
    fake.log("ppppiiiii")
    q = Tensor((64, 32, 1, 128), t.float16, "cuda:0")
    kv = Tensor((64, 8, 4096, 128), t.float16, "cuda:0")
    out = fa.attention(q, kv, kv, causal=True)
    (launch,) = launches(fake.log())
    assert launch.endswith("64 8 8 4 4096")  # B, Hq, Hkv, Nq (rows), Nk
    assert out.shape == (64, 32, 1, 128)
    assert "grid 132 1 1 " in launch
    # Two query rows with causal: rows differ by position, no packing.
    fake.log("ppppiiiii")
    q2 = Tensor((64, 32, 2, 128), t.float16, "cuda:0")
    fa.attention(q2, kv, kv, causal=True)
    (launch,) = launches(fake.log())
    assert launch.endswith("64 32 8 2 4096")


def test_decode_splits_in_the_kernel(fake, monkeypatch):
    # One sequence, 32 query heads over 8 K/V heads, 4096 cached keys: 8 packed tiles on
    # the fake's 132 SMs, so fa.decode.plan_kernel_splits cuts each tile's 32 key blocks
    # into 16 chunks, one launch of the split-kv kernel: grid z = B * 16, the stream's
    # workspaces split_o, split_lse, split_counter after out, num_splits last. With
    # FA_SPLIT_KV_KERNEL off: the packed plain kernel (4096 keys: no host split).
    t = fake.torch
    q = Tensor((1, 32, 1, 128), t.float16, "cuda:0")
    kv = Tensor((1, 8, 4096, 128), t.float16, "cuda:0")
    fake.log("ppppppp" + "iiiiii")  # maps, out, split_o, split_lse, split_counter; sizes
    out = fa.attention(q, kv, kv, causal=True)
    fa.attention(q, kv, kv, causal=True)
    first, second = launches(fake.log())
    assert "grid 1 8 16 " in first
    assert params(first)[7:] == "1 8 8 4 4096 16".split()
    assert params(first)[4:7] == params(second)[4:7]  # the stream's workspaces, reused
    assert out.shape == (1, 32, 1, 128)
    monkeypatch.setattr(fake.ops, "_SPLIT_KV_KERNEL", False)
    fake.log("ppppiiiii")
    fa.attention(q, kv, kv, causal=True)
    (launch,) = launches(fake.log())
    assert launch.endswith("1 8 8 4 4096") and "grid 8 1 1 " in launch


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


def test_attn_mask_runs_the_masked_kernel(fake):
    """attn_mask (torch SDPA's convention) selects the kernel compiled with a
    mask operand of its dtype and broadcast dims and is passed as `mask`
    after out: a [Nq, Nk] bool mask as a [1, 1, Nq, Nk] view of the same
    memory; an additive [B, 1, 1, Nk] one as it is (one row that every query
    row reads: f16:B11, nothing copied); a [B, 1, 1, 1] one expanded over
    the keys and copied contiguous by the launch (the kernel reads
    [B, 1, 1, Nk]); on sm_80 too."""
    t = fake.torch
    q = Tensor((2, 8, 100, 128), t.float16, "cuda:0")
    kv = Tensor((2, 2, 120, 128), t.float16, "cuda:0")
    keep = Tensor((100, 120), t.bool, "cuda:0")
    fake.log("ppppp" + "iiiii")  # q_map k_map v_map out mask, B Hq Hkv Nq Nk
    compiles = fa.compiler.stats["compiles"]
    out = fa.attention(q, kv, kv, causal=True, attn_mask=keep)
    (launch,) = launches(fake.log())
    assert params(launch)[4] == hex(keep.data_ptr())
    assert params(launch)[5:] == "2 8 2 100 120".split() and "grid 1 8 2 " in launch
    assert out.shape == (2, 8, 100, 128)
    assert fa.compiler.stats["compiles"] == compiles + 1
    bias = Tensor((2, 1, 1, 120), t.float16, "cuda:0")
    fake.log("ppppp" + "iiiii")
    fa.attention(q, kv, kv, attn_mask=bias)
    (launch,) = launches(fake.log())
    assert params(launch)[4] == hex(bias.data_ptr())
    assert fa.compiler.stats["compiles"] == compiles + 2  # f16:B11, another variant
    per_row = Tensor((2, 1, 1, 1), t.float16, "cuda:0")
    fake.log("ppppp" + "iiiii")
    fa.attention(q, kv, kv, attn_mask=per_row)
    (launch,) = launches(fake.log())
    copied = _live[int(params(launch)[4], 16)]
    assert copied is not per_row and copied.shape == (2, 1, 1, 120)
    assert str(copied.dtype) == "torch.float16"
    assert fa.compiler.stats["compiles"] == compiles + 2  # the same f16:B11 kernel
    kernels = {v.mask: v for v in fa.dispatch._kernels if v.mask}
    assert set(kernels) == {"bool:11", "f16:B11"} and kernels["bool:11"].causal
    # sm_80 (cuda:1): the same contract.
    q80 = Tensor((1, 4, 64, 64), t.bfloat16, "cuda:1")
    m80 = Tensor((1, 4, 64, 64), t.float32, "cuda:1")
    fake.log("ppppp" + "iiiii")
    fa.attention(q80, q80, q80, attn_mask=m80)
    (launch,) = launches(fake.log())
    assert params(launch)[4] == hex(m80.data_ptr()) and "block 128" in launch


def test_attn_mask_errors_and_fallback(fake, monkeypatch):
    t = fake.torch
    q = Tensor((2, 4, 64, 128), t.float16, "cuda:0")
    with pytest.raises(fa.AttentionInputError, match=r"does not broadcast to \[B, Hq, Nq, Nk\] "
                       r"= \[2, 4, 64, 64\] \(dim 1 is 2; it must be 1 or 4\)"):
        fa.attention(q, q, q, attn_mask=Tensor((1, 2, 64, 64), t.bool, "cuda:0"))
    with pytest.raises(fa.AttentionInputError, match="dim 3 is 63"):
        fa.attention(q, q, q, attn_mask=Tensor((64, 63), t.bool, "cuda:0"))
    with pytest.raises(fa.AttentionInputError, match="rank 5"):
        fa.attention(q, q, q, attn_mask=Tensor((1, 1, 1, 64, 64), t.bool, "cuda:0"))
    with pytest.raises(fa.AttentionInputError, match="dtype i32; it must be bool"):
        fa.attention(q, q, q, attn_mask=Tensor((64, 64), t.int32, "cuda:0"))
    with pytest.raises(fa.AttentionInputError, match="attn_mask is on cuda:1"):
        fa.attention(q, q, q, attn_mask=Tensor((64, 64), t.bool, "cuda:1"))
    with pytest.raises(fa.AttentionInputError, match="must be a torch tensor"):
        fa.attention(q, q, q, attn_mask=[[True]])
    with pytest.raises(fa.UnsupportedError, match="no gradient to the mask"):
        fa.attention(q, q, q, attn_mask=Tensor((64, 64), t.float16, "cuda:0",
                                               requires_grad=True))
    lens = Tensor((2,), t.int32, "cuda:0")
    mask = Tensor((64, 64), t.bool, "cuda:0")
    with pytest.raises(fa.UnsupportedError, match="attn_mask with kv_lens or a page table"):
        fa.attention(q, q, q, attn_mask=mask, kv_lens=lens)
    seen = []

    def reference(q, k, v, causal, window, scale, softcap, return_lse, kv_lens, page_table,
                  attn_mask):
        seen.append((kv_lens, attn_mask.shape))
        return Tensor(q.shape, q.dtype, str(q.device)), None
    monkeypatch.setattr(fake.ops, "reference", reference)
    fake.log("ppppp" + "iiiii")
    fa.attention(q, q, q, attn_mask=mask, kv_lens=lens, fallback=True)
    assert seen == [(lens, (1, 1, 64, 64))] and not launches(fake.log())


def test_attn_mask_backward(fake, monkeypatch):
    """The backward of a masked call runs the backward kernel compiled with
    the same mask operand (bf16:1H here, compiled on first use), the mask
    that setup_context kept passed as its `mask` after dv; where there is no
    backward kernel (head dim 256), UnsupportedError, or with fallback
    reference_grad with that mask."""
    t = fake.torch
    op = fake.ops.attention_op
    q = Tensor((1, 2, 64, 128), t.bfloat16, requires_grad=True)
    mask = Tensor((1, 2, 64, 64), t.bfloat16)
    fake.log("ppppp" + "iiiii")
    fa.attention(q, q, q, causal=True, attn_mask=mask)
    (launch,) = launches(fake.log())  # the forward runs on its kernel
    assert op.args[12] is not None and len(op.args) == 13
    ctx = Ctx()
    op.setup_context(ctx, op.args, op.result)
    assert len(ctx.saved_tensors) == 6
    fake.log("pppppppppp" + "iiiii" + ";_preprocess=ppppiiiii;_postprocess=ppiiiii")
    dq, dk, dv = op.backward(ctx, Tensor((1, 2, 64, 128), t.bfloat16), None)[:3]
    pre, launch, post = launches(fake.log())
    assert params(launch)[9] == hex(mask.data_ptr())
    assert params(launch)[10:] == ["1", "2", "2", "64", "64"]
    kernels = {(v.mask, v.grad) for v in fa.dispatch._kernels if v.mask}
    assert ("bf16:1H", True) in kernels
    assert str(dq.dtype) == "torch.bfloat16" and dq.shape == q.shape

    seen = []

    def reference_grad(q, k, v, do, causal, window, scale, softcap, grad_lse, attn_mask):
        seen.append((causal, attn_mask.shape))
        return q.float(), k.float(), v.float()
    monkeypatch.setattr(fake.ops, "reference_grad", reference_grad)
    for fallback in (False, True):
        q = Tensor((1, 2, 64, 256), t.bfloat16, requires_grad=True)
        mask = Tensor((1, 1, 1, 64), t.bool)
        fake.log("ppppp" + "iiiii")
        fa.attention(q, q, q, causal=True, attn_mask=mask, fallback=fallback)
        (launch,) = launches(fake.log())
        ctx = Ctx()
        op.setup_context(ctx, op.args, op.result)
        g = Tensor((1, 2, 64, 256), t.bfloat16)
        if not fallback:
            with pytest.raises(fa.UnsupportedError, match="fa.attention backward: head dim "
                               "256: the sm_90a backward kernel supports 64, 128"):
                op.backward(ctx, g, None)
            continue
        dq, dk, dv = op.backward(ctx, g, None)[:3]
        assert seen == [(True, (1, 1, 1, 64))] and str(dq.dtype) == "torch.bfloat16"


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
    # The backward op's fake: the gradients have the shapes of q, k, v (GQA).
    bop = fake.ops.attention_backward_op
    assert bop.name == "fa::attention_backward"
    dq, dk, dv = bop.fake(out, q, k, k, out, lse, None, True, -1, -1, None, None, False)
    assert (dq.shape, dk.shape, dv.shape, str(dk.dtype)) == \
        ((2, 8, 10, 64), (2, 2, 12, 64), (2, 2, 12, 64), "torch.bfloat16")


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


# ---------------------------------------------------------------------------
# Backward


class Ctx:
    """What autograd's ctx offers setup_context and backward."""

    def __init__(self, needs=(True, True, True) + (False,) * 7):
        self.needs_input_grad = needs

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def set_materialize_grads(self, value):
        self.materialize = value


# q k v do lse delta dq_accum dk dv, B Hq Hkv Nq Nk; the auxiliary kernels' (the
# fake decodes a launch's parameters by the kinds of its function's name suffix).
GRAD_KINDS = "ppppppppp" + "iiiii" + ";_preprocess=ppppiiiii;_postprocess=ppiiiii"


def params(launch):
    return launch.split(" params ")[1].split()


def test_grad_launch(fake, tmp_path):
    """fa_runtime.Kernel.grad: argument order, grid, delta = rowsum(do * o) -
    grad_lse in f32, dq_accum zeroed, dq = dq_accum in q's dtype, dk and dv
    allocated with k's shape; a non-contiguous do is copied first."""
    t = fake.torch
    v = fa.Variant.parse("f16,d64,causal,grad")
    kern = fa.Kernel(grad_manifest(v), "// no code\n").runtime
    rng = np.random.default_rng(0)
    B, Hq, Hkv, Nq, Nk, D = 2, 4, 2, 3, 130, 64
    q = Tensor((B, Hq, Nq, D), t.float16)
    k = Tensor((B, Hkv, Nk, D), t.float16)
    lse = Tensor((B, Hq, Nq), t.float32)
    o = Tensor((B, Hq, Nq, D), t.float16, data=rng.standard_normal((B, Hq, Nq, D)).astype(
        np.float16))
    do_data = rng.standard_normal((B, Hq, Nq, D)).astype(np.float16)
    do = Tensor((B, Hq, Nq, D), t.float16, strides=(Hq * Nq * D, D, Hq * D, 1), data=do_data)
    gl = Tensor((B, Hq, Nq), t.float32, data=rng.standard_normal((B, Hq, Nq)).astype(np.float32))
    fake.log(GRAD_KINDS)
    dq, dk, dv = kern.grad(q, k, k, o, lse, do, grad_lse=gl)
    (launch,) = launches(fake.log())
    assert "grid 3 2 2 block 128 1 1 smem 40960 stream 0x5000" in launch  # ceil(130 / 64), Hkv, B
    ptrs = [_live[int(x, 16)] for x in params(launch)[:9]]
    assert params(launch)[9:] == ["2", "4", "2", "3", "130"]
    assert [p.data_ptr() for p in ptrs[:3]] == [q.data_ptr(), k.data_ptr(), k.data_ptr()]
    assert ptrs[3] is not do and ptrs[3].data is do_data  # copied (contiguous), same values
    assert ptrs[4] is lse
    delta, dq_accum = ptrs[5], ptrs[6]
    assert (delta.shape, str(delta.dtype)) == ((B, Hq, Nq), "torch.float32")
    want = (do_data.astype(np.float32) * o.data.astype(np.float32)).sum(-1) - gl.data
    np.testing.assert_allclose(delta.data, want, rtol=1e-6, atol=1e-6)
    assert (dq_accum.shape, str(dq_accum.dtype)) == ((B, Hq, Nq, D), "torch.float32")
    assert not dq_accum.data.any()  # zero-filled before the launch
    assert dq.source is dq_accum and str(dq.dtype) == "torch.float16" and dq.shape == q.shape
    assert ptrs[7] is dk and ptrs[8] is dv and dk.shape == dv.shape == (B, Hkv, Nk, D)
    # Without grad_lse: delta is the row sums alone.
    fake.log(GRAD_KINDS)
    kern.grad(q, k, k, o, lse, do)
    (launch,) = launches(fake.log())
    np.testing.assert_allclose(_live[int(params(launch)[5], 16)].data, want + gl.data,
                               rtol=1e-5, atol=1e-5)
    # Nothing to compute (no query rows): zeros, no launch.
    fake.log(GRAD_KINDS)
    q0, o0 = Tensor((B, Hq, 0, D), t.float16), Tensor((B, Hq, 0, D), t.float16)
    dq, dk, dv = kern.grad(q0, k, k, o0, Tensor((B, Hq, 0), t.float32), o0)
    assert not launches(fake.log()) and not dk.data.any() and dk.shape == (B, Hkv, Nk, D)
    with pytest.raises(ValueError, match="o: shape.3. is 32, but D = 64"):
        kern.grad(q, k, k, Tensor((B, Hq, Nq, 32), t.float16), lse, do)


def test_grad_launch_with_tensor_maps(fake, tmp_path):
    """The sm_90a backward kernel's form (manifest tensor maps q_map, k_map,
    v_map, do_map, dq_accum_map): Kernel.grad encodes the maps of q and do
    ([D, Nq, B * Hq] f16, boxes of 64 x 64 rows), of k and v ([D, Nk, B * Hkv],
    boxes of 64 x 128 rows) and of the zeroed dq_accum ([D, Nq, B * Hq] f32,
    boxes of 32 x 64 rows), 128-byte swizzle, into one device buffer and
    passes their device copies in those tensors' places; dq is still dq_accum
    in q's dtype. The maps are encoded once per (addresses, sizes)."""
    t = fake.torch
    v = fa.Variant.parse("f16,d64,causal,grad")
    kern = fa.Kernel(grad_manifest(v, tensor_map=True), "// no code\n").runtime
    B, Hq, Hkv, Nq, Nk, D = 2, 4, 2, 3, 130, 64
    q = Tensor((B, Hq, Nq, D), t.float16)
    k = Tensor((B, Hkv, Nk, D), t.float16)
    o = Tensor((B, Hq, Nq, D), t.float16)
    lse = Tensor((B, Hq, Nq), t.float32)
    fake.log(GRAD_KINDS)
    do = Tensor((B, Hq, Nq, D), t.float16)
    dq, dk, dv = kern.grad(q, k, k, o, lse, do)
    lines = fake.log()
    (launch,) = launches(lines)
    encodes = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")]
    assert len(encodes) == 5
    dq_accum = dq.source
    assert (dq_accum.shape, str(dq_accum.dtype)) == ((B, Hq, Nq, D), "torch.float32")
    assert not dq_accum.data.any()
    for tensor, line in zip((q, do), (encodes[0], encodes[3])):
        assert f"addr {hex(tensor.data_ptr())} dims 64 3 8 strides 128 384 box 64 64 1 " \
            in line
    for line in encodes[1:3]:  # k passed as k and as v
        assert f"addr {hex(k.data_ptr())} dims 64 130 4 strides 128 16640 box 64 128 1 " \
            in line
    assert f"addr {hex(dq_accum.data_ptr())} dims 64 3 8 strides 256 768 box 32 64 1 " \
        in encodes[4]
    ptr = [int(x, 16) for x in params(launch)[:9]]
    maps = _live[ptr[0]]
    assert maps is not dq_accum and maps.shape == (5 * 128,) and \
        str(maps.dtype) == "torch.uint8"
    assert [ptr[0] + 128 * i for i in range(5)] == [ptr[0], ptr[1], ptr[2], ptr[3], ptr[6]]
    assert params(launch)[9:] == ["2", "4", "2", "3", "130"]
    # The same call again: the map of the same dq_accum address is not encoded again.
    # The map is encoded again only for a dq_accum at another address.
    fake.log(GRAD_KINDS)
    dq2 = kern.grad(q, k, k, o, lse, do)[0]
    encoded = any(x.startswith("cuTensorMapEncodeTiled") for x in fake.log())
    assert encoded == (dq2.source.data_ptr() != dq_accum.data_ptr())


def test_grad_launch_with_auxiliary_kernels(fake, tmp_path):
    """A manifest with the compiler's "auxiliary_kernels": Kernel.grad launches
    the preprocess (do, o, delta, dq_accum: grid [ceil(Nq / 64), Hq, B], 256
    threads), then the backward kernel on that delta and dq_accum, then the
    postprocess (dq_accum, dq), on one stream, all three from one loaded
    module; no torch pass computes delta, zeroes dq_accum or converts dq. A
    non-contiguous o is copied first; grad_lse is still subtracted from
    delta between the preprocess and the kernel."""
    t = fake.torch
    v = fa.Variant.parse("f16,d64,causal,grad")
    m = grad_manifest(v, auxiliary=True)
    kern = fa.Kernel(m, "// no code\n").runtime
    B, Hq, Hkv, Nq, Nk, D = 2, 4, 2, 3, 130, 64
    q = Tensor((B, Hq, Nq, D), t.float16)
    k = Tensor((B, Hkv, Nk, D), t.float16)
    lse = Tensor((B, Hq, Nq), t.float32)
    do = Tensor((B, Hq, Nq, D), t.float16)
    o = Tensor((B, Hq, Nq, D), t.float16, strides=(Hq * Nq * D, D, Hq * D, 1))
    gl = Tensor((B, Hq, Nq), t.float32, data=np.ones((B, Hq, Nq), np.float32))
    # empty as zeros here, to see grad_lse subtracted from what the preprocess left.
    t.empty = lambda shape, device, dtype: Tensor(shape, dtype, str(device),
                                                  data=np.zeros(shape, dtype.np))
    fake.log(GRAD_KINDS)
    dq, dk, dv = kern.grad(q, k, k, o, lse, do, grad_lse=gl)
    lines = fake.log()
    assert [x.split()[1] for x in lines if x.startswith("launch ")] == \
        [m["kernel"] + "_preprocess", m["kernel"], m["kernel"] + "_postprocess"]
    assert sum(x.startswith("cuModuleLoadData") for x in lines) == 1
    pre, main, post = launches(lines)
    for launch in (pre, post):
        assert "grid 1 4 2 block 256 1 1 smem 0 stream 0x5000" in launch  # ceil(3 / 64), Hq, B
        assert params(launch)[-5:] == ["2", "4", "2", "3", "130"]
    assert "grid 3 2 2 block 128 1 1 smem 40960 stream 0x5000" in main
    pre_ptrs = [_live[int(x, 16)] for x in params(pre)[:4]]
    assert pre_ptrs[0] is do
    assert pre_ptrs[1] is not o and pre_ptrs[1].stride() == contiguous_strides(o.shape)
    delta, dq_accum = pre_ptrs[2], pre_ptrs[3]
    assert (delta.shape, str(delta.dtype)) == ((B, Hq, Nq), "torch.float32")
    assert (dq_accum.shape, str(dq_accum.dtype)) == ((B, Hq, Nq, D), "torch.float32")
    # delta as the preprocess left it (the fake runs no kernel: zeros), minus grad_lse.
    np.testing.assert_array_equal(delta.data, -gl.data)
    assert [int(x, 16) for x in params(main)[5:7]] == [delta.data_ptr(), dq_accum.data_ptr()]
    assert [int(x, 16) for x in params(post)[:2]] == [dq_accum.data_ptr(), dq.data_ptr()]
    assert getattr(dq, "source", None) is None  # not a torch conversion of dq_accum
    assert str(dq.dtype) == "torch.float16" and dq.shape == q.shape
    assert dk.shape == dv.shape == (B, Hkv, Nk, D)


def _grad_setup(fake, tmp_path, specs=("f16,d128,causal,grad",)):
    fa.load_bundle(grad_bundle(tmp_path / "gb", specs))
    fake.log(GRAD_KINDS)


def test_backward_runs_the_grad_kernel(fake, tmp_path):
    """q requires grad: fa.attention goes through the op, asks it for lse
    (returns out only), setup_context keeps q, k, v, out, lse; backward
    launches the backward kernel of the same variant on those tensors."""
    t = fake.torch
    op = fake.ops.attention_op
    _grad_setup(fake, tmp_path)
    fake.log("ppppp" + "iiiii")  # the sm_90a forward with lse: q_map k_map v_map out lse
    q = Tensor((1, 8, 200, 128), t.float16, requires_grad=True)
    kv = Tensor((1, 2, 300, 128), t.float16)
    out = fa.attention(q, kv, kv, causal=True)
    assert op.calls == 1 and op.args[8] is True  # return_lse forced on
    assert out is op.result[0]
    (fwd,) = launches(fake.log())
    lse = op.result[1]
    assert lse.shape == (1, 8, 200) and params(fwd)[4] == hex(lse.data_ptr())
    ctx = Ctx(needs=(True, False, False) + (False,) * 7)
    op.setup_context(ctx, op.args, op.result)
    assert ctx.saved_tensors == (q, kv, kv, out, lse) and ctx.materialize is False
    fake.log(GRAD_KINDS)
    g = Tensor(out.shape, t.float16)
    grads = op.backward(ctx, g, None)
    (launch,) = launches(fake.log())
    assert "grid 5 2 1 block 128 1 1" in launch  # ceil(300 / 64) key blocks, Hkv, B
    p = params(launch)
    assert p[:5] == [hex(x.data_ptr()) for x in (q, kv, kv, g, lse)]
    assert p[9:] == ["1", "8", "2", "200", "300"]
    assert len(grads) == 10 and grads[1:] == (None,) * 9  # only q needs its gradient
    assert grads[0].shape == q.shape and grads[0].source is _live[int(p[6], 16)]


def test_backward_with_the_lse_gradient(fake, tmp_path):
    """A loss that uses lse: its gradient enters delta (delta - grad_lse);
    out unused (None): a zero gradient for it."""
    t = fake.torch
    op = fake.ops.attention_op
    _grad_setup(fake, tmp_path)
    fake.log("ppppp" + "iiiii")
    q = Tensor((1, 2, 4, 128), t.float16, requires_grad=True)
    out, lse = fa.attention(q, q, q, causal=True, return_lse=True)
    assert lse is op.result[1] and len(launches(fake.log())) == 1
    ctx = Ctx()
    op.setup_context(ctx, op.args, op.result)
    out.data = np.ones(out.shape, np.float16)
    gl = Tensor(lse.shape, t.float32, data=np.full(lse.shape, 0.25, np.float32))
    fake.log(GRAD_KINDS)
    dq, dk, dv = op.backward(ctx, None, gl)[:3]
    (launch,) = launches(fake.log())
    delta = _live[int(params(launch)[5], 16)]
    np.testing.assert_array_equal(delta.data, np.full(lse.shape, -0.25, np.float32))
    assert dk.shape == dv.shape == (1, 2, 4, 128)


def test_backward_computes_a_missing_lse(fake, tmp_path):
    """The op called without return_lse (as torch.ops.fa.attention can be):
    the backward runs the forward with lse again, then the backward kernel."""
    t = fake.torch
    op = fake.ops.attention_op
    _grad_setup(fake, tmp_path)
    q = Tensor((1, 2, 64, 128), t.float16, requires_grad=True)
    fake.log("ppppiiiii")
    out, lse = op(q, q, q, True, -1, -1, None, None, False, False)
    assert lse.shape == (0,) and len(launches(fake.log())) == 1
    ctx = Ctx()
    op.setup_context(ctx, op.args, op.result)
    fake.log("pppppp" + "iiiii")
    compiles = fa.compiler.stats["compiles"]
    dq = op.backward(ctx, Tensor(out.shape, t.float16), None)[0]
    assert fa.compiler.stats["compiles"] == compiles + 1  # the forward kernel with lse
    # One set of kinds decodes both launches: the forward's 6 pointers (q, k, v maps, out,
    # lse, the tile counter of the short-causal kernel with dynamic tiles) and its sizes, the
    # backward's first 5 (q, k, v, do, lse: the new lse).
    fwd, bwd = launches(fake.log())
    assert "grid 2 1 1 block 384" in fwd and fwd.endswith("1 2 2 64 64")
    assert "grid 1 2 1 block 128" in bwd and params(bwd)[4] == params(fwd)[4]
    assert dq.shape == q.shape


def test_backward_without_a_kernel(fake, tmp_path, monkeypatch):
    """Head dim 256 has an sm_90a forward but no backward kernel: the backward
    raises UnsupportedError with the reason, or with fallback computes the
    gradients with torch (reference_grad, cast to the inputs' dtypes)."""
    t = fake.torch
    op = fake.ops.attention_op
    seen = []

    def reference_grad(q, k, v, do, causal, window, scale, softcap, grad_lse):
        seen.append((q.shape, causal, window, scale, softcap, grad_lse))
        return q.float(), k.float(), v.float()
    monkeypatch.setattr(fake.ops, "reference_grad", reference_grad)
    for fallback in (False, True):
        fake.log("ppppp" + "iiiii")
        q = Tensor((1, 2, 64, 256), t.bfloat16, requires_grad=True)
        fa.attention(q, q, q, window=(32, 8), fallback=fallback)
        assert len(launches(fake.log())) == 1  # the forward runs on its kernel
        ctx = Ctx()
        op.setup_context(ctx, op.args, op.result)
        g = Tensor((1, 2, 64, 256), t.bfloat16)
        if not fallback:
            with pytest.raises(fa.UnsupportedError, match="fa.attention backward: head dim 256: "
                               "the sm_90a backward kernel supports 64, 128. Pass fallback=True"):
                op.backward(ctx, g, None)
            continue
        dq, dk, dv = op.backward(ctx, g, None)[:3]
        assert seen == [((1, 2, 64, 256), False, (32, 8), None, None, None)]
        assert str(dq.dtype) == "torch.bfloat16" and not launches(fake.log())


def test_backward_traced_goes_through_the_op(fake, tmp_path):
    """Under torch.compile (or on fake tensors) the backward is the custom op
    fa::attention_backward (its fake gives the shapes); eager, its body."""
    t = fake.torch
    op, bop = fake.ops.attention_op, fake.ops.attention_backward_op
    _grad_setup(fake, tmp_path, ["bf16,d64,full,grad,window=16:16"])
    q = Tensor((2, 4, 50, 64), t.bfloat16, requires_grad=True)
    kv = Tensor((2, 1, 70, 64), t.bfloat16, requires_grad=True)
    fake.log("ppppp" + "iiiii")
    fa.attention(q, kv, kv, window=(16, 16))
    assert len(launches(fake.log())) == 1
    ctx = Ctx()
    op.setup_context(ctx, op.args, op.result)
    fake.log(GRAD_KINDS)
    op.backward(ctx, Tensor((2, 4, 50, 64), t.bfloat16), None)
    assert bop.calls == 0 and len(launches(fake.log())) == 1
    t.compiling = True
    fake.log(GRAD_KINDS)
    dq, dk, dv = op.backward(ctx, Tensor((2, 4, 50, 64), t.bfloat16), None)[:3]
    assert bop.calls == 1 and bop.args[7:] == (False, 16, 16, None, None, False, None)
    assert dk.shape == (2, 1, 70, 64) and len(launches(fake.log())) == 1


def test_backward_with_a_compiled_kernel(fake):
    """No bundle: the backward kernel is compiled on first use (fa.dispatch),
    then launched with the compiled manifest's parameters (sm_80 here)."""
    t = fake.torch
    op = fake.ops.attention_op
    q = Tensor((2, 4, 100, 64), t.float16, "cuda:1", requires_grad=True)
    kv = Tensor((2, 2, 150, 64), t.float16, "cuda:1")
    fake.log("ppppp" + "iiiii")
    fa.attention(q, kv, kv, causal=True)
    assert len(launches(fake.log())) == 1
    ctx = Ctx()
    op.setup_context(ctx, op.args, op.result)
    fake.log(GRAD_KINDS)
    try:
        dq = op.backward(ctx, Tensor(q.shape, t.float16, "cuda:1"), None)[0]
    except fa.UnsupportedError as e:
        if "no GPU lowering" in str(e):
            pytest.skip("the compiler has no GPU backward kernel yet")
        raise
    # The compiled manifest's preprocess, the kernel, its postprocess.
    pre, launch, post = launches(fake.log())
    assert "grid 2 4 2 block 256 1 1" in pre and "grid 2 4 2 block 256 1 1" in post
    kern = fa.dispatch.kernel(fa.Variant.parse("f16,d64,causal,grad", chip="sm_80"))
    bkv = kern.manifest["block_kv"]
    threads = kern.manifest["block"][0]
    assert f"grid {-(-150 // bkv)} 2 2 block {threads} 1 1" in launch and "stream 0x5001" in launch
    assert params(launch)[:3] == [hex(x.data_ptr()) for x in (q, kv, kv)]
    assert params(launch)[9:] == ["2", "4", "2", "100", "150"] and dq.shape == q.shape


def test_grad_launch_with_captured_tensor(fake, tmp_path):
    """A backward kernel whose score_mod / mask_mod reads function argument 6
    (after q, k, v, out, lse, do) takes it as `arg6`, passed after dv as the
    manifest orders it; missing, it is an error before any launch."""
    t = fake.torch
    v = fa.Variant.parse("f16,d64,causal,grad")
    manifest = grad_manifest(v)
    ids = {"name": "arg6", "tensor": "arg6", "type": "ptr", "dtype": "i32", "shape": [256],
           "align_bytes": 4}
    manifest["params"].insert(9, ids)
    kern = fa.Kernel(manifest, "// no code\n").runtime
    B, Hq, Hkv, Nq, Nk, D = 1, 2, 1, 100, 256, 64
    q, o, do = (Tensor((B, Hq, Nq, D), t.float16) for _ in range(3))
    k = Tensor((B, Hkv, Nk, D), t.float16)
    lse = Tensor((B, Hq, Nq), t.float32)
    docs = Tensor((256,), t.int32)
    fake.log("p" + GRAD_KINDS)  # one more pointer
    kern.grad(q, k, k, o, lse, do, arg6=docs)
    (launch,) = launches(fake.log())
    assert _live[int(params(launch)[9], 16)] is docs
    assert params(launch)[10:] == ["1", "2", "1", "100", "256"]
    with pytest.raises(ValueError, match="arg6"):
        kern.grad(q, k, k, o, lse, do)


def test_grad_launch_with_capture_gradient(fake, tmp_path):
    """A backward kernel with grad_captures (manifest parameter grad_arg6 after
    the captured arg6): Kernel.grad passes a zero-filled f32 buffer of its
    shape after arg6 and returns it fourth, {"grad_arg6": buffer}."""
    t = fake.torch
    v = fa.Variant.parse("f16,d64,causal,grad")
    manifest = grad_manifest(v)
    slopes = {"name": "arg6", "tensor": "arg6", "type": "ptr", "dtype": "f32", "shape": [2],
              "align_bytes": 4}
    grad = {"name": "grad_arg6", "tensor": "grad_arg6", "type": "ptr", "dtype": "f32",
            "shape": [2], "align_bytes": 4}
    manifest["params"][9:9] = [slopes, grad]
    kern = fa.Kernel(manifest, "// no code\n").runtime
    B, Hq, Hkv, Nq, Nk, D = 1, 2, 1, 100, 256, 64
    q, o, do = (Tensor((B, Hq, Nq, D), t.float16) for _ in range(3))
    k = Tensor((B, Hkv, Nk, D), t.float16)
    lse = Tensor((B, Hq, Nq), t.float32)
    arg = Tensor((2,), t.float32)
    fake.log("pp" + GRAD_KINDS)  # two more pointers
    dq, dk, dv, grads = kern.grad(q, k, k, o, lse, do, arg6=arg)
    (launch,) = launches(fake.log())
    assert _live[int(params(launch)[9], 16)] is arg
    buffer = _live[int(params(launch)[10], 16)]
    assert grads == {"grad_arg6": buffer}
    assert (buffer.shape, str(buffer.dtype)) == ((2,), "torch.float32")
    assert not buffer.data.any()  # zero-filled before the launch
    assert params(launch)[11:] == ["1", "2", "1", "100", "256"]
    # An empty problem: zero gradients, still returned.
    empty = Tensor((B, Hq, 0, D), t.float16)
    assert len(kern.grad(empty, k, k, empty, Tensor((B, Hq, 0), t.float32), empty,
                         arg6=arg)) == 4


def test_grad_launch_deterministic(fake, tmp_path):
    """A deterministic backward kernel (fa-to-ptx{deterministic}: manifest
    parameter dq_semaphore after dv) gets a zeroed int32 counter per query
    block of each (batch, head), [B, Hq, ceil(Nq / block_q)]."""
    t = fake.torch
    v = fa.Variant.parse("f16,d64,causal,grad,deterministic=true")
    assert v.options == (("deterministic", "true"),)
    manifest = grad_manifest(v)
    sem = {"name": "dq_semaphore", "tensor": "dq_semaphore", "type": "ptr", "dtype": "i32",
           "shape": ["B", "Hq", {"ceil_div": ["Nq", 64]}], "align_bytes": 4}
    manifest["params"].insert(9, sem)
    kern = fa.Kernel(manifest, "// no code\n").runtime
    B, Hq, Hkv, Nq, Nk, D = 2, 4, 2, 130, 70, 64
    q, o, do = (Tensor((B, Hq, Nq, D), t.float16) for _ in range(3))
    k = Tensor((B, Hkv, Nk, D), t.float16)
    fake.log("p" + GRAD_KINDS)  # one more pointer
    kern.grad(q, k, k, o, Tensor((B, Hq, Nq), t.float32), do)
    (launch,) = launches(fake.log())
    counters = _live[int(params(launch)[9], 16)]
    assert (counters.shape, str(counters.dtype)) == ((B, Hq, 3), "torch.int32")
    assert not counters.data.any()
    assert params(launch)[10:] == ["2", "4", "2", "130", "70"]
