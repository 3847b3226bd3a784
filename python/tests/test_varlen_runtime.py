"""fa_runtime on kernels of packed variable-length sequences ("varlen": true;
pure Python, no torch, no GPU): the manifest's new keys ("varlen",
"varlen_layout"), parameters (cu_seqlens_q, cu_seqlens_k, the size
max_seqlen_q), the `add` expression and the max_seqlen_q symbol,
check_launch's sizes (B from cu_seqlens_q, the others from q and k in either
layout: thd [T, H, D], htd [1, H, T, D]) and every contract error on
hand-written manifests of the compiler's contract (conftest.varlen_manifest),
the grid and tensor maps at those sizes, the outputs' shapes, launch_ptrs'
sizes, and the checked mode's host-side checks (check_cu_seqlens); and
compiled kernels of both layouts against the contract.
test_varlen_fake.py launches them."""
import copy

import pytest

from fa import Variant
from fa_runtime import (VARLEN_LAYOUTS, Kernel, ManifestError, TensorDesc, check_cu_seqlens,
                        check_launch, check_manifest)
from fa_runtime.manifest import (SYMBOLS, check_sizes, compile_expr, contiguous_strides,
                                 eval_expr, output_shapes, packed_sizes, takes_kv_lens,
                                 takes_varlen, tensor_map_args, varlen_layout)

from conftest import (broken_manifest, drop_param, needs_compiler, paged_manifest, param_of,
                      tensor, varlen_manifest)

LAYOUTS = ("thd", "htd")


def packed_shape(layout, H, T, D=None):
    """A packed tensor's shape in `layout`: q, k, v, out [T, H, D] (thd) or
    [1, H, T, D] (htd); without D, lse's: [H, T] or [1, H, T]."""
    if layout == "thd":
        return (T, H, D) if D is not None else (H, T)
    return (1, H, T, D) if D is not None else (1, H, T)


def varlen_tensors(B=3, Hq=8, Hkv=2, Tq=1000, Tk=700, D=128, layout="thd", **over):
    t = {"q": tensor(packed_shape(layout, Hq, Tq, D)),
         "k": tensor(packed_shape(layout, Hkv, Tk, D)),
         "v": tensor(packed_shape(layout, Hkv, Tk, D)),
         "cu_seqlens_q": tensor((B + 1,), "i32"), "cu_seqlens_k": tensor((B + 1,), "i32")}
    t.update(over)
    return t


def test_manifests_are_valid():
    for layout in LAYOUTS:
        for lse in (False, True):
            m = varlen_manifest(lse=lse, layout=layout)
            check_manifest(m)
            assert takes_varlen(m) and not takes_kv_lens(m)
            assert varlen_layout(m) == layout
    assert varlen_layout(varlen_manifest()) == "thd"  # the compiler's default
    assert set(VARLEN_LAYOUTS) == set(LAYOUTS)
    plain = paged_manifest(Variant.parse("f16,d128,causal"))
    check_manifest(plain)
    assert not takes_varlen(plain) and varlen_layout(plain) is None
    assert "max_seqlen_q" in SYMBOLS
    assert eval_expr({"add": ["B", 1]}, {"B": 3}) == 4
    assert eval_expr({"add": [{"mul": ["B", 2]}, 1, "Nq"]}, {"B": 3, "Nq": 10}) == 17
    for bad in ({"add": []}, {"add": 1}, {"add": ["B", True]}):
        with pytest.raises(ManifestError, match="is not a size expression"):
            compile_expr(bad)


def test_malformed_varlen_manifests():
    broken, drop, param = broken_manifest(varlen_manifest), drop_param, param_of

    def plain():
        return paged_manifest(Variant.parse("f16,d128,causal"))
    cases = [
        (broken(lambda m: m.pop("varlen")), "no cu_seqlens_q parameter without 'varlen': true"),
        (broken(lambda m: m.update(varlen=False)), "no cu_seqlens_q parameter without"),
        (broken(lambda m: m.update(varlen="yes")), "'varlen' is 'yes'"),
        (broken(lambda m: m.update(varlen=1)), "'varlen' is 1"),
        (broken(drop("cu_seqlens_k")), "a cu_seqlens_k parameter missing with 'varlen': true"),
        (broken(drop("cu_seqlens_q")), "a cu_seqlens_q parameter missing with 'varlen': true"),
        (broken(lambda m: param("cu_seqlens_q")(m).update(dtype="i64")),
         "cu_seqlens_q has dtype i64, not i32"),
        (broken(drop("max_seqlen_q")), "the i32 size max_seqlen_q goes with 'varlen': true"),
        (broken(lambda m: param("max_seqlen_q")(m).update(name="max_seqlen")),
         "i32 parameter 'max_seqlen' is no launch size"),
        (broken(lambda m: param("cu_seqlens_k")(m).update(shape=[{"add": []}])),
         r"params\[5\].shape\[0\]: .* is not a size expression"),
        (broken(lambda m: param("cu_seqlens_k")(m).update(shape=[{"sum": ["B", 1]}])),
         "is not a size expression"),
        # The layout: required with "varlen", one the runtime knows, and the contracts its.
        (broken(lambda m: m.pop("varlen_layout")),
         r"no 'varlen_layout' with 'varlen': true \(the memory layout of the packed tensors: "
         r"thd or htd\)"),
        (broken(lambda m: m.update(varlen_layout=None)), "no 'varlen_layout' with 'varlen'"),
        (broken(lambda m: m.update(varlen_layout="bshd")),
         r"'varlen_layout' is 'bshd', not one this runtime knows \(thd, htd\)"),
        (broken(lambda m: m.update(varlen_layout="THD")), "'varlen_layout' is 'THD'"),
        (broken(lambda m: m.update(varlen_layout=1)), "'varlen_layout' is 1, not one"),
        (broken(lambda m: m.update(varlen_layout="htd")),
         r"q has the shape \['Nq', 'Hq', 'D'\], not \[1, 'Hq', 'Nq', 'D'\], the contract of "
         r"varlen_layout htd"),
        (broken(lambda m: m.update(varlen_layout="thd"), varlen_manifest(layout="htd")),
         r"q has the shape \[1, 'Hq', 'Nq', 'D'\], not \['Nq', 'Hq', 'D'\], the contract of "
         r"varlen_layout thd"),
        (broken(lambda m: param("lse")(m).update(shape=[1, "Hq", "Nq"]),
                varlen_manifest(lse=True)),
         r"lse has the shape \[1, 'Hq', 'Nq'\], not \['Hq', 'Nq'\], the contract of "
         r"varlen_layout thd"),
        (broken(lambda m: param("out")(m).update(shape=["Hq", "Nq", "D"])),
         r"out has the shape \['Hq', 'Nq', 'D'\], not \['Nq', 'Hq', 'D'\]"),
        (broken(lambda m: param("k_map")(m).update(shape=["Nk", "Hkv", "D"]),
                varlen_manifest(layout="htd")),
         r"k has the shape \['Nk', 'Hkv', 'D'\], not \[1, 'Hkv', 'Nk', 'D'\], the contract "
         r"of varlen_layout htd"),
        # The varlen parts in a kernel without "varlen".
        (broken(lambda m: m["params"].append({"name": "max_seqlen_q", "type": "i32"}), plain()),
         "the i32 size max_seqlen_q goes with 'varlen': true"),
        (broken(lambda m: m["params"].insert(4, {
            "name": "cu_seqlens_q", "tensor": "cu_seqlens_q", "type": "ptr", "dtype": "i32",
            "shape": [{"add": ["B", 1]}], "align_bytes": 4}), plain()),
         "no cu_seqlens_q parameter without 'varlen': true"),
        (broken(lambda m: m.update(grid=[{"ceil_div": ["max_seqlen_q", 128]}, "Hq", "B"]),
                plain()), r"grid\[0\]: the size symbol max_seqlen_q without 'varlen': true"),
        (broken(lambda m: m["tensor_maps"][0].update(dims=["D", "max_seqlen_q", "Hq"]), plain()),
         r"tensor map q_map.dims\[1\]: the size symbol max_seqlen_q without"),
        (broken(lambda m: m.update(varlen_layout="thd"), plain()),
         "'varlen_layout' 'thd' without 'varlen': true"),
    ]
    for m, match in cases:
        with pytest.raises(ManifestError, match=match):
            check_manifest(m)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_varlen_sizes(layout):
    m = varlen_manifest(layout=layout)
    plan = check_launch(m, varlen_tensors(layout=layout))
    # B counts sequences (cu_seqlens_q has B + 1 offsets), Nq and Nk are the packed lengths.
    assert plan.sizes == dict(B=3, Hq=8, Hkv=2, Nq=1000, Nk=700)
    assert plan.device == 0 and plan.copies == () and not plan.empty
    assert packed_sizes(layout, packed_shape(layout, 8, 1000, 128),
                        packed_shape(layout, 2, 700, 128)) == dict(Hq=8, Hkv=2, Nq=1000, Nk=700)
    # The tensor maps: [D, N, H] over the packed tensors. thd: a row (token) holds its H
    # heads, so rows are H * D elements apart and the head planes D (the strides are not
    # increasing, and go to cuTensorMapEncodeTiled as they are); htd: the H planes of
    # the batch-1 tensors, rows D apart, planes N * D.
    env = dict(plan.sizes, D=128)
    q_map, k_map, v_map = (tensor_map_args(t, env) for t in m["tensor_maps"])
    assert q_map["dims"] == [128, 1000, 8]
    assert k_map["dims"] == v_map["dims"] == [128, 700, 2]
    if layout == "thd":
        assert q_map["strides_bytes"] == [8 * 128 * 2, 128 * 2]
        assert k_map["strides_bytes"] == v_map["strides_bytes"] == [2 * 128 * 2, 128 * 2]
    else:
        assert q_map["strides_bytes"] == [256, 1000 * 256]
        assert k_map["strides_bytes"] == v_map["strides_bytes"] == [256, 700 * 256]
    # The grid: query tiles of the longest sequence, heads, sequences.
    kern = Kernel(m, b"")
    assert kern.varlen and kern.varlen_layout == layout
    assert kern.grid(dict(plan.sizes, max_seqlen_q=300)) == [3, 8, 3]
    assert kern.grid(dict(plan.sizes, max_seqlen_q=0)) == [0, 8, 3]
    # What the runtime allocates: out and lse in the layout.
    assert output_shapes(m, plan.sizes) == (packed_shape(layout, 8, 1000, 128),
                                            packed_shape(layout, 8, 1000))
    # With lse: out and lse given in the layout.
    m2 = varlen_manifest(dtype="bf16", head_dim=64, lse=True, layout=layout)
    t = varlen_tensors(B=1, D=64, layout=layout)
    t = {n: TensorDesc(x.shape, "bf16" if x.dtype == "f16" else x.dtype, x.device, x.strides,
                       x.data_ptr) for n, x in t.items()}
    t["out"] = tensor(packed_shape(layout, 8, 1000, 64), "bf16")
    t["lse"] = tensor(packed_shape(layout, 8, 1000), "f32")
    assert check_launch(m2, t).sizes == dict(B=1, Hq=8, Hkv=2, Nq=1000, Nk=700)
    # Non-contiguous offsets are copied, like q, k, v; out is not (the kernel writes it).
    t2 = varlen_tensors(cu_seqlens_k=tensor((4,), "i32", strides=(2,)), layout=layout)
    assert check_launch(m, t2).copies == ("cu_seqlens_k",)
    q = packed_shape(layout, 8, 1000, 128)
    strided = tuple(2 * s for s in contiguous_strides(q)[:-1]) + (1,)  # every other row
    assert check_launch(m, varlen_tensors(layout=layout, q=tensor(q, strides=strided))).copies \
        == ("q",)
    with pytest.raises(ValueError, match="out: not contiguous"):
        check_launch(m, varlen_tensors(layout=layout, out=tensor(q, strides=strided)))
    # No sequence (one offset, 0): nothing to compute, whatever q holds.
    assert check_launch(m, varlen_tensors(B=0, layout=layout)).empty
    assert check_launch(m, varlen_tensors(B=0, Tq=0, Tk=0, layout=layout)).sizes["B"] == 0
    # Sequences without rows: nothing to compute either.
    assert check_launch(m, varlen_tensors(Tq=0, layout=layout)).empty


def test_output_shapes_of_the_other_kernels():
    m = paged_manifest(Variant.parse("f16,d128,causal,lse"))
    assert output_shapes(m, dict(B=2, Hq=8, Hkv=2, Nq=100, Nk=300)) == ((2, 8, 100, 128),
                                                                       (2, 8, 100))
    with pytest.raises(ValueError, match="varlen_layout 'bshd' is not one of thd, htd"):
        packed_sizes("bshd", (1, 2, 3), (1, 2, 3))


# Errors of either layout: the offsets and the sizes that do not depend on it.
_EITHER = [
    (dict(cu_seqlens_q=None), "cu_seqlens_q: missing: kernel fa_f16_d128_full_varlen_kernel "
                              r"takes packed variable-length sequences \(cu_seqlens_q \[B \+ 1\] "
                              r"int32\)"),
    (dict(cu_seqlens_k=None), r"cu_seqlens_k: missing: kernel .* takes packed variable-length "
                              r"sequences \(cu_seqlens_k \[B \+ 1\] int32\)"),
    (dict(cu_seqlens_q=tensor((4,), "i64")), r"cu_seqlens_q: dtype i64, but kernel .* takes i32 "
                                             r"\(cu_seqlens_q.to\(torch.int32\)\)"),
    (dict(cu_seqlens_k=tensor((4,), "i64")), r"cu_seqlens_k: .*\(cu_seqlens_k.to\(torch.int32"),
    (dict(cu_seqlens_k=tensor((4,), "f32")), r"cu_seqlens_k: dtype f32, but kernel .* takes "
                                             r"i32$"),
    (dict(cu_seqlens_k=tensor((3,), "i32")), r"cu_seqlens_k: shape\[0\] is 3, but 4 \(B \+ 1: "
                                             r"B = 3 sequences from cu_seqlens_q.shape\[0\] - "
                                             r"1\) \(shape \[3\], expected \[\{'add': \['B', "
                                             r"1\]\}\]\)$"),
    (dict(cu_seqlens_q=tensor((4, 1), "i32")), "cu_seqlens_q: rank 2"),
    (dict(cu_seqlens_q=tensor((0,), "i32")), r"cu_seqlens_q: shape \[0\]: the offsets of B "
                                             r"sequences are B \+ 1 entries"),
    (dict(cu_seqlens_k=tensor((4,), "i32", device="cuda:1")), "cu_seqlens_k: on cuda:1, but q "
                                                              "is on cuda:0"),
    (dict(cu_seqlens_q=tensor((4,), "i32", device="cpu")), "cu_seqlens_q: on device 'cpu', not "
                                                           "on a CUDA device"),
    (dict(cu_seqlens_q=TensorDesc((4,), "i32", "cuda:0", (1,), 0x7f0000000002)),
     "cu_seqlens_q: address 0x7f0000000002 is not 4-byte aligned"),
    (dict(cu_seqlens_q=tensor((2**31 + 1,), "i32"), cu_seqlens_k=tensor((2**31 + 1,), "i32")),
     "cu_seqlens_q: B = 2147483648 is not an i32 size"),
    (dict(cu_seqlens_q=tensor((4,), "i32", strides=(2,))), None),  # copied: no error
]
_THD = r" \(varlen_layout thd\): kernel fa_f16_d128_full_varlen_kernel takes its sequences " \
    r"packed token-major, split by cu_seqlens_q and cu_seqlens_k$"
_HTD = r" \(varlen_layout htd\): kernel fa_f16_d128_full_varlen_kernel takes its sequences " \
    r"packed into one batch row, split by cu_seqlens_q and cu_seqlens_k$"
# Errors of the packed tensors, which name the layout.
_BY_LAYOUT = {
    "thd": [
        # [1, H, T, D] (the htd layout) to a thd kernel
        (dict(q=tensor((1, 8, 1000, 128))), r"q: rank 4 \(shape \[1, 8, 1000, 128\]\), but the "
                                            r"kernel takes rank 3 \[Nq, Hq, D\]; q must be "
                                            r"\[Tq, Hq, D\]" + _THD),
        (dict(k=tensor((1, 2, 700, 128))), r"k: rank 4 .*; k must be \[Tk, Hkv, D\]" + _THD),
        (dict(out=tensor((1, 8, 1000, 128))), r"out: rank 4 .*; out must be \[Tq, Hq, D\]" + _THD),
        # [H, T, D] out
        (dict(out=tensor((8, 1000, 128))), r"out: shape\[0\] is 8, but Nq = 1000 from "
                                           r"q.shape\[0\] \(shape \[8, 1000, 128\], expected "
                                           r"\[Nq, Hq, D\]\); out must be \[Tq, Hq, D\]" + _THD),
        (dict(v=tensor((600, 2, 128))), r"v: shape\[0\] is 600, but Nk = 700 from k.shape\[0\]"),
        (dict(v=tensor((700, 4, 128))), r"v: shape\[1\] is 4, but Hkv = 2 from k.shape\[1\]"),
        (dict(q=tensor((1000, 8, 64))), r"q: shape\[2\] is 64, but D = 128 from the head dim"),
        (dict(k=tensor((0, 2, 128)), v=tensor((0, 2, 128))), r"k: no keys \(Nk = 0\)"),
        (dict(q=tensor((1000, 7, 128))), "Hkv = 2 key/value heads do not divide Hq = 7"),
        (dict(q=tensor((1000, 8, 128), "bf16")), "q: dtype bf16, but kernel .* takes f16"),
        (dict(q=tensor((1000, 8, 128), device="cuda:1")), "k: on cuda:0, but q is on cuda:1"),
        (dict(out=tensor((1000, 8, 128), strides=(2048, 128, 1))), "out: not contiguous"),
    ],
    "htd": [
        (dict(q=tensor((3, 8, 1000, 128))), r"q: shape\[0\] is 3, but 1 \(shape \[3, 8, 1000, "
                                            r"128\], expected \[1, Hq, Nq, D\]\); q must be "
                                            r"\[1, Hq, Tq, D\]" + _HTD),
        # [T, H, D] (the thd layout) to an htd kernel
        (dict(q=tensor((1000, 8, 128))), r"q: rank 3 \(shape \[1000, 8, 128\]\), but the kernel "
                                         r"takes rank 4 \[1, Hq, Nq, D\]; q must be "
                                         r"\[1, Hq, Tq, D\]" + _HTD),
        (dict(k=tensor((2, 2, 700, 128))), r"k: shape\[0\] is 2, but 1 .*; k must be "
                                           r"\[1, Hkv, Tk, D\]" + _HTD),
        (dict(out=tensor((3, 8, 1000, 128))), r"out: shape\[0\] is 3, but 1"),
        (dict(v=tensor((1, 2, 600, 128))), r"v: shape\[2\] is 600, but Nk = 700 from "
                                           r"k.shape\[2\]"),
        (dict(k=tensor((1, 2, 0, 128)), v=tensor((1, 2, 0, 128))), r"k: no keys \(Nk = 0\)"),
        (dict(q=tensor((1, 7, 1000, 128))), "Hkv = 2 key/value heads do not divide Hq = 7"),
        (dict(q=tensor((1, 8, 1000, 128), "bf16")), "q: dtype bf16, but kernel .* takes f16"),
        (dict(q=tensor((1, 8, 1000, 128), device="cuda:1")), "k: on cuda:0, but q is on cuda:1"),
        (dict(out=tensor((1, 8, 1000, 128), strides=(0, 128, 1024, 1))), "out: not contiguous"),
    ],
}


@pytest.mark.parametrize("layout,over,match", [
    (layout, over, match) for layout in LAYOUTS for over, match in _EITHER + _BY_LAYOUT[layout]])
def test_varlen_launch_errors(layout, over, match):
    m, t = varlen_manifest(layout=layout), varlen_tensors(layout=layout, **over)
    if match is None:
        check_launch(m, t)
        return
    with pytest.raises(ValueError, match=match):
        check_launch(m, t)


def test_given_to_a_kernel_without_them():
    plain = paged_manifest(Variant.parse("f16,d128,causal"))
    t = {"q": tensor((2, 8, 100, 128)), "k": tensor((2, 2, 100, 128)),
         "v": tensor((2, 2, 100, 128))}
    for name in ("cu_seqlens_q", "cu_seqlens_k"):
        with pytest.raises(ValueError, match=f"{name}: kernel .* takes no {name}: it was "
                                             f"compiled without packed variable-length "
                                             f"sequences"):
            check_launch(plain, dict(t, **{name: tensor((3,), "i32")}))
    with pytest.raises(ValueError, match="kv_lens: kernel fa_f16_d128_full_varlen_kernel takes "
                                         "no kv_lens: it was compiled without per-sequence key "
                                         "lengths"):
        check_launch(varlen_manifest(), varlen_tensors(kv_lens=tensor((3,), "i32")))


def test_launch_ptrs_sizes():
    m = varlen_manifest()
    sizes = dict(B=3, Hq=8, Hkv=2, Nq=1000, Nk=700, max_seqlen_q=700)
    assert check_sizes(m, sizes) == sizes
    assert check_sizes(m, dict(sizes, max_seqlen_q=0))["max_seqlen_q"] == 0
    with pytest.raises(ValueError, match="max_seqlen_q: missing"):
        check_sizes(m, {k: v for k, v in sizes.items() if k != "max_seqlen_q"})
    with pytest.raises(ValueError, match="max_seqlen_q = -1 is not an i32 size"):
        check_sizes(m, dict(sizes, max_seqlen_q=-1))
    with pytest.raises(ValueError, match="max_seqlen_q = 2.0 is not an i32 size"):
        check_sizes(m, dict(sizes, max_seqlen_q=2.0))
    with pytest.raises(ValueError, match="kernel .* has no size max_seqlen_q"):
        check_sizes(paged_manifest(Variant.parse("f16,d128,causal")), sizes)


def test_check_cu_seqlens():
    # Sequence 1 is empty (no query rows, or no keys): fine.
    assert check_cu_seqlens([0, 300, 300, 1000], [0, 100, 400, 700], 1000, 700) == 700
    assert check_cu_seqlens([0, 300, 300, 1000], [0, 100, 100, 700], 1000, 700, 700) == 700
    assert check_cu_seqlens([0, 300, 300, 1000], [0, 100, 100, 700], 1000, 700, 2**31 - 1) == 700
    assert check_cu_seqlens([0], [0], 0, 0) == 0  # no sequence
    assert check_cu_seqlens([0, 0], [0, 5], 0, 5, 0) == 0
    cases = [
        (([3, 300, 300, 1000], [0, 100, 400, 700], 1000, 700),
         r"cu_seqlens_q\[0\] = 3: the offsets must start at 0 \(sequence 0 starts at the first "
         r"of the packed query rows\)"),
        (([0, 300, 300, 1000], [-1, 100, 400, 700], 1000, 700),
         r"cu_seqlens_k\[0\] = -1: the offsets must start at 0 .*packed keys"),
        (([0, 300, 200, 1000], [0, 100, 400, 700], 1000, 700),
         r"cu_seqlens_q\[2\] = 200 < cu_seqlens_q\[1\] = 300: sequence 1 would have -100 query "
         r"rows \(the offsets must be nondecreasing\)"),
        (([0, 300, 300, 1000], [0, 100, 400, 399], 1000, 399),
         r"cu_seqlens_k\[3\] = 399 < cu_seqlens_k\[2\] = 400: sequence 2 would have -1 keys"),
        (([0, 300, 300, 900], [0, 100, 400, 700], 1000, 700),
         r"cu_seqlens_q\[3\] = 900: the offsets must end at Nq = 1000, the packed query rows "
         r"\(query rows 900 .. 999 belong to no sequence\)"),
        (([0, 300, 300, 1001], [0, 100, 400, 700], 1000, 700),
         r"cu_seqlens_q\[3\] = 1001: the offsets must end at Nq = 1000, the packed query rows "
         r"\(sequence 2 ends past them\)"),
        (([0, 300, 300, 1000], [0, 100, 400, 600], 1000, 700),
         r"cu_seqlens_k\[3\] = 600: the offsets must end at Nk = 700, the packed keys \(keys "
         r"600 .. 699 belong to no sequence\)"),
        (([0], [0], 5, 0), r"cu_seqlens_q\[0\] = 0: the offsets must end at Nq = 5, the packed "
                           r"query rows \(query rows 0 .. 4 belong to no sequence\)"),
        (([0, 300, 300, 1000], [0, 100, 400, 700], 1000, 700, 699),
         r"max_seqlen_q = 699, but sequence 2 has 700 query rows \(cu_seqlens_q\[3\] - "
         r"cu_seqlens_q\[2\]\): the kernel would leave its rows past the first 699 unwritten"),
        (([0, 1, 1], [0, 5, 5], 1, 5, 0), r"max_seqlen_q = 0, but sequence 0 has 1 query rows"),
    ]
    for args, match in cases:
        with pytest.raises(ValueError, match=match):
            check_cu_seqlens(*args)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_manifest_copy_unchanged_by_checks(layout):
    m = varlen_manifest(lse=True, layout=layout)
    before = copy.deepcopy(m)
    check_manifest(m)
    check_launch(m, varlen_tensors(layout=layout))
    Kernel(m, b"").grid(dict(B=3, Hq=8, Hkv=2, Nq=1000, Nk=700, max_seqlen_q=5))
    assert m == before


# ---------------------------------------------------------------------------
# Compiled kernels against the contract: the default layout (thd) and
# fa-to-ptx{varlen-layout=htd}. The op is the same: its tensors are [1, H, T, D].

VARLEN_IR = """func.func @packed(%q: tensor<1x8x?x128xf16>, %k: tensor<1x2x?x128xf16>,
    %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x8x?x128xf16>, tensor<1x8x?xf32>) {
  %o, %l = fa.attention %q, %k, %k varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) ATTRS
      : tensor<1x8x?x128xf16>, tensor<1x2x?x128xf16>, tensor<1x2x?x128xf16>
      -> (tensor<1x8x?x128xf16>, tensor<1x8x?xf32>)
  return %o, %l : tensor<1x8x?x128xf16>, tensor<1x8x?xf32>
}
"""


@needs_compiler
@pytest.mark.parametrize("layout", [None, "thd", "htd"])
@pytest.mark.parametrize("causal", [False, True])
def test_compiled_kernel_matches_the_contract(causal, layout):
    import fa
    ir = VARLEN_IR.replace("ATTRS", "{causal}" if causal else "")
    # None: the compiler's default layout, thd.
    options = {} if layout is None else {"varlen_layout": layout}
    m = fa.compile(ir, chip="sm_90a", **options).manifest
    check_manifest(m)
    layout = layout or "thd"
    hand = varlen_manifest(causal=causal, lse=True, layout=layout)
    assert takes_varlen(m) and m["varlen_layout"] == layout

    def key(p):
        return (p["name"], p["type"], p.get("tensor"), p.get("dtype"), p.get("shape"))
    assert [key(p) for p in m["params"]] == [key(p) for p in hand["params"]]
    for p in m["params"]:
        if p["name"] in ("cu_seqlens_q", "cu_seqlens_k"):
            assert p["align_bytes"] == 4
    # The grid and the tensor maps' dims and strides, compared by value (the
    # expressions may be spelled differently) at sizes where every symbol differs.
    env = dict(B=3, Hq=8, Hkv=2, Nq=1001, Nk=703, max_seqlen_q=517, D=128)
    assert [eval_expr(e, env) for e in m["grid"]] == [eval_expr(e, env) for e in hand["grid"]]

    def maps(man):
        return [(t["param"], t["rank"], [eval_expr(e, env) for e in t["dims"]],
                 [eval_expr(e, env) for e in t["strides_bytes"]]) for t in man["tensor_maps"]]
    assert maps(m) == maps(hand)
    # And as the runtime encodes them (the strides as the manifest gives them).
    q_map = tensor_map_args(m["tensor_maps"][0], env)
    assert q_map["dims"] == [128, 1001, 8]
    assert q_map["strides_bytes"] == ([8 * 128 * 2, 128 * 2] if layout == "thd" else
                                      [128 * 2, 1001 * 128 * 2])
    sizes = dict(B=3, Hq=8, Hkv=2, Nq=1001, Nk=703)
    assert output_shapes(m, sizes) == (packed_shape(layout, 8, 1001, 128),
                                       packed_shape(layout, 8, 1001))
    plan = check_launch(m, {"q": tensor(packed_shape(layout, 8, 1001, 128)),
                            "k": tensor(packed_shape(layout, 2, 703, 128)),
                            "v": tensor(packed_shape(layout, 2, 703, 128)),
                            "cu_seqlens_q": tensor((4,), "i32"),
                            "cu_seqlens_k": tensor((4,), "i32")})
    assert plan.sizes == sizes


VARLEN_GRAD_IR = """
func.func @vgrad(%q: tensor<1x8x?x128xbf16>, %k: tensor<1x2x?x128xbf16>,
                 %v: tensor<1x2x?x128xbf16>, %o: tensor<1x8x?x128xbf16>,
                 %lse: tensor<1x8x?xf32>, %do: tensor<1x8x?x128xbf16>,
                 %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x8x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x8x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?xf32>, tensor<1x8x?x128xbf16> -> tensor<1x8x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x8x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>
}
"""


@needs_compiler
@pytest.mark.parametrize("layout", [None, "htd"])
def test_compiled_varlen_backward_kernel(layout):
    """The varlen backward kernel (sm_90a): token-major (thd, the default, as the
    forward's) or the batch-1 planes (htd), a grid over the longest sequence's key blocks
    (max_seqlen_k), row kernels over one batch, and a launch checked as the forward's (B
    from cu_seqlens_q)."""
    import fa
    options = {} if layout is None else {"varlen_layout": layout}
    m = fa.compile(VARLEN_GRAD_IR, chip="sm_90a", **options).manifest
    check_manifest(m)
    layout = layout or "thd"
    assert m["op"] == "attention_grad" and takes_varlen(m) and m["varlen_layout"] == layout
    sizes = [p["name"] for p in m["params"] if p["type"] == "i32"]
    assert sizes == ["B", "Hq", "Hkv", "Nq", "Nk", "max_seqlen_k"]
    env = dict(B=3, Hq=8, Hkv=2, Nq=1001, Nk=703, max_seqlen_k=300, D=128)
    assert [eval_expr(e, env) for e in m["grid"]] == [3, 2, 3]  # ceil(300 / 128), Hkv, B
    for aux in m["auxiliary_kernels"]:
        assert [eval_expr(e, env) for e in aux["grid"]] == [16, 8, 1]  # ceil(1001 / 64)
    dims = {t["param"]: [eval_expr(e, env) for e in t["dims"]] for t in m["tensor_maps"]}
    assert dims["q_map"] == [128, 1001, 8] and dims["k_map"] == [128, 703, 2]
    assert dims["dq_accum_map"] == [128, 1001, 8]
    strides = {t["param"]: [eval_expr(e, env) for e in t["strides_bytes"]]
               for t in m["tensor_maps"]}
    # thd: a token's heads adjacent (rows H * D apart); dq_accum stays planes.
    assert strides["q_map"] == ([8 * 256, 256] if layout == "thd" else [256, 1001 * 256])
    assert strides["dq_accum_map"] == [512, 1001 * 512]
    q, kv = packed_shape(layout, 8, 1001, 128), packed_shape(layout, 2, 703, 128)
    lse = packed_shape(layout, 8, 1001)
    for aux in m["auxiliary_kernels"]:
        shapes = {p["name"]: p["shape"] for p in aux["params"] if p["type"] != "i32"}
        assert shapes["dq_accum"] == [1, "Hq", "Nq", "D"]
        for name in ("do", "out", "dq"):
            if name in shapes:
                assert shapes[name] == VARLEN_LAYOUTS[layout].contracts["q"]
    plan = check_launch(m, {"q": tensor(q, "bf16"), "k": tensor(kv, "bf16"),
                            "v": tensor(kv, "bf16"), "do": tensor(q, "bf16"),
                            "o": tensor(q, "bf16"), "lse": tensor(lse, "f32"),
                            "cu_seqlens_q": tensor((4,), "i32"),
                            "cu_seqlens_k": tensor((4,), "i32")})
    assert plan.sizes == dict(B=3, Hq=8, Hkv=2, Nq=1001, Nk=703)
    with pytest.raises(ValueError, match="q: "):
        check_launch(m, {"q": tensor((3, 8, 1001, 128), "bf16"), "k": tensor(kv, "bf16"),
                         "v": tensor(kv, "bf16"), "do": tensor(q, "bf16"),
                         "lse": tensor(lse, "f32"), "cu_seqlens_q": tensor((4,), "i32"),
                         "cu_seqlens_k": tensor((4,), "i32")})
    # A backward kernel's varlen size is max_seqlen_k, its layout htd.
    bad = copy.deepcopy(m)
    next(p for p in bad["params"] if p["name"] == "max_seqlen_k")["name"] = "max_seqlen_q"
    with pytest.raises(ManifestError, match="max_seqlen_k goes with 'varlen'"):
        check_manifest(bad)
    bad = copy.deepcopy(m)
    bad["varlen_layout"] = "htd" if layout == "thd" else "thd"
    with pytest.raises(ManifestError, match="the contract of varlen_layout"):
        check_manifest(bad)


def test_check_cu_seqlens_max_seqlen_k():
    assert check_cu_seqlens([0, 3, 10], [0, 5, 6], 10, 6, max_seqlen_k=5) == 7
    with pytest.raises(ValueError, match="max_seqlen_k = 4, but sequence 0 has 5 keys"):
        check_cu_seqlens([0, 3, 10], [0, 5, 6], 10, 6, max_seqlen_k=4)
