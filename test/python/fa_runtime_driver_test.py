"""The runtime's driver calls against a fake libcuda (Inputs/fake_libcuda.cpp), and
Kernel.__call__ against a fake torch: what reaches cuLaunchKernel and
cuTensorMapEncodeTiled (grid, block, shared memory, stream, every parameter
value, tensor-map dims/strides/enums), which device's context is used, when the
PTX is loaded. No GPU, no torch.

    FA_LIBCUDA=libfakecuda.so python3 test/python/fa_runtime_driver_test.py DIR

DIR: as for fa_runtime_test.py (sm80/ and sm90/ from Inputs/kernels.mlir).
"""
import ctypes
import os
import re
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import fa_runtime  # noqa: E402
from fa_runtime import Kernel  # noqa: E402
from fa_runtime.driver import encode_tensor_map  # noqa: E402
from fa_runtime.manifest import contiguous_strides  # noqa: E402

DIR = None
FAKE = ctypes.CDLL(os.environ["FA_LIBCUDA"])  # the same library instance the runtime loads
FAKE.fake_cuda_log.restype = ctypes.c_char_p


def log():
    """The driver calls since the last log() (cuInit, made once per process, left out)."""
    lines = FAKE.fake_cuda_log().decode().splitlines()
    FAKE.fake_cuda_reset()
    return [x for x in lines if x != "cuInit 0"]


def kinds(k):
    FAKE.fake_cuda_set_param_kinds("".join("i" if p["type"] == "i32" else "p"
                                           for p in k.manifest["params"]).encode())


def kernel(chip, name):
    return Kernel.load(os.path.join(DIR, chip, name + "_kernel.json"))


# ---------------------------------------------------------------------------
# A fake torch: just what Kernel.__call__ and tensor_maps use.

class FakeDtype:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __str__(self):
        return "torch." + self.name


_next = [0]


def _alloc(device):
    _next[0] += 1
    if device == "cpu":
        return 0x50000000 + 0x10000 * _next[0]
    return (int(device.split(":")[1]) << 40) + 0x1000000 * _next[0]  # 16 MiB apart, aligned


class FakeTensor:
    def __init__(self, shape, dtype, device, strides=None, ptr=None, data=None):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self._strides = tuple(strides) if strides else contiguous_strides(self.shape)
        self._ptr = _alloc(device) if ptr is None else ptr
        self.data = data
        self.copied_from = None

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self._ptr

    def contiguous(self):
        if self._strides == contiguous_strides(self.shape):
            return self
        t = FakeTensor(self.shape, self.dtype, self.device)
        t.copied_from = self
        return t

    def to(self, device, non_blocking=False):
        return FakeTensor(self.shape, self.dtype, str(device), data=self.data)


torch = types.ModuleType("torch")
torch.float16, torch.bfloat16 = FakeDtype("float16", 2), FakeDtype("bfloat16", 2)
torch.float32, torch.uint8 = FakeDtype("float32", 4), FakeDtype("uint8", 1)
torch.int32 = FakeDtype("int32", 4)
torch.empty = lambda shape, device, dtype: FakeTensor(shape, dtype, str(device))
torch.zeros = lambda shape, dtype, device: FakeTensor(shape, dtype, str(device),
                                                     data=b"\0" * 4 * shape[0])
torch.frombuffer = lambda buf, dtype: FakeTensor((len(buf),), dtype, "cpu", data=bytes(buf))
torch.cuda = types.SimpleNamespace(current_stream=lambda device: types.SimpleNamespace(
    cuda_stream=0x5000 + int(str(device).split(":")[1])))


def ptrs(line):
    return line.split(" params ")[1].split()


class Driver(unittest.TestCase):
    def setUp(self):
        # Each test starts from a process that has retained no context yet.
        fa_runtime.driver._ctxs.clear()
        fa_runtime.driver._sms.clear()
        log()

    def test_sm80_launch_ptrs(self):
        k = kernel("sm80", "attn_f16_d128_causal_lse")
        self.assertEqual(log(), [])  # loading touches no driver
        kinds(k)
        d1 = 1 << 40
        p = [d1 + 0x100000 * i for i in range(1, 6)]
        k.launch_ptrs(*p, stream=0x55, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000)
        lines = log()
        # The device of the pointers (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9), then its context.
        self.assertEqual(lines[:5], [f"cuPointerGetAttribute 9 {a:#x}" for a in p])
        self.assertEqual(lines[5:], [
            "cuDeviceGet 1", "cuDevicePrimaryCtxRetain device 101", "cuCtxSetCurrent 0xc0065",
            lines[8], "cuModuleGetFunction attn_f16_d128_causal_lse_kernel",
            "cuFuncSetAttribute 8 52352", "launch attn_f16_d128_causal_lse_kernel",
            "cuLaunchKernel grid 8 8 2 block 128 1 1 smem 52352 stream 0x55 extra null params "
            + " ".join(hex(a) for a in p) + " 2 8 2 1000 1000"])
        self.assertRegex(lines[8], r"^cuModuleLoadData \d+ bytes, has .entry$")
        # Again on device 1: no new context, no reload.
        k.launch_ptrs(*p, stream=0x55, B=1, Hq=2, Hkv=1, Nq=129, Nk=7)
        lines = log()
        self.assertEqual(lines[5:], ["cuCtxSetCurrent 0xc0065",
                                     "launch attn_f16_d128_causal_lse_kernel",
                                     "cuLaunchKernel grid 2 2 1 block 128 1 1 smem 52352 stream "
                                     "0x55 extra null params " + " ".join(hex(a) for a in p)
                                     + " 1 2 1 129 7"])
        # Device 0 asked for: its own context and module.
        k.launch_ptrs(*p, device=0, B=1, Hq=2, Hkv=1, Nq=129, Nk=7)
        lines = log()
        self.assertEqual(lines[:3], ["cuDeviceGet 0", "cuDevicePrimaryCtxRetain device 100",
                                     "cuCtxSetCurrent 0xc0064"])
        self.assertTrue(lines[3].startswith("cuModuleLoadData"))
        self.assertTrue(lines[-1].startswith("cuLaunchKernel grid 2 2 1"))
        # Nothing to compute: no launch.
        k.launch_ptrs(*p, B=1, Hq=2, Hkv=1, Nq=0, Nk=7)
        self.assertFalse([x for x in log() if x.startswith("cuLaunchKernel")])

    def test_pointer_devices(self):
        k = kernel("sm80", "attn_f16_d128_causal_lse")
        p = [(1 << 40) + 0x1000 * i for i in range(5)]
        with self.assertRaisesRegex(ValueError, r"pointers on devices \[1, 2\]"):
            k.launch_ptrs(*p[:4], p[4] + (1 << 40), B=1, Hq=1, Hkv=1, Nq=1, Nk=1)
        with self.assertRaisesRegex(ValueError, "q: 0x10 is not a CUDA device pointer"):
            k.launch_ptrs(0x10, *p[1:], B=1, Hq=1, Hkv=1, Nq=1, Nk=1)
        self.assertFalse([x for x in log() if x.startswith("cuLaunchKernel")])

    def test_sm90_persistent_grid(self):
        k = kernel("sm90", "attn_bf16_d64_persistent")
        kinds(k)
        maps = [0x7f0000000000 + 128 * i for i in range(3)]  # 64-byte aligned
        out = 0x7f0000100000
        k.launch_ptrs(*maps, out, B=2, Hq=8, Hkv=2, Nq=1000, Nk=1000)
        k.launch_ptrs(*maps, out, B=4, Hq=8, Hkv=2, Nq=1000, Nk=1000)
        lines = log()
        smem = k.manifest["dynamic_shared_memory_bytes"]
        self.assertEqual(len([x for x in lines if x.startswith("cuDeviceGetAttribute 16")]), 1)
        self.assertIn(f"cuFuncSetAttribute 8 {smem}", lines)
        launches = [x for x in lines if x.startswith("cuLaunchKernel")]
        # tiles = ceil(1000/128) * 8 * B = 128 (B = 2), 256 (B = 4); 132 SMs.
        self.assertEqual([x.split(" smem")[0] for x in launches],
                         ["cuLaunchKernel grid 128 1 1 block 384 1 1",
                          "cuLaunchKernel grid 132 1 1 block 384 1 1"])
        self.assertEqual(ptrs(launches[1]), [hex(a) for a in maps + [out]] + "4 8 2 1000 1000".split())

    def test_dynamic_tiles_counter(self):
        # A kernel with dynamic tiles takes tile_counter ([2] i32) before the sizes: the
        # runtime hands it one zeroed counter per (device, stream), the same on every
        # launch there (the kernel leaves it zero), another on another stream; a
        # counter the caller gives is checked and used.
        sys.modules["torch"] = torch
        try:
            k = kernel("sm90", "attn_f16_d64_causal_dynamic")
            kinds(k)
            self.assertEqual([p["name"] for p in k.manifest["params"]][4:6], ["tile_counter", "B"])
            q = FakeTensor((2, 8, 1000, 64), torch.float16, "cuda:1")
            kv = FakeTensor((2, 2, 1000, 64), torch.float16, "cuda:1")
            k(q, kv, kv)
            k(q, kv, kv)
            streams = torch.cuda.current_stream
            torch.cuda.current_stream = lambda device: types.SimpleNamespace(cuda_stream=0x6000)
            try:
                k(q, kv, kv)
            finally:
                torch.cuda.current_stream = streams
            mine = FakeTensor((2,), torch.int32, "cuda:1")
            k(q, kv, kv, tile_counter=mine)
            launches = [x for x in log() if x.startswith("cuLaunchKernel")]
            counters = [ptrs(x)[4] for x in launches]
            self.assertEqual(counters[0], counters[1])
            self.assertNotIn(counters[2], counters[:2])
            self.assertEqual(counters[3], hex(mine.data_ptr()))
            self.assertTrue(all(c == hex(int(c, 16)) and int(c, 16) >> 40 == 1 for c in counters))
            with self.assertRaisesRegex(ValueError, "tile_counter: shape"):
                k(q, kv, kv, tile_counter=FakeTensor((3,), torch.int32, "cuda:1"))
        finally:
            del sys.modules["torch"]

    def test_encode_tensor_map(self):
        m = kernel("sm90", "attn_f16_d128_causal_lse").manifest["tensor_maps"]
        sizes = dict(B=2, Hq=8, Hkv=2, Nq=1000, Nk=300, D=128)
        blob = encode_tensor_map(m[1], 0x7f0000001200, sizes)
        self.assertEqual(blob, bytes([0x12]) * 128)
        self.assertEqual(log()[-1], "cuTensorMapEncodeTiled dtype 6 rank 3 addr 0x7f0000001200 "
                                    "dims 128 300 4 strides 256 76800 box 64 128 1 estrides 1 1 1 "
                                    "interleave 0 swizzle 3 l2 2 oob 0")

    def test_call(self):
        sys.modules["torch"] = torch
        try:
            k = kernel("sm90", "attn_f16_d128_causal_lse")
            kinds(k)
            q = FakeTensor((2, 8, 1000, 128), torch.float16, "cuda:1")
            kk = FakeTensor((2, 2, 300, 128), torch.float16, "cuda:1")
            # v as a transposed view ([B, N, H, D] memory): copied before the launch.
            v = FakeTensor((2, 2, 300, 128), torch.float16, "cuda:1",
                           strides=(300 * 2 * 128, 128, 2 * 128, 1))
            out, lse = k(q, kk, v)
            lines = log()
            self.assertEqual((out.shape, str(out.dtype), out.device), ((2, 8, 1000, 128),
                                                                       "torch.float16", "cuda:1"))
            self.assertEqual((lse.shape, str(lse.dtype), lse.device), ((2, 8, 1000),
                                                                       "torch.float32", "cuda:1"))
            encodes = [x for x in lines if x.startswith("cuTensorMapEncodeTiled")]
            addrs = [re.search(r"addr (\S+)", x).group(1) for x in encodes]
            self.assertEqual(addrs[:2], [hex(q.data_ptr()), hex(kk.data_ptr())])
            self.assertNotEqual(addrs[2], hex(v.data_ptr()))  # the copy's
            self.assertIn("dims 128 1000 16 strides 256 256000 box 64 64 1", encodes[0])
            self.assertIn("dims 128 300 4 strides 256 76800 box 64 128 1", encodes[2])
            launch = [x for x in lines if x.startswith("cuLaunchKernel")]
            self.assertEqual(len(launch), 1)
            self.assertIn("grid 8 8 2 block 384 1 1 smem "
                          f"{k.manifest['dynamic_shared_memory_bytes']} stream 0x5001", launch[0])
            maps = k._maps[next(iter(k._maps))]
            self.assertEqual(maps.device, "cuda:1")
            self.assertEqual(maps.data, b"".join(bytes([(int(a, 16) >> 8) & 0xff]) * 128
                                                 for a in addrs))
            self.assertEqual(ptrs(launch[0]),
                             [hex(maps.data_ptr() + 128 * i) for i in range(3)]
                             + [hex(out.data_ptr()), hex(lse.data_ptr())]
                             + "2 8 2 1000 300".split())
            # Launched in device 1's primary context.
            ctx = [x for x in lines[:lines.index(launch[0])] if x.startswith("cuCtxSetCurrent")]
            self.assertEqual(ctx[-1], "cuCtxSetCurrent 0xc0065")
            # Maps are cached per (device, pointers, shapes): the same call twice encodes once.
            k(q, kk, kk, out=out, lse=lse)
            self.assertEqual(len([x for x in log() if x.startswith("cuTensorMapEncodeTiled")]), 3)
            k(q, kk, kk, out=out, lse=lse)
            lines = log()
            self.assertEqual(len([x for x in lines if x.startswith("cuTensorMapEncodeTiled")]), 0)
            self.assertEqual(len([x for x in lines if x.startswith("cuLaunchKernel")]), 1)
            # Empty: nothing launched, empty outputs.
            o, l = k(FakeTensor((2, 8, 0, 128), torch.float16, "cuda:1"), kk, kk)
            self.assertEqual((o.shape, l.shape), ((2, 8, 0, 128), (2, 8, 0)))
            self.assertFalse([x for x in log() if x.startswith("cuLaunchKernel")])
            # sm_80: plain pointers, no lse for a kernel without one.
            k80 = kernel("sm80", "attn_bf16_d64_persistent")
            kinds(k80)
            q = FakeTensor((1, 4, 33, 64), torch.bfloat16, "cuda:0")
            kv = FakeTensor((1, 1, 65, 64), torch.bfloat16, "cuda:0")
            out = k80(q, kv, kv)
            launch = [x for x in log() if x.startswith("cuLaunchKernel")]
            self.assertEqual(ptrs(launch[0]), [hex(t.data_ptr()) for t in (q, kv, kv, out)]
                             + "1 4 1 33 65".split())
            self.assertIn("grid 1 4 1 block 128 1 1", launch[0])
            self.assertIn("stream 0x5000", launch[0])
        finally:
            del sys.modules["torch"]


if __name__ == "__main__":
    DIR = sys.argv[1]
    print("fa_runtime", fa_runtime.SCHEMA_VERSION)
    unittest.main(argv=sys.argv[:1], verbosity=2)
