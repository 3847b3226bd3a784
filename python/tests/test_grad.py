"""The backward kernel's Python side without torch or a GPU: grad variants (name,
spec, MLIR), the runtime's checks of a launch against an attention_grad
manifest (a hand-written one: conftest.grad_manifest), and, where the compiler
has the kernel, that a compiled backward kernel's manifest is that contract
(both chips) and that python -m fa.precompile bundles it. The launch itself
(pointers, delta, dq) is in test_torch_fake.py."""
import copy
import json
import os
import subprocess
import sys
import types

import pytest

import fa
from fa import precompile
from fa.validation import unsupported_reason
from fa_runtime import Kernel, ManifestError, TensorDesc, check_launch, check_manifest
from fa_runtime.manifest import contiguous_strides

from conftest import grad_manifest, needs_compiler, ptxas

# ---------------------------------------------------------------------------
# Variants


def test_grad_variant_spec_and_name():
    v = fa.Variant.parse("f16,d128,causal,grad")
    assert v.grad and not v.lse and v.spec() == "f16,d128,causal,grad"
    assert v.func_name() == "fa_grad_f16_d128_causal"
    assert v != fa.Variant.parse("f16,d128,causal")
    w = fa.Variant.parse("bf16,d64,full,grad,window=128:64,softcap=2.0", chip="sm_80")
    assert w.func_name().startswith("fa_grad_bf16_d64_full_w128_64_")
    assert fa.Variant.from_json(w.to_json()) == w and w.to_json()["grad"] is True
    assert fa.Variant.parse(w.spec(), chip="sm_80") == w
    with pytest.raises(ValueError, match="grad.*reads the forward's lse"):
        fa.Variant.parse("f16,d128,lse,grad")


def test_forward_variants_unchanged():
    # Names, specs, JSON and MLIR text (the cache key) of forward variants are
    # what they were before grad variants existed.
    v = fa.Variant.parse("f16,d128,causal,lse")
    assert v.func_name() == "fa_f16_d128_causal_lse" and v.spec() == "f16,d128,causal,lse"
    assert "grad" not in v.to_json()
    t = "tensor<?x?x?x128xf16>"
    assert v.mlir() == (
        f"func.func @fa_f16_d128_causal_lse(%q: {t}, %k: {t}, %v: {t}) -> ({t}, "
        f"tensor<?x?x?xf32>) {{\n"
        f"  %o, %lse = fa.attention %q, %k, %v {{causal}} : {t}, {t}, {t} -> ({t}, "
        f"tensor<?x?x?xf32>)\n"
        f"  return %o, %lse : {t}, tensor<?x?x?xf32>\n}}\n")


def test_grad_mlir_text():
    v = fa.Variant.parse("bf16,d64,causal,grad,window=32:0,scale=0.5")
    t, l = "tensor<?x?x?x64xbf16>", "tensor<?x?x?xf32>"
    assert v.mlir() == (
        f"func.func @{v.func_name()}(%q: {t}, %k: {t}, %v: {t}, %o: {t}, %lse: {l}, "
        f"%do: {t}) -> ({t}, {t}, {t}) {{\n"
        f"  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do "
        f"{{causal, scale = 0x3F000000 : f32, window = array<i64: 32, 0>}} : "
        f"{t}, {t}, {t}, {t}, {l}, {t} -> {t}, {t}, {t}\n"
        f"  return %dq, %dk, %dv : {t}, {t}, {t}\n}}\n")


def test_precompile_default_sweep_with_grad():
    fwd = precompile.default_variants("sm_90a")
    both = precompile.default_variants("sm_90a", grad=True)
    grads = [v for v in both if v.grad]
    assert both[:len(fwd)] == fwd and len(fwd) == 40
    # 8 of them: the causal d64 / d128 kernels with dynamic tiles (short causal sequences).
    dynamic = [v for v in fwd if v.options == (("dynamic-tiles", "true"),)]
    assert len(dynamic) == 8 and all(v.causal and v.head_dim in (64, 128) for v in dynamic)
    # 8 more: d64 with three consumer warpgroups (from 2048 tokens), causal or not.
    wide = [v for v in fwd if v.options == (("block-q", "192"),)]
    assert len(wide) == 8 and all(v.head_dim == 64 for v in wide)
    assert {v.causal for v in wide} == {False, True}
    # The backward has head dims 64 and 128: 2 dtypes x 2 head dims x causal or not.
    assert len(grads) == 8 and {v.head_dim for v in grads} == {64, 128}


def test_unsupported_reason_of_the_backward():
    assert unsupported_reason("f16", "cuda:0", "sm_90a", 256, 256, None) is None
    assert unsupported_reason("f16", "cuda:0", "sm_90a", 256, 256, None, grad=True) == \
        "head dim 256: the sm_90a backward kernel supports 64, 128"
    assert unsupported_reason("f16", "cuda:0", "sm_80", 128, 128, None, grad=True) is None


# ---------------------------------------------------------------------------
# The runtime's checks (fa_runtime.manifest)

GV = fa.Variant.parse("f16,d128,causal,grad")


def tensor(shape, dtype="f16", device="cuda:0", ptr=0x7f0000000000, strides=None):
    return TensorDesc(tuple(shape), dtype, device,
                      tuple(strides) if strides else contiguous_strides(shape), ptr)


def grad_args(B=2, Hq=8, Hkv=2, Nq=100, Nk=120, D=128, **over):
    qs, kvs = (B, Hq, Nq, D), (B, Hkv, Nk, D)
    a = dict(q=tensor(qs), k=tensor(kvs), v=tensor(kvs), do=tensor(qs),
             lse=tensor((B, Hq, Nq), "f32"), o=tensor(qs), grad_lse=tensor((B, Hq, Nq), "f32"))
    a.update(over)
    return a


def rejects(pattern, m=None, **args):
    with pytest.raises(ValueError, match=pattern):
        check_launch(m or grad_manifest(GV), args)


def test_grad_manifest_is_valid():
    check_manifest(grad_manifest(GV))
    m = grad_manifest(GV)
    m["op"] = "attention_backward"
    with pytest.raises(ManifestError, match="op 'attention_backward' is not one this runtime "
                                            "launches .attention, attention_grad."):
        check_manifest(m)
    m = grad_manifest(GV)
    del m["params"][5]  # delta
    with pytest.raises(ManifestError, match="an attention_grad kernel takes the tensors .*delta"):
        check_manifest(m)
    # The preprocess and postprocess kernels: one of each, well formed, only
    # in an attention_grad manifest, never a manifest's own op.
    check_manifest(grad_manifest(GV, auxiliary=True))
    m = grad_manifest(GV, auxiliary=True)
    del m["auxiliary_kernels"][1]
    with pytest.raises(ManifestError, match="auxiliary_kernels compute .'attention_grad_pre"
                                            "process'., not one each of"):
        check_manifest(m)
    m = grad_manifest(GV, auxiliary=True)
    del m["auxiliary_kernels"][0]["params"][2]  # delta
    with pytest.raises(ManifestError, match="auxiliary kernel of .*_preprocess: an "
                                            "attention_grad_preprocess kernel takes the tensors"):
        check_manifest(m)
    m = grad_manifest(GV, auxiliary=True)
    m["auxiliary_kernels"][1]["grid"] = ["Nq", "Hq"]
    with pytest.raises(ManifestError, match="_postprocess: grid and block need 3 entries"):
        check_manifest(m)
    m = grad_manifest(GV)
    m["op"] = "attention_grad_preprocess"
    with pytest.raises(ManifestError, match="op 'attention_grad_preprocess' is not one this "
                                            "runtime launches .attention, attention_grad.$"):
        check_manifest(m)
    m = grad_manifest(GV, auxiliary=True)
    m["op"] = None
    m.pop("op")
    with pytest.raises(ManifestError, match="'auxiliary_kernels' must be a list of objects, "
                                            "in an attention_grad or fp8 attention manifest only"):
        check_manifest(m)


def test_grad_launch_accepted():
    plan = check_launch(grad_manifest(GV), grad_args())
    assert plan.sizes == dict(B=2, Hq=8, Hkv=2, Nq=100, Nk=120)
    assert (plan.device, plan.copies, plan.empty) == (0, (), False)
    # What the runtime computes or allocates may be absent; grad_lse is optional.
    a = grad_args()
    del a["grad_lse"]
    assert check_launch(grad_manifest(GV), dict(a, delta=None, dq_accum=None)).sizes["Nk"] == 120


def test_grad_launch_rejects():
    rejects(r"do: missing \(kernel fa_grad_f16_d128_causal_kernel computes attention_grad: "
            r"launch it with Kernel.grad\)", **grad_args(do=None))
    rejects("lse: missing", **grad_args(lse=None))
    rejects("out: kernel fa_grad_f16_d128_causal_kernel takes no out", **grad_args(
        out=tensor((2, 8, 100, 128))))
    rejects(r"do: shape\[2\] is 99, but Nq = 100 from q.shape\[2\]",
            **grad_args(do=tensor((2, 8, 99, 128))))
    rejects(r"o: shape\[3\] is 64, but D = 128", **grad_args(o=tensor((2, 8, 100, 64))))
    rejects("o: dtype bf16, but kernel .* takes f16", **grad_args(o=tensor((2, 8, 100, 128),
                                                                         "bf16")))
    rejects(r"grad_lse: shape\[1\] is 2, but Hq = 8", **grad_args(
        grad_lse=tensor((2, 2, 100), "f32")))
    rejects("grad_lse: dtype f16", **grad_args(grad_lse=tensor((2, 8, 100))))
    rejects("lse: dtype f16", **grad_args(lse=tensor((2, 8, 100))))
    rejects("grad_lse: on cuda:1, but q is on cuda:0", **grad_args(
        grad_lse=tensor((2, 8, 100), "f32", "cuda:1")))
    rejects("k: Hkv = 3 key/value heads do not divide", **grad_args(Hkv=3))


def test_grad_launch_strides():
    m = grad_manifest(GV)
    transposed = (8 * 100 * 128, 128, 8 * 128, 1)  # [B, Nq, Hq, D] memory
    # Inputs the kernel reads are copied; o and grad_lse are read by torch, any strides.
    plan = check_launch(m, grad_args(do=tensor((2, 8, 100, 128), strides=transposed),
                                     o=tensor((2, 8, 100, 128), strides=transposed, ptr=2),
                                     grad_lse=tensor((2, 8, 100), "f32", strides=(0, 0, 0))))
    assert plan.copies == ("do",)
    # What the kernel writes must be contiguous.
    for name, shape, dt in (("dq_accum", (2, 8, 100, 128), "f32"), ("dk", (2, 2, 120, 128), "f16"),
                            ("dv", (2, 2, 120, 128), "f16")):
        strides = list(contiguous_strides(shape))
        strides[2] *= 2
        rejects(f"{name}: not contiguous .*a copy would not be written back",
                **grad_args(**{name: tensor(shape, dt, strides=strides)}))
    rejects("dq_accum: address 0x7f0000000002 is not 4-byte aligned",
            **grad_args(dq_accum=tensor((2, 8, 100, 128), "f32", ptr=0x7f0000000002)))


def test_grad_launch_empty():
    # No keys (every row fully masked: dq 0) or no queries (dk, dv 0): nothing
    # for the kernel to add; not an error, unlike the forward's Nk = 0.
    assert check_launch(grad_manifest(GV), grad_args(Nk=0)).empty
    assert check_launch(grad_manifest(GV), grad_args(Nq=0)).empty
    assert not check_launch(grad_manifest(GV), grad_args(Nq=1, Nk=1)).empty


def fake_tensor(shape, dtype="float16"):
    """What fa_runtime reads of a torch tensor before it imports torch."""
    return types.SimpleNamespace(shape=tuple(shape), dtype=f"torch.{dtype}", device="cuda:0",
                                 stride=lambda: contiguous_strides(shape),
                                 data_ptr=lambda: 0x7f0000000000)


def test_kernel_entry_points_by_op(monkeypatch):
    # Before torch or the driver: a backward kernel is not called like a
    # forward one, and the other way round.
    monkeypatch.setenv("FA_LIBCUDA", "/nonexistent/libcuda.so")
    g = Kernel(grad_manifest(GV), b"")
    assert g.op == "attention_grad"
    q, kv = fake_tensor((2, 8, 100, 128)), fake_tensor((2, 2, 120, 128))
    with pytest.raises(ValueError, match="do: missing .*Kernel.grad"):
        g(q, kv, kv)
    fm = copy.deepcopy(grad_manifest(GV))  # a forward manifest of q, k, v only
    del fm["op"]
    fm["params"] = [p for p in fm["params"] if p.get("tensor") in ("q", "k", "v", None)]
    f = Kernel(fm, b"")
    assert f.op == "attention"
    with pytest.raises(ValueError, match="computes attention, not attention_grad"):
        f.grad(q, kv, kv, q, fake_tensor((2, 8, 100), "float32"), q)


# ---------------------------------------------------------------------------
# A compiled backward kernel (where the compiler has it)

CONTRACT_PARAMS = [("q", "f16", ["B", "Hq", "Nq", "D"]), ("k", "f16", ["B", "Hkv", "Nk", "D"]),
                   ("v", "f16", ["B", "Hkv", "Nk", "D"]), ("do", "f16", ["B", "Hq", "Nq", "D"]),
                   ("lse", "f32", ["B", "Hq", "Nq"]), ("delta", "f32", ["B", "Hq", "Nq"]),
                   ("dq_accum", "f32", ["B", "Hq", "Nq", "D"]),
                   ("dk", "f16", ["B", "Hkv", "Nk", "D"]), ("dv", "f16", ["B", "Hkv", "Nk", "D"])]


def compile_or_skip(spec, chip):
    try:
        return fa.compile(spec, chip=chip)
    except fa.CompileError as e:
        if "no GPU lowering" in str(e) or any("no GPU lowering" in d
                                              for d in (e.diagnostics or [])):
            pytest.skip("the compiler has no GPU backward kernel yet (fa-to-ptx: "
                        "fa.attention_grad has no GPU lowering)")
        raise


@needs_compiler
@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("spec", ["f16,d128,causal,grad", "f16,d64,full,grad,window=128:64"])
def test_compiled_grad_kernel_matches_the_contract(chip, spec):
    v = fa.Variant.parse(spec, chip=chip)
    k = compile_or_skip(v, chip)
    m = k.manifest
    check_manifest(m)
    assert m["op"] == "attention_grad" and m["kernel"] == v.func_name() + "_kernel"
    assert (m["chip"], m["dtype"], m["head_dim"], m["causal"]) == (chip, "f16", v.head_dim,
                                                                   v.causal)
    if v.window:
        assert m["window"] == list(v.window)
    ptrs = [p for p in m["params"] if p["type"] != "i32"]
    assert [(p["tensor"], p["dtype"], p["shape"]) for p in ptrs] == CONTRACT_PARAMS
    # sm_90a: q, k, v and do through tensor maps (TMA loads of the tiles),
    # dq_accum through one too (TMA reduce-adds of dQ tiles).
    sm90 = chip == "sm_90a"
    mapped = (0, 1, 2, 3, 6) if sm90 else ()
    assert [p["type"] for p in ptrs] == ["tensormap" if i in mapped else "ptr"
                                         for i in range(9)]
    assert [m_["param"] for m_ in m["tensor_maps"]] == \
        (["q_map", "k_map", "v_map", "do_map", "dq_accum_map"] if sm90 else [])
    assert [p["name"] for p in m["params"] if p["type"] == "i32"] == \
        ["B", "Hq", "Hkv", "Nq", "Nk"]
    assert m["grid"] == [{"ceil_div": ["Nk", m["block_kv"]]}, "Hkv", "B"]
    # sm_80: a warp per 16 keys; sm_90a: two consumer warpgroups of 64 keys
    # and the producer warpgroup.
    assert m["block"] == ([384, 1, 1] if sm90 else [32 * (m["block_kv"] // 16), 1, 1])
    # The hand-written manifest the other tests use says the same.
    hand = grad_manifest(v, block_kv=m["block_kv"], tensor_map=sm90)
    assert [(p["name"], p["type"], p.get("tensor"), p.get("dtype"), p.get("shape"))
            for p in m["params"]] == \
        [(p["name"], p["type"], p.get("tensor"), p.get("dtype"), p.get("shape"))
         for p in hand["params"]]
    for compiled, written in zip(m["tensor_maps"], hand["tensor_maps"]):
        assert {key: compiled[key] for key in written} == written
    # The preprocess and postprocess kernels, in the same PTX.
    hand_aux = grad_manifest(v, auxiliary=True)["auxiliary_kernels"]
    assert [{key: a[key] for key in ("op", "kernel", "grid", "block")}
            for a in m["auxiliary_kernels"]] == \
        [{key: a[key] for key in ("op", "kernel", "grid", "block")} for a in hand_aux]
    for compiled, written in zip(m["auxiliary_kernels"], hand_aux):
        assert [{key: p.get(key) for key in ("name", "type", "tensor", "dtype", "shape")}
                for p in compiled["params"]] == \
            [{key: p.get(key) for key in ("name", "type", "tensor", "dtype", "shape")}
             for p in written["params"]]
        assert f".entry {compiled['kernel']}" in k.ptx
    assert f".target {chip}" in k.ptx and f".entry {m['kernel']}" in k.ptx
    if ptxas():
        path = os.path.join(os.environ["FA_CACHE_DIR"], "grad.ptx")
        with open(path, "w") as f:
            f.write(k.ptx)
        r = subprocess.run([ptxas(), f"-arch={chip}", path, "-o", os.devnull],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@needs_compiler
def test_precompile_bundles_grad_variants(tmp_path):
    compile_or_skip("f16,d64,causal,grad", "sm_90a")
    out = tmp_path / "bundle"
    r = subprocess.run([sys.executable, "-m", "fa.precompile", "--chip", "sm_90a", "--out",
                        str(out), "f16,d64,causal,grad", "f16,d64,causal,lse"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    index = json.loads((out / "index.json").read_text())
    assert sorted(e["spec"] for e in index["kernels"]) == ["f16,d64,causal,grad",
                                                           "f16,d64,causal,lse"]
    b = fa.Bundle.load(str(out))
    k = b.get(fa.Variant.parse("f16,d64,causal,grad"))
    assert k.manifest["op"] == "attention_grad" and k.name == "fa_grad_f16_d64_causal_kernel"
    assert b.get(fa.Variant.parse("f16,d64,causal,lse")).manifest.get("op") is None


# ---------------------------------------------------------------------------
# bench/bench_backward.py's bundle (its torch-free options)

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                     "bench_backward.py")


def test_bench_backward_specs_and_bundle_check(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(BENCH), "..", "python"))
    r = subprocess.run([sys.executable, BENCH, "--print-specs"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    specs = r.stdout.split()
    variants = [fa.Variant.parse(s) for s in specs]
    assert sum(v.grad for v in variants) == 17 and len(specs) == 35
    # Every backward kernel has its forward with lse (the forward autograd runs).
    fwd = {fa.Variant.make(**{**v.to_json(), "grad": False, "lse": True}) for v in variants
           if v.grad}
    assert fwd <= set(variants)
    # A bundle without them: --check-bundle-only names what is missing.
    from conftest import grad_bundle
    grad_bundle(tmp_path / "b", ["f16,d128,causal,grad"])
    r = subprocess.run([sys.executable, BENCH, "--bundle", str(tmp_path / "b"),
                        "--check-bundle-only"], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    missing = set(r.stdout.split(": missing ")[1].split("\n")[0].split(", "))
    assert len(missing) == 2 * 35 - 1 and "sm_90a:bf16,d128,causal,grad" in missing
    assert "sm_90a:f16,d128,causal,grad" not in missing and "sm_80:f16,d128,causal,grad" in missing
