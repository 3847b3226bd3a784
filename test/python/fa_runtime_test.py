"""The Python runtime's checks, without a GPU and without torch.

    python3 test/python/fa_runtime_test.py DIR

DIR holds sm80/ and sm90/, each the fa-dump-kernel output of
test/python/Inputs/kernels.mlir (test/python/fa-runtime.test makes them).
libcuda is pointed at a file that does not exist, so any driver call would
raise OSError: every ValueError asserted here comes before the driver.
"""
import builtins
import copy
import json
import os
import sys
import tempfile
import unittest

os.environ["FA_LIBCUDA"] = "/nonexistent/libcuda-for-fa-runtime-test.so"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from fa_runtime import Kernel, ManifestError, TensorDesc, check_launch, check_manifest  # noqa: E402
from fa_runtime.manifest import (compile_expr, contiguous_strides, eval_expr,  # noqa: E402
                                 tensor_map_args)

DIR = None


def load(chip, name):
    with open(os.path.join(DIR, chip, name + "_kernel.json")) as f:
        return json.load(f)


def tensor(shape, dtype="f16", device="cuda:0", ptr=0x7f0000000000, strides=None):
    return TensorDesc(tuple(shape), dtype, device,
                      tuple(strides) if strides else contiguous_strides(shape), ptr)


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class FakeTorchTensor:
    """What Kernel.__call__ reads of a tensor before it imports torch."""

    def __init__(self, shape, dtype="float16", device="cuda:0", ptr=0x7f0000000000):
        self.shape, self.dtype, self.device, self._ptr = tuple(shape), FakeDtype(dtype), device, ptr

    def stride(self):
        return contiguous_strides(self.shape)

    def data_ptr(self):
        return self._ptr


class SizeExpressions(unittest.TestCase):
    def test_grammar(self):
        env = dict(B=2, Hq=8, Hkv=2, Nq=1000, Nk=500, D=128, num_sms=132)
        self.assertEqual(eval_expr(7, env), 7)
        self.assertEqual(eval_expr("Nq", env), 1000)
        self.assertEqual(eval_expr({"ceil_div": ["Nq", 128]}, env), 8)
        self.assertEqual(eval_expr({"ceil_div": [1024, 128]}, env), 8)
        self.assertEqual(eval_expr({"ceil_div": [1025, 128]}, env), 9)
        self.assertEqual(eval_expr({"mul": ["Nk", "D", 2]}, env), 128000)
        self.assertEqual(eval_expr({"min": [{"mul": [{"ceil_div": ["Nq", 128]}, "Hq", "B"]},
                                            "num_sms"]}, env), 128)
        self.assertEqual(eval_expr({"min": [1000, "num_sms"]}, env), 132)

    def test_not_in_grammar(self):
        for bad in ["ceil(Nq/128)", "Nq/128", "__import__('os').system('false')", "tiles",
                    True, 1.5, None, [], {}, {"pow": ["Nq", 2]}, {"ceil_div": ["Nq"]},
                    {"ceil_div": ["Nq", 1, 2]}, {"mul": []}, {"mul": "Nq"},
                    {"mul": ["Nq"], "min": ["Nq"]}, {"min": ["Nq", "x"]}]:
            with self.assertRaises(ManifestError, msg=repr(bad)):
                compile_expr(bad, "grid[0]")

    def test_unbound_symbol(self):
        with self.assertRaisesRegex(ValueError, "no value for num_sms"):
            eval_expr({"min": [4, "num_sms"]}, {})


class Grid(unittest.TestCase):
    """Kernel.grid on the compiled manifests; builtins.eval must not be called."""

    def setUp(self):
        self._eval = builtins.eval

        def no_eval(*a, **k):
            raise AssertionError("eval called")
        builtins.eval = no_eval

    def tearDown(self):
        builtins.eval = self._eval

    def sizes(self, Nq=1000, Hq=8, B=2):
        return dict(B=B, Hq=Hq, Hkv=2, Nq=Nq, Nk=1000)

    def test_one_tile_per_cta(self):
        for chip, bq in (("sm80", 128), ("sm90", 128)):
            k = Kernel(load(chip, "attn_f16_d128_causal_lse"), b"")
            self.assertEqual(k.grid(self.sizes()), [8, 8, 2], chip)
            self.assertEqual(k.grid(self.sizes(Nq=bq)), [1, 8, 2], chip)
            self.assertEqual(k.grid(self.sizes(Nq=bq + 1, Hq=4, B=3)), [2, 4, 3], chip)
            self.assertEqual(k.grid(self.sizes(Nq=0)), [0, 8, 2], chip)

    def test_persistent(self):
        k = Kernel(load("sm90", "attn_bf16_d64_persistent"), b"")
        self.assertEqual(k.grid(self.sizes(), num_sms=132), [128, 1, 1])  # 8 * 8 * 2 tiles
        self.assertEqual(k.grid(self.sizes(), num_sms=100), [100, 1, 1])
        self.assertEqual(k.grid(self.sizes(Nq=129, Hq=2, B=1), num_sms=132), [4, 1, 1])
        # The SM count is not needed (nor asked for) where the grid does not use it.
        k80 = Kernel(load("sm80", "attn_bf16_d64_persistent"), b"")
        self.assertEqual(k80.grid(self.sizes()), [8, 8, 2])

    def test_split_kv(self):
        # The split-KV additions (docs/Manifest.md, "Split-KV kernels"; by hand on a
        # compiled manifest): the grid's z is B * num_splits, num_splits (the caller's,
        # default 1) is in the plan's sizes; without "split_kv" the manifest is refused.
        m = load("sm90", "attn_f16_d128_causal_lse")
        first = next(i for i, p in enumerate(m["params"]) if p["type"] == "i32")
        m["params"][first:first] = [
            {"name": n, "tensor": n, "type": "ptr", "dtype": dt, "shape": s, "align_bytes": a}
            for n, dt, s, a in (("split_o", "f32", ["num_splits", "B", "Hq", "Nq", "D"], 16),
                                ("split_lse", "f32", ["num_splits", "B", "Hq", "Nq"], 4),
                                ("split_counter", "i32",
                                 ["B", "Hq", {"ceil_div": ["Nq", 128]}], 4))]
        m["params"].append({"name": "num_splits", "type": "i32"})
        m["grid"] = [{"ceil_div": ["Nq", 128]}, "Hq", {"mul": ["B", "num_splits"]}]
        with self.assertRaisesRegex(ManifestError, "num_splits without 'split_kv': true"):
            check_manifest(m)
        m["split_kv"] = True
        check_manifest(m)
        k = Kernel(m, b"")
        self.assertEqual(k.grid(dict(self.sizes(), num_splits=3)), [8, 8, 6])
        t = {"q": tensor((2, 8, 1000, 128)), "k": tensor((2, 2, 1000, 128)),
             "v": tensor((2, 2, 1000, 128))}
        self.assertEqual(check_launch(m, t).sizes["num_splits"], 1)
        self.assertEqual(check_launch(m, t, num_splits=4).sizes["num_splits"], 4)
        with self.assertRaisesRegex(ValueError, "num_splits: num_splits = 0 is not"):
            check_launch(m, t, num_splits=0)


class TensorMaps(unittest.TestCase):
    def test_args(self):
        m = load("sm90", "attn_bf16_d64_persistent")
        sizes = dict(B=2, Hq=8, Hkv=2, Nq=1000, Nk=500, D=64)
        q, k, v = (tensor_map_args(s, sizes) for s in m["tensor_maps"])
        self.assertEqual((q["dims"], q["strides_bytes"], q["box"]), ([64, 1000, 16], [128, 128000],
                                                                      [64, 64, 1]))
        self.assertEqual((k["dims"], k["strides_bytes"]), ([64, 500, 4], [128, 64000]))
        self.assertEqual(v["dims"], k["dims"])
        # cuda.h: CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, INTERLEAVE_NONE, SWIZZLE_128B,
        # L2_PROMOTION_L2_128B, FLOAT_OOB_FILL_NONE.
        self.assertEqual([q[x] for x in ("data_type", "interleave", "swizzle", "l2_promotion",
                                         "oob_fill", "rank")], [9, 0, 3, 2, 0, 3])
        f16 = load("sm90", "attn_f16_d128_causal_lse")["tensor_maps"][0]
        self.assertEqual(tensor_map_args(f16, dict(sizes, D=128))["data_type"], 6)

    def test_driver_limits(self):
        m = load("sm90", "attn_bf16_d64_persistent")
        with self.assertRaisesRegex(ValueError, "k_map: .* dims .* must be in 1"):
            tensor_map_args(m["tensor_maps"][1], dict(B=2, Hq=8, Hkv=2, Nq=10, Nk=0, D=64))


class FP8(unittest.TestCase):
    """The fp8 kernel's contract: q, k and v_t (V^T, keys padded to 32) f8e4m3, f16 out,
    [1] f32 descales; v_t's tensor map over [B*Hkv, D, Nk32] in 128-key boxes."""

    def setUp(self):
        self.m = load("sm90", "attn_fp8_d128_causal_lse")

    def args(self, Nk=300, **over):
        a = dict(q=tensor((2, 8, 100, 128), "f8e4m3"), k=tensor((2, 2, Nk, 128), "f8e4m3"),
                 v_t=tensor((2, 2, 128, -(-Nk // 32) * 32), "f8e4m3"),
                 out=tensor((2, 8, 100, 128)), lse=tensor((2, 8, 100), "f32"),
                 q_descale=tensor((1,), "f32"), k_descale=tensor((1,), "f32"),
                 v_descale=tensor((1,), "f32"))
        a.update(over)
        return a

    def test_contract(self):
        self.assertEqual((self.m["dtype"], self.m["out_dtype"]), ("f8e4m3", "f16"))
        self.assertEqual(sorted(self.m["v_key_order"]), list(range(32)))
        self.assertEqual(check_launch(self.m, self.args()).sizes,
                         dict(B=2, Hq=8, Hkv=2, Nq=100, Nk=300))

    def test_rejects(self):
        for pattern, over in (
                (r"v_t: shape\[3\] is 300, but 320", dict(v_t=tensor((2, 2, 128, 300), "f8e4m3"))),
                ("q: dtype f16, but .* takes f8e4m3", dict(q=tensor((2, 8, 100, 128)))),
                ("out: dtype bf16, but .* takes f16", dict(out=tensor((2, 8, 100, 128), "bf16"))),
                (r"q_descale: shape\[0\] is 2, but 1", dict(q_descale=tensor((2,), "f32"))),
                ("takes no v ", dict(v=tensor((2, 2, 300, 128), "f8e4m3")))):
            with self.assertRaisesRegex(ValueError, pattern):
                check_launch(self.m, self.args(**over))

    def test_tensor_maps(self):
        sizes = dict(B=2, Hq=8, Hkv=2, Nq=100, Nk=300, D=128)
        q, k, v = (tensor_map_args(s, sizes) for s in self.m["tensor_maps"])
        # CU_TENSOR_MAP_DATA_TYPE_UINT8; 128 e4m3 per 128-byte row.
        self.assertEqual((q["data_type"], q["box"], q["strides_bytes"]), (0, [128, 64, 1],
                                                                           [128, 12800]))
        self.assertEqual((v["dims"], v["strides_bytes"], v["box"]),
                         ([320, 128, 4], [320, 40960], [128, 128, 1]))


class Modifiers(unittest.TestCase):
    """The mask operand and captured tensors are tensor contracts like q, k, v."""

    def qkv(self):
        return dict(q=tensor([2, 4, 50, 64]), k=tensor([2, 2, 60, 64]),
                    v=tensor([2, 2, 60, 64]))

    def test_mask(self):
        m = load("sm90", "boolmask")
        plan = check_launch(m, dict(self.qkv(), mask=tensor([2, 1, 50, 60], "bool")))
        self.assertEqual(plan.sizes["Nk"], 60)
        with self.assertRaisesRegex(ValueError, "mask: dtype f16, but kernel boolmask_kernel "
                                                "takes bool"):
            check_launch(m, dict(self.qkv(), mask=tensor([2, 1, 50, 60], "f16")))
        with self.assertRaisesRegex(ValueError, r"mask: shape\[1\] is 4, but 1"):
            check_launch(m, dict(self.qkv(), mask=tensor([2, 4, 50, 60], "bool")))
        with self.assertRaisesRegex(ValueError, r"mask: shape\[3\] is 50, but Nk = 60"):
            check_launch(m, dict(self.qkv(), mask=tensor([2, 1, 50, 50], "bool")))
        # An input that is not contiguous is copied, as q, k, v are.
        strided = tensor([2, 1, 50, 60], "bool", strides=[6000, 6000, 1, 100])
        plan = check_launch(m, dict(self.qkv(), mask=strided))
        self.assertIn("mask", plan.copies)

    def test_captured(self):
        m = load("sm90", "docs")
        names = [p["name"] for p in m["params"]]
        self.assertEqual(names[names.index("out") + 1], "arg3")
        check_launch(m, dict(self.qkv(), arg3=tensor([64], "i32")))
        with self.assertRaisesRegex(ValueError, r"arg3: shape\[0\] is 65, but 64"):
            check_launch(m, dict(self.qkv(), arg3=tensor([65], "i32")))
        with self.assertRaisesRegex(ValueError, "arg3: dtype i64, but kernel docs_kernel takes i32"):
            check_launch(m, dict(self.qkv(), arg3=tensor([64], "i64")))
        with self.assertRaisesRegex(ValueError, "mask: kernel docs_kernel takes no mask"):
            check_launch(m, dict(self.qkv(), arg3=tensor([64], "i32"),
                                 mask=tensor([2, 1, 50, 60], "bool")))


class SchemaVersion(unittest.TestCase):
    def manifest(self):
        return load("sm80", "attn_f16_d128_causal_lse")

    def test_current(self):
        for chip in ("sm80", "sm90"):
            for name in ("attn_f16_d128_causal_lse", "attn_bf16_d64_persistent"):
                check_manifest(load(chip, name))

    def test_refused(self):
        m = self.manifest()
        del m["schema_version"]
        with self.assertRaisesRegex(ManifestError, "no schema_version.*recompile"):
            check_manifest(m)
        for v in (0, 2, 99, "1", True, None):
            m["schema_version"] = v
            with self.assertRaisesRegex(ManifestError, "schema_version .* not supported"):
                Kernel(m, b"")
        self.assertTrue(issubclass(ManifestError, ValueError))

    def test_load_refuses(self):
        m = self.manifest()
        m["schema_version"] = 2
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.json")
            with open(path, "w") as f:
                json.dump(m, f)
            with self.assertRaisesRegex(ManifestError, "k.json.*schema_version 2"):
                Kernel.load(path)

    def test_old_format(self):
        m = self.manifest()
        del m["schema_version"]
        m["grid"] = ["ceil(Nq/128)", "Hq", "B"]
        with self.assertRaises(ManifestError):
            Kernel(m, b"")

    def test_malformed(self):
        def broken(edit):
            m = copy.deepcopy(self.manifest())
            edit(m)
            return m
        cases = {
            "grid": lambda m: m.update(grid=["ceil(Nq/128)", "Hq", "B"]),
            "3 entries": lambda m: m.update(grid=["Hq", "B"]),
            "block": lambda m: m.update(block=[128, 0, 1]),
            "unknown parameter type": lambda m: m["params"][0].update(type="f64"),
            "appears twice": lambda m: m["params"].append(dict(m["params"][0])),
            "no launch size": lambda m: m["params"].append(
                {"name": "W", "type": "i32", "meaning": ""}),
            "shape": lambda m: m["params"][0].update(shape=["B", "Hq", "Nq*2", "D"]),
            "no 'align_bytes'": lambda m: m["params"][0].pop("align_bytes"),
            "tensor_maps do not match": lambda m: m["params"][0].update(type="tensormap"),
        }
        for what, edit in cases.items():
            with self.assertRaisesRegex(ManifestError, what):
                check_manifest(broken(edit))


class LaunchChecks(unittest.TestCase):
    """check_launch on the sm_80 d128 f16 causal kernel with lse (and others)."""

    def setUp(self):
        self.m = load("sm80", "attn_f16_d128_causal_lse")
        self.m90 = load("sm90", "attn_bf16_d64_persistent")

    def args(self, B=2, Hq=8, Hkv=2, Nq=100, Nk=120, D=128, **over):
        a = dict(q=tensor((B, Hq, Nq, D)), k=tensor((B, Hkv, Nk, D)), v=tensor((B, Hkv, Nk, D)),
                 out=tensor((B, Hq, Nq, D)), lse=tensor((B, Hq, Nq), "f32"))
        a.update(over)
        return a

    def rejects(self, pattern, m=None, copy_inputs=True, **args):
        with self.assertRaisesRegex(ValueError, pattern):
            check_launch(m or self.m, args, copy_inputs)

    def test_accepts(self):
        plan = check_launch(self.m, self.args())
        self.assertEqual(plan.sizes, dict(B=2, Hq=8, Hkv=2, Nq=100, Nk=120))
        self.assertEqual((plan.device, plan.copies, plan.empty), (0, (), False))
        # Outputs left to the runtime; another device; MHA; Nq > Nk.
        plan = check_launch(self.m, self.args(out=None, lse=None))
        self.assertEqual(plan.sizes["Nq"], 100)
        on1 = {n: t._replace(device="cuda:1") for n, t in self.args(Hkv=8, Nq=300).items()}
        self.assertEqual(check_launch(self.m, on1).device, 1)
        m90 = dict(q=tensor((1, 4, 7, 64), "bf16"), k=tensor((1, 1, 9, 64), "bf16"),
                   v=tensor((1, 1, 9, 64), "bf16"))
        self.assertEqual(check_launch(self.m90, m90).sizes, dict(B=1, Hq=4, Hkv=1, Nq=7, Nk=9))

    def test_dtype(self):
        self.rejects(r"q: dtype f32, but kernel attn_f16_d128_causal_lse_kernel takes f16",
                     **self.args(q=tensor((2, 8, 100, 128), "f32")))
        self.rejects("k: dtype bf16", **self.args(k=tensor((2, 2, 120, 128), "bf16")))
        self.rejects("v: dtype torch.int8", **self.args(v=tensor((2, 2, 120, 128), "torch.int8")))
        self.rejects("out: dtype bf16", **self.args(out=tensor((2, 8, 100, 128), "bf16")))
        self.rejects("lse: dtype f16", **self.args(lse=tensor((2, 8, 100), "f16")))
        self.rejects("q: dtype f16, but .* takes bf16", m=self.m90,
                     q=tensor((1, 4, 7, 64)), k=tensor((1, 1, 9, 64)), v=tensor((1, 1, 9, 64)))

    def test_rank(self):
        self.rejects(r"q: rank 3 \(shape \[8, 100, 128\]\), but the kernel takes rank 4",
                     **self.args(q=tensor((8, 100, 128))))
        self.rejects("k: rank 5", **self.args(k=tensor((1, 2, 2, 120, 128))))
        self.rejects("lse: rank 4", **self.args(lse=tensor((2, 8, 100, 1), "f32")))

    def test_head_dim(self):
        self.rejects(r"q: shape\[3\] is 64, but D = 128 from the head dim of kernel",
                     **self.args(D=64))
        self.rejects(r"k: shape\[3\] is 64, but D = 128",
                     **self.args(k=tensor((2, 2, 120, 64))))
        self.rejects(r"v: shape\[3\] is 256", **self.args(v=tensor((2, 2, 120, 256))))

    def test_batch(self):
        self.rejects(r"k: shape\[0\] is 3, but B = 2 from q.shape\[0\]",
                     **self.args(k=tensor((3, 2, 120, 128))))
        self.rejects(r"v: shape\[0\] is 1, but B = 2", **self.args(v=tensor((1, 2, 120, 128))))

    def test_heads(self):
        self.rejects("k: Hkv = 3 key/value heads do not divide Hq = 8 query heads",
                     **self.args(Hkv=3))
        self.rejects("k: Hkv = 0 key/value heads", **self.args(Hkv=0))
        self.rejects(r"v: shape\[1\] is 4, but Hkv = 2 from k.shape\[1\]",
                     **self.args(v=tensor((2, 4, 120, 128))))

    def test_kv_length(self):
        self.rejects(r"v: shape\[2\] is 119, but Nk = 120 from k.shape\[2\]",
                     **self.args(v=tensor((2, 2, 119, 128))))
        self.rejects("k: no keys", **self.args(Nk=0))

    def test_outputs(self):
        self.rejects(r"out: shape\[2\] is 101, but Nq = 100 from q.shape\[2\]",
                     **self.args(out=tensor((2, 8, 101, 128))))
        self.rejects(r"out: shape\[1\] is 2, but Hq = 8",
                     **self.args(out=tensor((2, 2, 100, 128))))
        self.rejects(r"out: rank 3", **self.args(out=tensor((16, 100, 128))))
        self.rejects(r"lse: shape\[2\] is 128, but Nq = 100",
                     **self.args(lse=tensor((2, 8, 128), "f32")))
        self.rejects("lse: kernel attn_bf16_d64_persistent_kernel takes no lse", m=self.m90,
                     q=tensor((1, 4, 7, 64), "bf16"), k=tensor((1, 1, 9, 64), "bf16"),
                     v=tensor((1, 1, 9, 64), "bf16"), lse=tensor((1, 4, 7), "f32"))
        self.rejects("q: missing", **{n: t for n, t in self.args().items() if n != "q"})

    def test_sizes_fit_i32(self):
        big = 2**31
        self.rejects(f"q: Nq = {big} is not an i32 size",
                     **self.args(Nq=big, out=None, lse=None))

    def test_device(self):
        a = self.args()
        self.rejects("k: on cuda:1, but q is on cuda:0 .all tensors must be on one device",
                     **dict(a, k=a["k"]._replace(device="cuda:1")))
        self.rejects("lse: on cuda:3, but q is on cuda:0",
                     **dict(a, lse=a["lse"]._replace(device="cuda:3")))
        self.rejects("q: on device 'cpu', not on a CUDA device",
                     **dict(a, q=a["q"]._replace(device="cpu")))
        self.rejects("v: on device 'meta'", **dict(a, v=a["v"]._replace(device="meta")))

    def test_strides(self):
        a = self.args()
        # A transposed view of q ([B, Nq, Hq, D] memory): copied, and said so.
        q_t = a["q"]._replace(strides=(8 * 100 * 128, 128, 8 * 128, 1), data_ptr=0x7f0000000002)
        plan = check_launch(self.m, dict(a, q=q_t))
        self.assertEqual(plan.copies, ("q",))
        self.rejects(r"q: not contiguous .*copy_inputs=False", copy_inputs=False, **dict(a, q=q_t))
        v_t = a["v"]._replace(strides=(2 * 120 * 256, 120 * 256, 256, 1))  # every other row
        self.assertEqual(check_launch(self.m, dict(a, v=v_t)).copies, ("v",))
        self.rejects("out: not contiguous .*a copy would not be written back",
                     **dict(a, out=a["out"]._replace(strides=(8 * 100 * 128, 128, 8 * 128, 1))))
        self.rejects("lse: not contiguous",
                     **dict(a, lse=a["lse"]._replace(strides=(800, 1, 8))))
        # Extent-1 dimensions may have any stride (as torch's is_contiguous says).
        one = self.args(B=1, Hkv=1)
        odd = one["k"]._replace(strides=(12345, 7, 128, 1))
        self.assertEqual(check_launch(self.m, dict(one, k=odd)).copies, ())

    def test_alignment(self):
        a = self.args()
        for name in ("q", "k", "v", "out"):
            self.rejects(f"{name}: address 0x7f0000000008 is not 16-byte aligned",
                         **dict(a, **{name: a[name]._replace(data_ptr=0x7f0000000008)}))
        # lse is written with 4-byte stores (align_bytes 4 in the manifest).
        check_launch(self.m, dict(a, lse=a["lse"]._replace(data_ptr=0x7f0000000004)))
        self.rejects("lse: address 0x7f0000000002 is not 4-byte aligned",
                     **dict(a, lse=a["lse"]._replace(data_ptr=0x7f0000000002)))

    def test_empty(self):
        plan = check_launch(self.m, self.args(Nq=0))
        self.assertTrue(plan.empty)
        self.assertTrue(check_launch(self.m, self.args(B=0, Nk=0)).empty)


class PublicEntryPoints(unittest.TestCase):
    """Kernel.__call__ and launch_ptrs reject before touching torch or the driver."""

    def setUp(self):
        self.k = Kernel(load("sm80", "attn_f16_d128_causal_lse"), b"")
        self.k90 = Kernel(load("sm90", "attn_bf16_d64_persistent"), b"")

    def test_call(self):
        q = FakeTorchTensor((2, 8, 100, 128))
        kv = FakeTorchTensor((2, 3, 100, 128))
        with self.assertRaisesRegex(ValueError, "k: Hkv = 3"):
            self.k(q, kv, kv)
        with self.assertRaisesRegex(ValueError, "q: dtype bf16"):
            self.k(FakeTorchTensor((2, 8, 100, 128), "bfloat16"), kv, kv)
        with self.assertRaisesRegex(ValueError, "out: shape"):
            good = FakeTorchTensor((2, 2, 100, 128))
            self.k(q, good, good, out=FakeTorchTensor((2, 8, 100, 64)))
        with self.assertRaisesRegex(ValueError, "v: on cuda:1"):
            self.k(q, good, FakeTorchTensor((2, 2, 100, 128), device="cuda:1"))

    def test_launch_ptrs(self):
        ok = dict(B=2, Hq=8, Hkv=2, Nq=100, Nk=100)
        p = [0x7f0000000000] * 5
        with self.assertRaisesRegex(ValueError, r"expected 5 pointers \(q, k, v, out, lse\), got 4"):
            self.k.launch_ptrs(*p[:4], **ok)
        with self.assertRaisesRegex(ValueError, "k: address 0x7f0000000004 is not 16-byte"):
            self.k.launch_ptrs(p[0], 0x7f0000000004, *p[2:], **ok)
        with self.assertRaisesRegex(ValueError, "v: None is not a device address"):
            self.k.launch_ptrs(p[0], p[1], None, *p[3:], **ok)
        with self.assertRaisesRegex(ValueError, "Nk: missing"):
            self.k.launch_ptrs(*p, **{s: n for s, n in ok.items() if s != "Nk"})
        with self.assertRaisesRegex(ValueError, "W: kernel .* has no size W"):
            self.k.launch_ptrs(*p, W=1, **ok)
        with self.assertRaisesRegex(ValueError, "Nq: Nq = -1 is not an i32 size"):
            self.k.launch_ptrs(*p, **dict(ok, Nq=-1))
        with self.assertRaisesRegex(ValueError, "Hkv: Hkv = 3 key/value heads do not divide"):
            self.k.launch_ptrs(*p, **dict(ok, Hkv=3))
        # A CUtensorMap pointer must be 64-byte aligned.
        with self.assertRaisesRegex(ValueError, "q_map: address 0x7f0000000010 is not 64-byte"):
            self.k90.launch_ptrs(0x7f0000000010, *p[:3], **ok)


if __name__ == "__main__":
    DIR = sys.argv[1]
    unittest.main(argv=sys.argv[:1], verbosity=2)
