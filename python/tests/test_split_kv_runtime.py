"""fa_runtime on split-KV kernels ("split_kv": true; the compiler's
fa-to-ptx{split-kv=true}): the manifest's new key, parameters (the workspaces
split_o, split_lse, split_counter before the sizes, the size num_splits after
them) and size symbol, check_launch's num_splits and workspace checks, the grid
at num_splits, launch_ptrs' sizes (pure Python, no torch, no GPU); and
Kernel.__call__ against the fake torch and libcuda of test_torch_fake.py: the
pointers in manifest order, num_splits as the last size, the per-stream
workspaces (sizes, growth, the counter zeroed), the caller's workspaces, the
errors. Hand-written manifests of the compiler's contract (split_kv_manifest,
docs/Manifest.md "Split-KV kernels")."""
import copy
import os

import numpy as np
import pytest

from fa import Variant
from fa_runtime import Kernel, ManifestError, check_launch, check_manifest
from fa_runtime.manifest import (MAX_NUM_SPLITS, SYMBOLS, check_num_splits, check_sizes,
                                 eval_expr, takes_split_kv)

from conftest import (broken_manifest, drop_param, paged_manifest, param_of, tensor,
                      varlen_manifest)

SPLIT_GRID = [{"ceil_div": ["Nq", 128]}, "Hq", {"mul": ["B", "num_splits"]}]


def split_kv_manifest(m=None):
    """`m` (default: the plain sm_90a f16 d128 causal kernel's manifest, with
    lse) as the compiler writes it with split-kv=true: split_o, split_lse and
    split_counter just before the first i32 size, num_splits after the last,
    the grid's z the batch times num_splits, "split_kv": true."""
    m = copy.deepcopy(m or paged_manifest(Variant.parse("f16,d128,causal,lse")))
    params = m["params"]
    first = next(i for i, p in enumerate(params) if p["type"] == "i32")

    def ptr(name, dtype, shape, align):
        return {"name": name, "tensor": name, "type": "ptr", "dtype": dtype, "shape": shape,
                "align_bytes": align}
    params[first:first] = [
        ptr("split_o", "f32", ["num_splits", "B", "Hq", "Nq", "D"], 16),
        ptr("split_lse", "f32", ["num_splits", "B", "Hq", "Nq"], 4),
        ptr("split_counter", "i32", ["B", "Hq", {"ceil_div": ["Nq", 128]}], 4)]
    params.append({"name": "num_splits", "type": "i32"})
    m["grid"] = [m["grid"][0], m["grid"][1], {"mul": [m["grid"][2], "num_splits"]}]
    m["split_kv"] = True
    return m


def split_tensors(B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000, D=128, **over):
    t = {"q": tensor((B, Hq, Nq, D)), "k": tensor((B, Hkv, Nk, D)),
         "v": tensor((B, Hkv, Nk, D))}
    t.update(over)
    return t


def workspaces(splits, B=2, Hq=8, Nq=1000, D=128):
    return {"split_o": tensor((splits, B, Hq, Nq, D), "f32"),
            "split_lse": tensor((splits, B, Hq, Nq), "f32"),
            "split_counter": tensor((B, Hq, -(-Nq // 128)), "i32")}


# ---------------------------------------------------------------------------
# The manifest


def test_manifests_are_valid():
    m = split_kv_manifest()
    check_manifest(m)
    assert takes_split_kv(m)
    names = [p["name"] for p in m["params"]]
    assert names == ["q_map", "k_map", "v_map", "out", "lse", "split_o", "split_lse",
                     "split_counter", "B", "Hq", "Hkv", "Nq", "Nk", "num_splits"]
    plain = paged_manifest(Variant.parse("f16,d128,causal"))
    assert not takes_split_kv(plain) and not takes_split_kv(dict(plain, split_kv=False))
    assert "num_splits" in SYMBOLS
    # With the other kinds: paged (after page_table; num_splits after max_pages), varlen.
    paged = split_kv_manifest(paged_manifest(Variant.parse("f16,d128,kv_lens,page=64")))
    check_manifest(paged)
    assert [p["name"] for p in paged["params"]][4:] == [
        "kv_lens", "page_table", "split_o", "split_lse", "split_counter", "B", "Hq", "Hkv",
        "Nq", "Nk", "num_pages", "max_pages", "num_splits"]
    check_manifest(split_kv_manifest(varlen_manifest(lse=True)))


def test_malformed_split_kv_manifests():
    broken, drop, param = broken_manifest(split_kv_manifest), drop_param, param_of

    def plain():
        return paged_manifest(Variant.parse("f16,d128,causal"))
    cases = [
        # Without the key, the workspaces' contracts name num_splits first.
        (broken(lambda m: m.pop("split_kv")),
         r"params\[5\].shape\[0\]: the size symbol num_splits without 'split_kv': true"),
        (broken(lambda m: m.update(split_kv=False)), "the size symbol num_splits without"),
        (broken(lambda m: m.update(split_kv="yes")), "'split_kv' is 'yes'"),
        (broken(lambda m: m.update(split_kv=1)), "'split_kv' is 1"),
        (broken(drop("split_o")), "a split_o parameter missing with 'split_kv': true"),
        (broken(drop("split_lse")), "a split_lse parameter missing with 'split_kv': true"),
        (broken(drop("split_counter")),
         "a split_counter parameter missing with 'split_kv': true"),
        (broken(lambda m: param("split_counter")(m).update(dtype="i64")),
         "split_counter is a ptr of dtype i64, not a ptr of i32"),
        (broken(lambda m: param("split_o")(m).update(dtype="f16")),
         "split_o is a ptr of dtype f16, not a ptr of f32"),
        (broken(drop("num_splits")), "the i32 size num_splits goes with 'split_kv': true"),
        (broken(lambda m: param("split_o")(m).update(shape=["splits", "B", "Hq", "Nq", "D"])),
         "unknown size symbol 'splits'"),
        # The split-KV parts in a kernel without "split_kv".
        (broken(lambda m: m["params"].append({"name": "num_splits", "type": "i32"}), plain()),
         "the i32 size num_splits goes with 'split_kv': true"),
        (broken(lambda m: m.update(grid=SPLIT_GRID), plain()),
         r"grid\[2\]: the size symbol num_splits without 'split_kv': true"),
        (broken(lambda m: m["params"].insert(4, {
            "name": "split_counter", "tensor": "split_counter", "type": "ptr", "dtype": "i32",
            "shape": ["B", "Hq", {"ceil_div": ["Nq", 128]}], "align_bytes": 4}), plain()),
         "no split_counter parameter without 'split_kv': true"),
        (broken(lambda m: m["params"].insert(4, {
            "name": "split_lse", "tensor": "split_lse", "type": "ptr", "dtype": "f32",
            "shape": ["num_splits", "B", "Hq", "Nq"], "align_bytes": 4}), plain()),
         r"params\[4\].shape\[0\]: the size symbol num_splits without 'split_kv': true"),
    ]
    for m, match in cases:
        with pytest.raises(ManifestError, match=match):
            check_manifest(m)


# ---------------------------------------------------------------------------
# Launch checks


def test_split_kv_sizes_and_grid():
    m = split_kv_manifest()
    plan = check_launch(m, split_tensors())
    assert plan.sizes == dict(B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000, num_splits=1)
    assert check_launch(m, split_tensors(), num_splits=5).sizes["num_splits"] == 5
    k = Kernel(m, b"// fake split-kv kernel\n")
    assert k.grid(plan.sizes) == [8, 8, 2]
    assert k.grid(dict(plan.sizes, num_splits=5)) == [8, 8, 10]  # memoized per num_splits
    assert k.grid(plan.sizes) == [8, 8, 2]
    assert eval_expr(m["grid"][2], dict(B=3, num_splits=4)) == 12
    # The workspaces may be omitted (the runtime allocates them) or given at num_splits.
    plan = check_launch(m, split_tensors(**workspaces(3)), num_splits=3)
    assert plan.sizes["num_splits"] == 3 and plan.copies == ()
    # Other kinds: a paged kernel binds its sizes as before and adds num_splits.
    paged = split_kv_manifest(paged_manifest(Variant.parse("f16,d128,kv_lens,page=64")))
    t = {"q": tensor((2, 8, 1, 128)), "k": tensor((10, 2, 64, 128)),
         "v": tensor((10, 2, 64, 128)), "kv_lens": tensor((2,), "i32"),
         "page_table": tensor((2, 7), "i32")}
    assert check_launch(paged, t, num_splits=4).sizes == dict(
        B=2, Hq=8, Hkv=2, Nq=1, Nk=448, num_pages=10, max_pages=7, num_splits=4)


def test_num_splits_errors():
    m = split_kv_manifest()
    for bad in (0, -1, MAX_NUM_SPLITS + 1, 2**31, 1.0, True, "2"):
        with pytest.raises(ValueError, match=r"^num_splits: num_splits = .* is not a number of "
                                             r"key splits \(1 \.\. 1024\)"):
            check_launch(m, split_tensors(), num_splits=bad)
        with pytest.raises(ValueError, match="^num_splits: "):
            check_num_splits(bad)
    check_num_splits(1)
    check_num_splits(MAX_NUM_SPLITS)
    plain = paged_manifest(Variant.parse("f16,d128,causal,lse"))
    with pytest.raises(ValueError, match="num_splits: kernel .* takes no num_splits: it was "
                                         "compiled without split-KV"):
        check_launch(plain, split_tensors(), num_splits=1)
    for name, t in workspaces(1).items():
        with pytest.raises(ValueError, match=f"{name}: kernel .* takes no {name}: it was "
                                             f"compiled without split-KV"):
            check_launch(plain, split_tensors(**{name: t}))


def test_given_workspaces_are_checked():
    m = split_kv_manifest()

    def fails(match, num_splits=2, **over):
        t = split_tensors(**dict(workspaces(2), **over))
        with pytest.raises(ValueError, match=match):
            check_launch(m, t, num_splits=num_splits)
    # At another num_splits than the caller's.
    fails(r"split_o: shape\[0\] is 2, but num_splits = 3 from the num_splits argument",
          num_splits=3)
    fails(r"split_o: shape\[0\] is 2, but num_splits = 1 from the num_splits argument",
          num_splits=None)
    fails(r"split_lse: shape\[1\] is 3, but B = 2 from q.shape\[0\]",
          split_lse=tensor((2, 3, 8, 1000), "f32"))
    fails(r"split_counter: shape\[2\] is 7, but 8 ",
          split_counter=tensor((2, 8, 7), "i32"))
    fails(r"split_o: dtype f16, but kernel .* takes f32", split_o=tensor((2, 2, 8, 1000, 128)))
    fails(r"split_counter: dtype i64, but kernel .* takes i32 \(split_counter.to\(torch.int32\)\)",
          split_counter=tensor((2, 8, 8), "i64"))
    fails("split_lse: on cuda:1, but q is on cuda:0",
          split_lse=tensor((2, 2, 8, 1000), "f32", device="cuda:1"))
    # Written by the kernel: never copied, so a non-contiguous one is refused.
    fails("split_counter: not contiguous .* the kernel writes",
          split_counter=tensor((2, 8, 8), "i32", strides=(1, 2, 16)))
    bad = tensor((2, 2, 8, 1000, 128), "f32")
    fails("split_o: address .* is not 16-byte aligned",
          split_o=bad._replace(data_ptr=bad.data_ptr + 4))


def test_launch_ptrs_sizes():
    m = split_kv_manifest()
    sizes = dict(B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000)
    assert check_sizes(m, dict(sizes, num_splits=4))["num_splits"] == 4
    with pytest.raises(ValueError, match=r"num_splits: missing \(sizes: B, Hq, Hkv, Nq, Nk, "
                                         r"num_splits\)"):
        check_sizes(m, sizes)
    for bad in (0, 1025):
        with pytest.raises(ValueError, match=f"num_splits: num_splits = {bad} is not"):
            check_sizes(m, dict(sizes, num_splits=bad))
    with pytest.raises(ValueError, match="num_splits: kernel .* has no size num_splits"):
        check_sizes(paged_manifest(Variant.parse("f16,d128,causal")), dict(sizes, num_splits=1))


# ---------------------------------------------------------------------------
# Kernel.__call__ against the fake torch and libcuda


try:
    from test_torch_fake import (CLANG, CUDA_INCLUDE, FAKE_SRC, Tensor, fake,  # noqa: F401
                                 launches, params)
    _FAKE = CLANG and os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h")) \
        and os.path.exists(FAKE_SRC)
except ImportError:  # pragma: no cover
    _FAKE = False

needs_fake = pytest.mark.skipif(not _FAKE, reason="needs clang++-22, cuda.h and the repository")

# q_map k_map v_map out lse split_o split_lse split_counter, B Hq Hkv Nq Nk num_splits
SPLIT_KINDS = "pppppppp" + "iiiiii"


@pytest.fixture
def split_fake(fake, monkeypatch):
    import fa_runtime.driver as driver
    monkeypatch.setattr(driver, "_STREAM_BUFFERS", {})
    return fake


def fake_qkv(t, B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000, device="cuda:0"):
    return (Tensor((B, Hq, Nq, 128), t.float16, device),
            Tensor((B, Hkv, Nk, 128), t.float16, device),
            Tensor((B, Hkv, Nk, 128), t.float16, device))


@needs_fake
def test_split_kv_launch(split_fake):
    import fa_runtime.driver as driver
    fake, t = split_fake, split_fake.torch
    kern = Kernel(split_kv_manifest(), b"// fake split-kv kernel\n")
    q, k, v = fake_qkv(t)
    fake.log(SPLIT_KINDS)
    out, lse = kern(q, k, v, num_splits=4)
    (launch,) = launches(fake.log())
    # The grid's z is B * num_splits; num_splits is the last size.
    assert "grid 8 8 8 block 384" in launch and "stream 0x5000" in launch
    p = params(launch)
    assert p[8:] == "2 8 2 1000 3000 4".split()
    ws = driver._STREAM_BUFFERS[(0, 0x5000)]
    assert p[3:8] == [hex(x.data_ptr()) for x in (out, lse, ws["split_o"], ws["split_lse"],
                                                   ws["split_counter"])]
    # Flat buffers of the contracts' element counts; the counter int32 and zero.
    assert ws["split_o"].shape == (4 * 2 * 8 * 1000 * 128,)
    assert str(ws["split_o"].dtype) == str(ws["split_lse"].dtype) == "torch.float32"
    assert ws["split_lse"].shape == (4 * 2 * 8 * 1000,)
    assert ws["split_counter"].shape == (2 * 8 * 8,)
    assert str(ws["split_counter"].dtype) == "torch.int32"
    assert not ws["split_counter"].data.any()
    # A smaller launch reuses them (never shrink); a larger one grows them.
    first = dict(ws)
    fake.log(SPLIT_KINDS)
    kern(q, k, v, num_splits=2)
    (launch,) = launches(fake.log())
    assert "grid 8 8 4 " in launch and params(launch)[-1] == "2"
    assert all(ws[n] is first[n] for n in first)
    q2, k2, v2 = fake_qkv(t, B=4, Nq=2000)
    fake.log(SPLIT_KINDS)
    kern(q2, k2, v2, num_splits=3)
    (launch,) = launches(fake.log())
    assert "grid 16 8 12 " in launch
    assert ws["split_o"].shape == (3 * 4 * 8 * 2000 * 128,)
    assert ws["split_lse"].shape == (3 * 4 * 8 * 2000,)
    assert ws["split_counter"].shape == (4 * 8 * 16,) and not ws["split_counter"].data.any()
    assert params(launch)[5:8] == [hex(ws[n].data_ptr()) for n in
                                   ("split_o", "split_lse", "split_counter")]
    # Another stream (a device's): its own workspaces.
    qa, ka, va = fake_qkv(t, device="cuda:1")
    fake.log(SPLIT_KINDS)
    kern(qa, ka, va, num_splits=2)
    assert set(driver._STREAM_BUFFERS) == {(0, 0x5000), (1, 0x5001)}
    assert params(launches(fake.log())[0])[5] == \
        hex(driver._STREAM_BUFFERS[(1, 0x5001)]["split_o"].data_ptr())


@needs_fake
def test_split_kv_default_and_one_split(split_fake):
    # num_splits defaults to 1 (the plain kernel's grid); the kernel does not touch
    # split_o and split_lse then: valid pointers, not grown to the contract.
    import fa_runtime.driver as driver
    fake, t = split_fake, split_fake.torch
    kern = Kernel(split_kv_manifest(), b"// fake split-kv kernel\n")
    q, k, v = fake_qkv(t)
    fake.log(SPLIT_KINDS)
    kern(q, k, v)
    (launch,) = launches(fake.log())
    assert "grid 8 8 2 " in launch and params(launch)[-1] == "1"
    ws = driver._STREAM_BUFFERS[(0, 0x5000)]
    assert ws["split_o"].shape == (1,) and ws["split_lse"].shape == (1,)
    assert ws["split_counter"].shape == (2 * 8 * 8,)
    assert all(int(x, 16) for x in params(launch)[5:8])
    # Nothing to compute: no launch, no workspace.
    driver._STREAM_BUFFERS.clear()
    fake.log(SPLIT_KINDS)
    kern(*fake_qkv(t, Nq=0), num_splits=8)
    assert launches(fake.log()) == [] and driver._STREAM_BUFFERS == {}


@needs_fake
def test_split_kv_given_workspaces(split_fake):
    import fa_runtime.driver as driver
    fake, t = split_fake, split_fake.torch
    kern = Kernel(split_kv_manifest(), b"// fake split-kv kernel\n")
    q, k, v = fake_qkv(t)
    mine = {"split_o": Tensor((3, 2, 8, 1000, 128), t.float32),
            "split_lse": Tensor((3, 2, 8, 1000), t.float32),
            "split_counter": Tensor((2, 8, 8), t.int32, data=np.zeros((2, 8, 8), np.int32))}
    fake.log(SPLIT_KINDS)
    kern(q, k, v, num_splits=3, **mine)
    (launch,) = launches(fake.log())
    assert params(launch)[5:8] == [hex(mine[n].data_ptr()) for n in
                                   ("split_o", "split_lse", "split_counter")]
    assert driver._STREAM_BUFFERS == {}
    # One given, the others the stream's.
    fake.log(SPLIT_KINDS)
    kern(q, k, v, num_splits=3, split_counter=mine["split_counter"])
    p = params(launches(fake.log())[0])
    ws = driver._STREAM_BUFFERS[(0, 0x5000)]
    assert p[5:8] == [hex(ws["split_o"].data_ptr()), hex(ws["split_lse"].data_ptr()),
                      hex(mine["split_counter"].data_ptr())]
    assert "split_counter" not in ws
    # Checked at the launch's num_splits, before any driver call.
    fake.log(SPLIT_KINDS)
    with pytest.raises(ValueError, match=r"split_o: shape\[0\] is 3, but num_splits = 2"):
        kern(q, k, v, num_splits=2, **mine)
    with pytest.raises(ValueError, match=r"split_lse: shape\[0\] is 3, but num_splits = 1"):
        kern(q, k, v, split_lse=mine["split_lse"])
    assert launches(fake.log()) == []


@needs_fake
def test_split_kv_errors(split_fake):
    fake, t = split_fake, split_fake.torch
    kern = Kernel(split_kv_manifest(), b"// fake split-kv kernel\n")
    q, k, v = fake_qkv(t)
    fake.log(SPLIT_KINDS)
    for bad in (0, -3, 1025, 2.0, "2"):
        with pytest.raises(ValueError, match="^num_splits: num_splits = .* is not a number"):
            kern(q, k, v, num_splits=bad)
    plain = Kernel(paged_manifest(Variant.parse("f16,d128,causal,lse")), b"// fake\n")
    with pytest.raises(ValueError, match="^num_splits: kernel .* takes no num_splits: it was "
                                         "compiled without split-KV"):
        plain(q, k, v, num_splits=2)
    with pytest.raises(ValueError, match="^split_o: kernel .* takes no split_o"):
        plain(q, k, v, split_o=Tensor((1, 2, 8, 1000, 128), t.float32))
    assert launches(fake.log()) == []


@needs_fake
def test_split_kv_launch_ptrs(split_fake):
    fake = split_fake
    kern = Kernel(split_kv_manifest(), b"// fake split-kv kernel\n")
    ptrs = [(1 << 40) + 0x1000000 * i for i in range(8)]
    fake.log(SPLIT_KINDS)
    kern.launch_ptrs(*ptrs, device=0, B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000, num_splits=5)
    (launch,) = launches(fake.log())
    assert "grid 8 8 10 " in launch
    assert params(launch) == [hex(x) for x in ptrs] + "2 8 2 1000 3000 5".split()
    with pytest.raises(ValueError, match="num_splits: missing"):
        kern.launch_ptrs(*ptrs, device=0, B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000)
    with pytest.raises(ValueError, match=r"expected 8 pointers \(q_map, k_map, v_map, out, lse, "
                                         r"split_o, split_lse, split_counter\)"):
        kern.launch_ptrs(*ptrs[:5], device=0, B=2, Hq=8, Hkv=2, Nq=1000, Nk=3000, num_splits=1)


# ---------------------------------------------------------------------------
# The compiler's plan of num_splits ("num_splits_plan")


def test_floor_div_and_max_expressions():
    assert eval_expr({"floor_div": [7, 2]}, {}) == 3
    assert eval_expr({"floor_div": ["Nk", {"max": [1, "B"]}]}, {"Nk": 9, "B": 0}) == 9
    assert eval_expr({"max": [1, {"min": [0, 5]}]}, {}) == 1
    with pytest.raises(ValueError, match="floor_div by 0"):
        eval_expr({"floor_div": [1, 0]}, {})
    with pytest.raises(ManifestError, match="is not a size expression"):
        eval_expr({"floor_div": [1]}, {})


def test_num_splits_plan_only_with_split_kv():
    plan = {"max": [1, {"floor_div": ["num_sms", "B"]}]}
    check_manifest(dict(split_kv_manifest(), num_splits_plan=plan))
    plain = paged_manifest(Variant.parse("f16,d128,causal"))
    with pytest.raises(ManifestError, match="'num_splits_plan' without 'split_kv': true"):
        check_manifest(dict(plain, num_splits_plan=plan))
    with pytest.raises(ManifestError, match="num_splits_plan uses num_splits"):
        check_manifest(dict(split_kv_manifest(), num_splits_plan={"add": ["num_splits", 1]}))
    with pytest.raises(ManifestError, match="unknown size symbol 'S'"):
        check_manifest(dict(split_kv_manifest(), num_splits_plan="S"))


@needs_fake
def test_split_kv_default_is_the_plan(split_fake):
    # A manifest with a plan: num_splits defaults to it at the launch's sizes and the
    # device's SM count (the fake's 132), at least 1; an explicit num_splits wins.
    fake, t = split_fake, split_fake.torch
    plan = {"max": [1, {"floor_div": ["num_sms", {"mul": ["B", "Hq"]}]}]}
    kern = Kernel(dict(split_kv_manifest(), num_splits_plan=plan), b"// fake\n")
    q, k, v = fake_qkv(t, B=2, Hq=8)
    assert kern.num_splits_plan({"B": 2, "Hq": 8}) == 132 // 16
    fake.log(SPLIT_KINDS)
    kern(q, k, v)
    kern(q, k, v, num_splits=3)
    first, second = launches(fake.log())
    assert params(first)[-1] == "8" and "grid 8 8 16 " in first
    assert params(second)[-1] == "3"
    q, k, v = fake_qkv(t, B=20, Hq=8)
    fake.log(SPLIT_KINDS)
    kern(q, k, v)
    assert params(launches(fake.log())[0])[-1] == "1"


@pytest.mark.skipif(not __import__("fa").compiler_available(), reason="needs the compiler")
def test_compiled_plan_is_fa_decode_plan():
    # The compiler's num_splits_plan and fa.decode.plan_kernel_splits (what fa.attention
    # asks for) agree on the packed decoding launch [B, Hkv, G * Nq, D] wherever the
    # packed rewrite applies.
    import fa
    from fa.decode import plan_kernel_splits
    kern = fa.compile("f16,d128,full,lse,split-kv=true", chip="sm_90a")
    runtime = Kernel(kern.manifest, kern.ptx.encode() if isinstance(kern.ptx, str) else kern.ptx)
    assert runtime.split_kv and runtime._split_plan is not None
    for B in (1, 2, 8, 17, 64):
        for Hq, Hkv in ((32, 8), (8, 8), (64, 1)):
            for Nk in (1, 127, 128, 300, 4096, 32749, 131072):
                for sms in (132, 114, 16):
                    want = plan_kernel_splits(B, Hq, Hkv, 1, Nk, sms)
                    got = runtime.num_splits_plan(
                        {"B": B, "Hq": Hkv, "Hkv": Hkv, "Nq": Hq // Hkv, "Nk": Nk}, num_sms=sms)
                    assert got == want, (B, Hq, Hkv, Nk, sms)
