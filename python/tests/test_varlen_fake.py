"""fa_runtime.Kernel.__call__ on a kernel of packed variable-length sequences
against a fake torch and a fake libcuda (test_torch_fake's fixture): the
hand-written manifest of the compiler's contract (conftest.varlen_manifest),
so that the launch (every pointer and size, the grid, the tensor maps, the
outputs' shapes), max_seqlen_q computed or given, the launches of nothing,
the errors and the checked mode are tested without the kernel, in both
layouts of the packed tensors (every test runs for "varlen_layout" thd,
q [T, Hq, D], and htd, q [1, Hq, T, D])."""
import os

import numpy as np
import pytest

from fa import Variant
from fa_runtime import Kernel

from conftest import paged_manifest, varlen_manifest
from test_torch_fake import (CLANG, CUDA_INCLUDE, FAKE_SRC, Tensor, fake,  # noqa: F401
                             launches, params)

pytestmark = pytest.mark.skipif(
    not (CLANG and os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h"))
         and os.path.exists(FAKE_SRC)), reason="needs clang++-22, cuda.h and the repository")

# q_map k_map v_map out lse cu_seqlens_q cu_seqlens_k, B Hq Hkv Nq Nk max_seqlen_q
VARLEN_KINDS = "ppppppp" + "iiiiii"


@pytest.fixture(params=["thd", "htd"])
def layout(request):
    """The varlen_layout of the kernel (and of the tensors given to it)."""
    return request.param


def shape(layout, H, T, D=128):
    """A packed tensor's shape: q, k, v, out [T, H, D] (thd) or [1, H, T, D]
    (htd); lse's (D=None) [H, T] or [1, H, T]."""
    if layout == "thd":
        return (T, H, D) if D else (H, T)
    return (1, H, T, D) if D else (1, H, T)


def i32(t, values, device="cuda:0"):
    a = np.asarray(values, dtype=np.int32)
    return Tensor(a.shape, t.int32, device, data=a)


@pytest.fixture
def device_math(fake, monkeypatch):
    """The few torch calls that compute max_seqlen_q on the device, on the
    fake tensors' numpy data; returns the list of device-to-host copies
    (int() of a tensor: a synchronization)."""
    syncs = []

    def like(x, data):
        return Tensor(data.shape, x.dtype, str(x.device), data=data)
    methods = {
        "clamp": lambda x, lo, hi: like(x, np.clip(x.data, lo, hi)),
        "__getitem__": lambda x, i: like(x, x.data[i]),
        "__sub__": lambda x, y: like(x, x.data - y.data),
        "max": lambda x: like(x, np.asarray(x.data.max())),
        "__int__": lambda x: syncs.append(x) or int(x.data),
    }
    for name, fn in methods.items():
        monkeypatch.setattr(Tensor, name, fn, raising=False)
    return syncs


def varlen_kernel(layout, **kw):
    return Kernel(varlen_manifest(layout=layout, **kw), b"// fake varlen kernel\n")


def packed(t, layout, Hq=8, Hkv=2, Tq=1000, Tk=700):
    return (Tensor(shape(layout, Hq, Tq), t.float16), Tensor(shape(layout, Hkv, Tk), t.float16),
            Tensor(shape(layout, Hkv, Tk), t.float16))


def test_varlen_launch(fake, device_math, layout):
    # 3 sequences (the second with no query rows) of 300, 0, 700 query rows and
    # 100, 300, 300 keys: the grid covers the longest (700 rows: 6 tiles of
    # 128) for each of 8 heads and 3 sequences; max_seqlen_q is read from the
    # device once.
    t = fake.torch
    kern = varlen_kernel(layout, lse=True)
    q, k, v = packed(t, layout)
    cu_q, cu_k = i32(t, [0, 300, 300, 1000]), i32(t, [0, 100, 400, 700])
    fake.log(VARLEN_KINDS)
    out, lse = kern(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    lines = fake.log()
    (launch,) = launches(lines)
    # out and lse allocated in the layout: thd [Tq, Hq, D] and [Hq, Tq].
    assert (out.shape, str(out.dtype)) == (shape(layout, 8, 1000), "torch.float16")
    assert (lse.shape, str(lse.dtype)) == (shape(layout, 8, 1000, None), "torch.float32")
    assert "grid 6 8 3 block 384" in launch and "stream 0x5000" in launch
    p = params(launch)
    assert p[3:7] == [hex(x.data_ptr()) for x in (out, lse, cu_q, cu_k)]
    assert p[7:] == "3 8 2 1000 700 700".split()  # B, Hq, Hkv, Nq, Nk, max_seqlen_q
    assert len(device_math) == 1
    # The tensor maps, [D, N, H] with the manifest's strides as they are. thd: q's rows
    # (tokens) 8 * 128 elements apart and its 8 head planes 128, k's and v's rows
    # 2 * 128 apart (the strides decrease); htd: q as 8 planes of [1000 rows, 128], k
    # and v as 2 of [700, 128].
    encodes = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")]
    assert len(encodes) == 3
    q_strides, kv_strides = ("2048 256", "512 256") if layout == "thd" else \
        ("256 256000", "256 179200")
    assert f"addr {hex(q.data_ptr())} dims 128 1000 8 strides {q_strides} box 64 64 1 " \
        in encodes[0]
    assert f"addr {hex(k.data_ptr())} dims 128 700 2 strides {kv_strides} box 64 128 1 " \
        in encodes[1]
    assert f"addr {hex(v.data_ptr())} dims 128 700 2 strides {kv_strides} box 64 128 1 " \
        in encodes[2]
    # max_seqlen_q given: the offsets are not read (these have no data); out and lse given.
    out2 = Tensor(shape(layout, 8, 1000), t.float16)
    lse2 = Tensor(shape(layout, 8, 1000, None), t.float32)
    fake.log(VARLEN_KINDS)
    got = kern(q, k, v, out2, lse2, cu_seqlens_q=Tensor((4,), t.int32),
               cu_seqlens_k=Tensor((4,), t.int32), max_seqlen_q=129)
    assert got == (out2, lse2)
    (launch,) = launches(fake.log())
    assert "grid 2 8 3 " in launch and params(launch)[3] == hex(out2.data_ptr())
    assert params(launch)[7:] == "3 8 2 1000 700 129".split()
    assert len(device_math) == 1
    # Without lse: the sizes right after the offsets.
    fake.log("pppppp" + "iiiiii")
    out = varlen_kernel(layout)(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=700)
    (launch,) = launches(fake.log())
    assert out.shape == shape(layout, 8, 1000)
    assert params(launch)[3:] == [hex(x.data_ptr()) for x in (out, cu_q, cu_k)] \
        + "3 8 2 1000 700 700".split()


def test_sizes_from_the_layout(fake, layout):
    # Every size different (Hq = 4, Hkv = 1, Tq = 40, Tk = 24, D = 64): each is
    # read from its own dimension of the layout, and so are the maps.
    t = fake.torch
    kern = varlen_kernel(layout, head_dim=64, lse=True)
    q = Tensor(shape(layout, 4, 40, 64), t.float16)
    k = Tensor(shape(layout, 1, 24, 64), t.float16)
    fake.log(VARLEN_KINDS)
    out, lse = kern(q, k, k, cu_seqlens_q=i32(t, [0, 40]), cu_seqlens_k=i32(t, [0, 24]),
                    max_seqlen_q=40)
    lines = fake.log()
    (launch,) = launches(lines)
    assert out.shape == shape(layout, 4, 40, 64) and lse.shape == shape(layout, 4, 40, None)
    assert "grid 1 4 1 " in launch and params(launch)[7:] == "1 4 1 40 24 40".split()
    encodes = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")]
    q_strides, kv_strides = ("512 128", "128 128") if layout == "thd" else \
        ("128 5120", "128 3072")
    assert f"dims 64 40 4 strides {q_strides} " in encodes[0]
    assert f"dims 64 24 1 strides {kv_strides} " in encodes[1]


def test_max_seqlen_q_as_the_kernel_sees_the_offsets(fake, device_math, layout):
    # Unchecked, bad offsets are clamped into [0, Nq] by the kernel: the
    # computed max_seqlen_q is the longest clamped sequence (1000, not 1200),
    # and 0 when every clamped sequence is empty (then nothing launches).
    t = fake.torch
    kern = varlen_kernel(layout)
    q, k, v = packed(t, layout)
    cu_k = i32(t, [0, 100, 400, 700])
    fake.log("pppppp" + "iiiiii")
    kern(q, k, v, cu_seqlens_q=i32(t, [0, 1200, 1000, 1000]), cu_seqlens_k=cu_k)
    (launch,) = launches(fake.log())
    assert "grid 8 8 3 " in launch and params(launch)[6:] == "3 8 2 1000 700 1000".split()
    kern(q, k, v, cu_seqlens_q=i32(t, [0, -5, -7, -9]), cu_seqlens_k=cu_k)
    assert not launches(fake.log())


def test_nothing_to_launch(fake, device_math, layout):
    # No sequence (B = 0), no query row, or max_seqlen_q = 0: out (and lse) are
    # allocated, nothing is launched or encoded, and the offsets are not read.
    t = fake.torch
    kern = varlen_kernel(layout, lse=True)
    q, k, v = packed(t, layout)
    fake.log(VARLEN_KINDS)
    out, lse = kern(q, k, v, cu_seqlens_q=i32(t, [0]), cu_seqlens_k=i32(t, [0]))
    assert out.shape == shape(layout, 8, 1000) and lse.shape == shape(layout, 8, 1000, None)
    q0 = Tensor(shape(layout, 8, 0), t.float16)
    out, lse = kern(q0, k, v, cu_seqlens_q=i32(t, [0, 0, 0]),
                    cu_seqlens_k=i32(t, [0, 300, 700]))
    assert out.shape == shape(layout, 8, 0) and lse.shape == shape(layout, 8, 0, None)
    kern(q, k, v, cu_seqlens_q=i32(t, [0, 300, 300, 1000]),
         cu_seqlens_k=i32(t, [0, 100, 400, 700]), max_seqlen_q=0)
    lines = fake.log()
    assert not launches(lines) and not any(x.startswith("cuTensorMapEncodeTiled") for x in lines)
    assert not device_math


def test_varlen_runtime_errors(fake, layout):
    t = fake.torch
    kern = varlen_kernel(layout)
    plain = Kernel(paged_manifest(Variant.parse("f16,d128,causal")), b"// fake plain kernel\n")
    assert kern.varlen and kern.varlen_layout == layout
    assert not plain.varlen and plain.varlen_layout is None
    q, k, v = packed(t, layout)
    cu_q, cu_k = i32(t, [0, 300, 300, 1000]), i32(t, [0, 100, 400, 700])
    fake.log("pppppp" + "iiiiii")
    cases = [
        (dict(cu_seqlens_q=cu_q), "cu_seqlens_k: missing: kernel fa_f16_d128_full_varlen_kernel "
                                  "takes packed variable-length sequences"),
        (dict(cu_seqlens_k=cu_k), "cu_seqlens_q: missing"),
        (dict(cu_seqlens_q=Tensor((4,), t.int64), cu_seqlens_k=cu_k),
         r"cu_seqlens_q: dtype i64, but kernel .* takes i32 \(cu_seqlens_q.to\(torch.int32\)\)"),
        (dict(cu_seqlens_q=cu_q, cu_seqlens_k=i32(t, [0, 100, 400, 700], "cuda:1")),
         "cu_seqlens_k: on cuda:1, but q is on cuda:0"),
        (dict(cu_seqlens_q=cu_q, cu_seqlens_k=i32(t, [0, 700])),
         r"cu_seqlens_k: shape\[0\] is 2, but 4 \(B \+ 1: B = 3 sequences"),
        (dict(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=-1),
         r"max_seqlen_q: max_seqlen_q = -1 is not an i32 size \(0 .. 2147483647\)"),
        (dict(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=700.0),
         "max_seqlen_q = 700.0 is not an i32 size"),
        (dict(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=True),
         "max_seqlen_q = True is not an i32 size"),
        (dict(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=2**31),
         "max_seqlen_q = 2147483648 is not an i32 size"),
    ]
    for kw, match in cases:
        with pytest.raises(ValueError, match=match):
            kern(q, k, v, **kw)
    # The tensors of the other layout (or unpacked ones) are refused, naming the layout.
    other = "htd" if layout == "thd" else "thd"
    want = {"thd": (r"q: rank 4 \(shape \[1, 8, 1000, 128\]\), but the kernel takes rank 3 "
                    r"\[Nq, Hq, D\]; q must be \[Tq, Hq, D\] \(varlen_layout thd\): kernel .* "
                    r"takes its sequences packed token-major"),
            "htd": (r"q: rank 3 \(shape \[1000, 8, 128\]\), but the kernel takes rank 4 "
                    r"\[1, Hq, Nq, D\]; q must be \[1, Hq, Tq, D\] \(varlen_layout htd\): "
                    r"kernel .* takes its sequences packed into one batch row")}[layout]
    with pytest.raises(ValueError, match=want):
        kern(*packed(t, other), cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    q3 = Tensor((3, 1000, 8, 128) if layout == "thd" else (3, 8, 1000, 128), t.float16)
    with pytest.raises(ValueError, match=r"q: (rank 4 .*|shape\[0\] is 3, but 1 .*)"
                                         rf"\(varlen_layout {layout}\)"):
        kern(q3, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    # out of the other layout
    with pytest.raises(ValueError, match=rf"out: .*; out must be .* \(varlen_layout {layout}\)"):
        kern(q, k, v, Tensor(shape(other, 8, 1000), t.float16), cu_seqlens_q=cu_q,
             cu_seqlens_k=cu_k, max_seqlen_q=700)
    lse_kern = varlen_kernel(layout, lse=True)
    with pytest.raises(ValueError, match=rf"lse: .*; lse must be "
                                         rf"{'.Hq, Tq.' if layout == 'thd' else '.1, Hq, Tq.'} "
                                         rf"\(varlen_layout {layout}\)"):
        lse_kern(q, k, v, None, Tensor(shape(other, 8, 1000, None), t.float32),
                 cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=700)
    # A kernel without varlen refuses them.
    q2 = Tensor((2, 8, 100, 128), t.float16)
    with pytest.raises(ValueError, match="cu_seqlens_q: kernel fa_f16_d128_causal_kernel takes "
                                         "no cu_seqlens_q: it was compiled without packed "
                                         "variable-length sequences"):
        plain(q2, q2, q2, cu_seqlens_q=cu_q)
    with pytest.raises(ValueError, match="max_seqlen_q: kernel fa_f16_d128_causal_kernel takes "
                                         "no max_seqlen_q: it was compiled without packed "
                                         "variable-length sequences"):
        plain(q2, q2, q2, max_seqlen_q=100)
    assert not launches(fake.log())


def test_checked_mode(fake, device_math, monkeypatch, layout):
    """FA_CHECK_INDICES=1 (or check_indices=True): the offsets are read on the
    host before anything is launched, max_seqlen_q from them (no computation
    on the device); unchecked, the same calls launch (the kernel clamps)."""
    t = fake.torch
    kern = varlen_kernel(layout)
    q, k, v = packed(t, layout)
    good_q, good_k = [0, 300, 300, 1000], [0, 100, 400, 700]

    def call(cu_q, cu_k, **kw):
        return kern(q, k, v, cu_seqlens_q=i32(t, cu_q), cu_seqlens_k=i32(t, cu_k), **kw)
    monkeypatch.setenv("FA_CHECK_INDICES", "1")
    fake.log("pppppp" + "iiiiii")
    call(good_q, good_k)
    (launch,) = launches(fake.log())
    assert params(launch)[6:] == "3 8 2 1000 700 700".split() and not device_math
    cases = [
        ([5, 300, 300, 1000], good_k, {}, r"cu_seqlens_q\[0\] = 5: the offsets must start at 0"),
        ([0, 300, 250, 1000], good_k, {}, r"cu_seqlens_q\[2\] = 250 < cu_seqlens_q\[1\] = 300: "
                                          r"sequence 1 would have -50 query rows"),
        ([0, 300, 300, 999], good_k, {}, r"cu_seqlens_q\[3\] = 999: the offsets must end at "
                                         r"Nq = 1000, the packed query rows \(query rows 999 .. "
                                         r"999 belong to no sequence\)"),
        ([0, 300, 300, 1000], [0, 100, 400, 701], {}, r"cu_seqlens_k\[3\] = 701: the offsets "
                                                      r"must end at Nk = 700, the packed keys "
                                                      r"\(sequence 2 ends past them\)"),
        (good_q, good_k, dict(max_seqlen_q=600), r"max_seqlen_q = 600, but sequence 2 has 700 "
                                                 r"query rows"),
        # No sequence: nothing to compute, but q's rows would be left unwritten.
        ([0], [0], {}, r"cu_seqlens_q\[0\] = 0: the offsets must end at Nq = 1000"),
    ]
    for cu_q, cu_k, kw, match in cases:
        with pytest.raises(ValueError, match=match):
            call(cu_q, cu_k, **kw)
        assert not launches(fake.log())
    monkeypatch.setenv("FA_CHECK_INDICES", "0")
    for cu_q, cu_k, kw, _ in cases:
        call(cu_q, cu_k, **kw)
    assert len(launches(fake.log())) == len(cases) - 1  # the one without sequences launches nothing
    assert len(device_math) == 4  # max_seqlen_q computed where not given (and B > 0)
    with pytest.raises(ValueError, match=r"max_seqlen_q = 600, but sequence 2"):
        call(good_q, good_k, max_seqlen_q=600, check_indices=True)
    monkeypatch.setenv("FA_CHECK_INDICES", "1")
    call(good_q, good_k, max_seqlen_q=600, check_indices=False)
    assert len(launches(fake.log())) == 1


VARLEN_GRAD_KINDS = ("ppppppppppp" + "iiiiii"  # 9 + the offsets; B Hq Hkv Nq Nk max_seqlen_k
                     + ";_preprocess=ppppiiiii;_postprocess=ppiiiii")


def test_varlen_grad_launch(fake, device_math, layout):
    """Kernel.grad on a varlen backward kernel (the compiler's manifest): the
    preprocess and postprocess over the batch-1 planes (grid z 1), the kernel's
    grid over the longest sequence's key blocks per K/V head and sequence, the
    offsets and max_seqlen_k (read from cu_seqlens_k once when not given), the
    tensor maps [D, T, H]."""
    import fa
    from test_varlen_runtime import VARLEN_GRAD_IR
    try:
        m = fa.compile(VARLEN_GRAD_IR, chip="sm_90a", varlen_layout=layout).manifest
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no compiler: {e}")
    t = fake.torch
    kern = Kernel(m, b"// fake varlen backward kernel\n")
    Tq, Tk = 1000, 700
    q = Tensor(shape(layout, 8, Tq), t.bfloat16)
    do = Tensor(shape(layout, 8, Tq), t.bfloat16)
    o = Tensor(shape(layout, 8, Tq), t.bfloat16)
    k = Tensor(shape(layout, 2, Tk), t.bfloat16)
    lse = Tensor(shape(layout, 8, Tq, None), t.float32)
    cu_q, cu_k = i32(t, [0, 300, 300, 1000]), i32(t, [0, 100, 400, 700])
    fake.log(VARLEN_GRAD_KINDS)
    dq, dk, dv = kern.grad(q, k, k, o, lse, do, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    lines = fake.log()
    pre, main, post = launches(lines)
    for launch in (pre, post):
        assert "grid 16 8 1 block 256 1 1" in launch  # ceil(1000 / 64), Hq, one batch
    # ceil(300 / 128) key blocks, Hkv, 3 sequences; 384 threads.
    assert "grid 3 2 3 block 384 1 1" in main
    p = params(main)
    assert p[9:11] == [hex(cu_q.data_ptr()), hex(cu_k.data_ptr())]
    assert p[11:] == "3 8 2 1000 700 300".split()  # B, Hq, Hkv, Nq, Nk, max_seqlen_k
    assert len(device_math) == 1  # max_seqlen_k from the offsets: one synchronization
    encodes = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")]
    assert len(encodes) == 5
    q_strides, kv_strides = ("2048 256", "512 256") if layout == "thd" else \
        ("256 256000", "256 179200")
    assert f"addr {hex(q.data_ptr())} dims 128 1000 8 strides {q_strides} box 64 64 1 " \
        in encodes[0]
    assert f"addr {hex(k.data_ptr())} dims 128 700 2 strides {kv_strides} box 64 128 1 " \
        in encodes[1]
    assert dq.shape == q.shape and dk.shape == dv.shape == k.shape
    # dq_accum (the planes in both layouts) is what the postprocess reads.
    dq_accum = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")][4]
    assert "dims 128 1000 8 strides 512 512000 box 32 64 1 " in dq_accum
    # max_seqlen_k given: not read from the device.
    fake.log(VARLEN_GRAD_KINDS)
    kern.grad(q, k, k, o, lse, do, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_k=129)
    main = launches(fake.log())[1]
    assert "grid 2 2 3 " in main and params(main)[-1] == "129"
    assert len(device_math) == 1
    with pytest.raises(ValueError, match="max_seqlen_k: kernel"):
        Kernel(fa.compile(VARLEN_GRAD_IR.replace(
            " varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)", "").replace(
            ",\n                 %cq: tensor<?xi32>, %ck: tensor<?xi32>)", ")"),
            chip="sm_90a").manifest, b"//\n").grad(q, k, k, o, lse, do, max_seqlen_k=3)
