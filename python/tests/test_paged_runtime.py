"""fa_runtime on kernels with per-sequence key lengths and paged KV caches
(pure Python, no torch, no GPU): the manifest's new keys, parameters and size
symbols (num_pages, max_pages), check_launch's sizes and every contract error
on hand-written manifests of the compiler's contract (conftest.paged_manifest),
launch_ptrs' sizes, and the checked mode's host-side checks
(check_index_values)."""
import copy

import pytest

from fa import Variant
from fa_runtime import ManifestError, TensorDesc, check_index_values, check_launch, check_manifest
from fa_runtime.manifest import PAGED_SIZE_NAMES, check_sizes, eval_expr, tensor_map_args

from conftest import needs_compiler, paged_manifest, tensor


def manifest(spec, chip="sm_90a"):
    return paged_manifest(Variant.parse(spec, chip=chip))


PAGED = "f16,d128,causal,kv_lens,page=16"


def paged_tensors(B=4, Hq=32, Hkv=8, Nq=1, P=64, S=16, M=10, D=128, **over):
    t = {"q": tensor((B, Hq, Nq, D)), "k": tensor((P, Hkv, S, D)), "v": tensor((P, Hkv, S, D)),
         "kv_lens": tensor((B,), "i32"), "page_table": tensor((B, M), "i32")}
    t.update(over)
    return t


@pytest.mark.parametrize("chip", ["sm_90a", "sm_80"])
def test_manifests_are_valid(chip):
    for spec in (PAGED, "bf16,d64,full,lse,page=64", "f16,d128,full,lse,kv_lens"):
        check_manifest(manifest(spec, chip))
    assert "num_pages" in PAGED_SIZE_NAMES and "max_pages" in PAGED_SIZE_NAMES
    assert eval_expr({"mul": ["num_pages", "Hkv"]}, {"num_pages": 3, "Hkv": 8}) == 24


def test_malformed_paged_manifests():
    def broken(f, spec=PAGED):
        m = manifest(spec)
        f(m)
        return m

    def drop(name):
        return lambda m: m["params"].remove(next(p for p in m["params"] if p["name"] == name))
    cases = [
        (broken(lambda m: m.pop("page_size")), "no page_table parameter without 'page_size'"),
        (broken(lambda m: m.pop("kv_lens")), "no kv_lens parameter without 'kv_lens'"),
        (broken(drop("page_table")), "a page_table parameter missing with 'page_size'"),
        (broken(drop("kv_lens")), "a kv_lens parameter missing with 'kv_lens': true"),
        (broken(drop("max_pages")), "num_pages and max_pages go with 'page_size'"),
        (broken(lambda m: m.update(page_size=24)), "'page_size' is 24"),
        (broken(lambda m: m.update(page_size=True)), "'page_size' is True"),
        (broken(lambda m: m.update(kv_lens="yes")), "'kv_lens' is 'yes'"),
        (broken(lambda m: m["params"][4].update(dtype="i64")), "kv_lens has dtype i64"),
        (broken(lambda m: m["params"][5].update(dtype="f32")), "page_table has dtype f32"),
        (broken(lambda m: m["params"].append({"name": "pages", "type": "i32"})),
         "i32 parameter 'pages' is no launch size"),
        (broken(lambda m: m["params"].extend([{"name": "num_pages", "type": "i32"},
                                              {"name": "max_pages", "type": "i32"}]),
                "f16,d128,full,kv_lens"), "num_pages and max_pages go with 'page_size'"),
    ]
    for m, match in cases:
        with pytest.raises(ManifestError, match=match):
            check_manifest(m)


def test_paged_sizes():
    m = manifest(PAGED)
    plan = check_launch(m, paged_tensors())
    assert plan.sizes == dict(B=4, Hq=32, Hkv=8, Nq=1, Nk=160, num_pages=64, max_pages=10)
    assert plan.device == 0 and plan.copies == () and not plan.empty
    # The pool's tensor maps: [D, S, num_pages * Hkv], rows of S * D elements.
    args = tensor_map_args(m["tensor_maps"][1], dict(plan.sizes, D=128))
    assert args["dims"] == [128, 16, 512] and args["strides_bytes"] == [256, 16 * 128 * 2]
    # Without kv_lens, with lse: out and lse given, checked.
    m2 = manifest("bf16,d64,full,lse,page=64")
    t = paged_tensors(S=64, D=64, Nq=3, M=7, kv_lens=None)
    t = {n: TensorDesc(x.shape, "bf16" if x.dtype == "f16" else x.dtype, x.device, x.strides,
                       x.data_ptr) for n, x in t.items() if x is not None}
    t["out"] = tensor((4, 32, 3, 64), "bf16")
    t["lse"] = tensor((4, 32, 3), "f32")
    assert check_launch(m2, t).sizes["Nk"] == 7 * 64
    # kv_lens on a contiguous cache: Nk from k as before, no paged sizes.
    m3 = manifest("f16,d128,full,lse,kv_lens", "sm_80")
    t3 = {"q": tensor((2, 8, 1, 128)), "k": tensor((2, 2, 999, 128)),
          "v": tensor((2, 2, 999, 128)), "kv_lens": tensor((2,), "i32")}
    assert check_launch(m3, t3).sizes == dict(B=2, Hq=8, Hkv=2, Nq=1, Nk=999)
    # A non-contiguous page table or kv_lens is copied, like q, k, v.
    t = paged_tensors(page_table=tensor((4, 10), "i32", strides=(1, 4)))
    assert check_launch(m, t).copies == ("page_table",)
    # Nothing to compute: an empty plan, whatever the pool.
    assert check_launch(m, paged_tensors(Nq=0, P=0)).empty


@pytest.mark.parametrize("over,match", [
    (dict(kv_lens=None), "kv_lens: missing: kernel fa_f16_d128_causal_kvlens_page16_kernel "
                         "takes per-sequence key lengths"),
    (dict(page_table=None), "page_table: missing: kernel .* reads a paged KV cache through a "
                            "page table"),
    (dict(kv_lens=tensor((4,), "i64")), "kv_lens: dtype i64, but kernel .* takes i32"),
    (dict(page_table=tensor((4, 10), "f32")), "page_table: dtype f32, but kernel .* takes i32"),
    (dict(kv_lens=tensor((5,), "i32")), r"kv_lens: shape\[0\] is 5, but B = 4 from q.shape\[0\]"),
    (dict(kv_lens=tensor((4, 1), "i32")), "kv_lens: rank 2"),
    (dict(page_table=tensor((3, 10), "i32")), r"page_table: shape\[0\] is 3, but B = 4"),
    (dict(page_table=tensor((40,), "i32")), "page_table: rank 1"),
    (dict(k=tensor((64, 8, 32, 128))), r"k: shape\[2\] is 32, but 16 \(the page size of kernel"),
    (dict(v=tensor((64, 8, 32, 128))), r"v: shape\[2\] is 32, but 16 \(the page size"),
    (dict(v=tensor((63, 8, 16, 128))), r"v: shape\[0\] is 63, but num_pages = 64 from "
                                       r"k.shape\[0\]"),
    (dict(k=tensor((64, 8, 16, 128)), v=tensor((64, 8, 16, 128)), q=tensor((4, 30, 1, 128))),
     "Hkv = 8 key/value heads do not divide Hq = 30"),
    (dict(kv_lens=tensor((4,), "i32", device="cuda:1")), "kv_lens: on cuda:1, but q is on cuda:0"),
    (dict(page_table=tensor((4, 10), "i32", device="cpu")), "page_table: on device 'cpu', not "
                                                            "on a CUDA device"),
    (dict(page_table=tensor((4, 0), "i32")), r"page_table: no pages per sequence \(max_pages = 0"),
    (dict(k=tensor((0, 8, 16, 128)), v=tensor((0, 8, 16, 128))), "k: an empty page pool"),
    (dict(page_table=tensor((4, 2**27), "i32")), "page_table: Nk = 2147483648 is not an i32 size"),
])
def test_paged_launch_errors(over, match):
    with pytest.raises(ValueError, match=match):
        check_launch(manifest(PAGED), paged_tensors(**over))


def test_given_to_a_kernel_without_them():
    m = manifest("f16,d128,full,lse,kv_lens")
    t = {"q": tensor((2, 8, 1, 128)), "k": tensor((2, 2, 99, 128)), "v": tensor((2, 2, 99, 128)),
         "kv_lens": tensor((2,), "i32"), "page_table": tensor((2, 4), "i32")}
    with pytest.raises(ValueError, match="page_table: kernel .* takes no page_table: it reads "
                                         "contiguous K and V"):
        check_launch(m, t)
    m = manifest("f16,d128,full,page=16")
    t = paged_tensors()
    with pytest.raises(ValueError, match="kv_lens: kernel .* takes no kv_lens: it was compiled "
                                         "without per-sequence key lengths"):
        check_launch(m, t)
    t.pop("kv_lens")
    assert check_launch(m, t).sizes["Nk"] == 160


def test_launch_ptrs_sizes():
    m = manifest(PAGED)
    sizes = dict(B=4, Hq=32, Hkv=8, Nq=1, Nk=160, num_pages=64, max_pages=10)
    assert check_sizes(m, sizes) == sizes
    with pytest.raises(ValueError, match="max_pages: missing"):
        check_sizes(m, {k: v for k, v in sizes.items() if k != "max_pages"})
    with pytest.raises(ValueError, match=r"Nk: 100, but a paged kernel's Nk is max_pages x "
                                         r"page_size = 10 x 16 = 160"):
        check_sizes(m, dict(sizes, Nk=100))
    with pytest.raises(ValueError, match="num_pages = -1 is not an i32 size"):
        check_sizes(m, dict(sizes, num_pages=-1))
    with pytest.raises(ValueError, match="kernel .* has no size max_pages"):
        check_sizes(manifest("f16,d128,full,kv_lens"), dict(sizes, Nk=160))


def test_check_index_values():
    # Sequence 1 uses pages 0..2 of its row (40 keys, 16 per page): the rest
    # of its row is never read, so garbage there is fine.
    table = [[0, 1, 2, 3], [4, 5, 6, -7], [8, 9, 10, 11]]
    check_index_values([64, 40, 1], table, 64, 12, 16)
    check_index_values([0, 0, 0], [[99] * 4] * 3, 64, 12, 16)  # no keys: no page read
    with pytest.raises(ValueError, match=r"page_table\[1, 2\] = 12: sequence 1 reads page 2 of "
                                         r"its row \(pages 0 .. 2: kv_lens\[1\] = 33, page_size "
                                         r"16\), and 12 is not a page of the pool \(0 .. 11\)"):
        check_index_values([64, 33, 1], [[0, 1, 2, 3], [4, 5, 12, 13], [8, 9, 10, 11]], 64, 12,
                           16)
    with pytest.raises(ValueError, match=r"page_table\[1, 3\] = -7: .*no kv_lens"):
        check_index_values(None, table, 64, 12, 16)
    with pytest.raises(ValueError, match=r"kv_lens\[2\] = 65: sequence 2 has more keys than the "
                                         r"capacity 64 \(max_pages 4 x page_size 16\)"):
        check_index_values([64, 40, 65], table, 64, 12, 16)
    with pytest.raises(ValueError, match=r"kv_lens\[0\] = -1: sequence 0 has a negative key "
                                         r"length"):
        check_index_values([-1, 40, 1], table, 64, 12, 16)
    # A contiguous cache: lengths only, against Nk.
    check_index_values([0, 1000], None, 1000)
    with pytest.raises(ValueError, match=r"kv_lens\[1\] = 1001: .*capacity 1000 \(Nk\)"):
        check_index_values([0, 1001], None, 1000)


def test_manifest_copy_unchanged_by_checks():
    m = manifest(PAGED)
    before = copy.deepcopy(m)
    check_manifest(m)
    check_launch(m, paged_tensors())
    assert m == before


# ---------------------------------------------------------------------------
# A compiled kernel against the contract (once the compiler has the clauses)

# The IR, static: parses only where fa.attention has the clauses.
CLAUSES_IR = """func.func @clauses(%q: tensor<4x32x1x128xf16>, %k: tensor<512x8x16x128xf16>,
    %v: tensor<512x8x16x128xf16>, %lens: tensor<4xi32>, %table: tensor<4x64xi32>)
    -> tensor<4x32x1x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<4xi32>) pages(%table : tensor<4x64xi32>)
      {causal} : tensor<4x32x1x128xf16>, tensor<512x8x16x128xf16>, tensor<512x8x16x128xf16>
      -> tensor<4x32x1x128xf16>
  return %o : tensor<4x32x1x128xf16>
}
"""


def compile_or_skip(v):
    import fa
    try:
        return fa.compile(v)
    except fa.CompileError as e:
        if "does not parse" not in str(e):
            raise
        try:
            fa.compile(CLAUSES_IR, chip=v.chip)
        except fa.CompileError as e2:
            if "does not parse" in str(e2):
                pytest.skip("the compiler has no kv_lens / pages clauses yet")
        raise  # the clauses parse, the variant's MLIR does not: a bug here


@needs_compiler
@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("spec", [PAGED, "bf16,d64,full,lse,kv_lens", "f16,d128,full,lse,page=64"])
def test_compiled_kernel_matches_the_contract(chip, spec):
    v = Variant.parse(spec, chip=chip)
    m = compile_or_skip(v).manifest
    check_manifest(m)
    hand = paged_manifest(v)
    assert m.get("kv_lens", False) == v.kv_lens and m.get("page_size") == v.page_size

    def key(p):
        return (p["name"], p["type"], p.get("tensor"), p.get("dtype"), p.get("shape"))
    assert [key(p) for p in m["params"]] == [key(p) for p in hand["params"]]
    for p in m["params"]:
        if p["name"] in ("kv_lens", "page_table"):
            assert p["align_bytes"] == 4
    # The tensor maps' dims and strides (compared by value: the expressions may
    # be spelled differently) at sizes where every symbol differs.
    env = dict(B=3, Hq=12, Hkv=4, Nq=5, Nk=7 * (v.page_size or 16), num_pages=11, max_pages=7,
               D=v.head_dim)

    def maps(man):
        return [(t["param"], [eval_expr(e, env) for e in t["dims"]],
                 [eval_expr(e, env) for e in t["strides_bytes"]]) for t in man["tensor_maps"]]
    assert maps(m) == maps(hand)
