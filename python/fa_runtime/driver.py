"""ctypes bindings of the few CUDA driver calls the fa kernels need."""
import ctypes
import json
import math
import os

_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CudaError(RuntimeError):
    pass


_lib = None


def _cuda():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(os.environ.get("FA_LIBCUDA", "libcuda.so.1"))
    return _lib


def _check(rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        _cuda().cuGetErrorName(rc, ctypes.byref(name))
        raise CudaError(f"{what} failed: {rc} {name.value.decode() if name.value else ''}")


_ctx = None


def _ensure_context(device=0):
    """Makes the device's primary context current (the one torch uses)."""
    global _ctx
    cu = _cuda()
    if _ctx is None:
        _check(cu.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        _check(cu.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        _check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        _ctx = ctx
    _check(cu.cuCtxSetCurrent(_ctx), "cuCtxSetCurrent")
    return _ctx


# Parameters passed as a device pointer: plain tensors, and "tensormap" = a
# pointer to a 128-byte CUtensorMap in device memory (sm_90a kernels).
_PTR_TYPES = ("ptr", "tensormap")

_CU_DTYPE = {"f16": 6, "bf16": 9, "f32": 7}
_CU_SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
_CU_L2 = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
_CU_OOB = {"zero": 0, "nan": 1}


def encode_tensor_map(spec, address, sizes):
    """cuTensorMapEncodeTiled for one manifest "tensor_maps" entry; `sizes`
    gives the symbols of its dims/strides (D, Nq, Nk, B, Hq, Hkv).
    Returns the 128 bytes of the CUtensorMap."""
    env = dict(sizes)
    ev = lambda e: int(eval(str(e), {"__builtins__": {}}, env))  # noqa: E731
    rank = int(spec["rank"])
    dims = (ctypes.c_uint64 * rank)(*[ev(x) for x in spec["dims"]])
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*[ev(x) for x in spec["strides_bytes"]])
    box = (ctypes.c_uint32 * rank)(*[int(x) for x in spec["box"]])
    estr = (ctypes.c_uint32 * rank)(*[int(x) for x in spec["element_strides"]])
    buf = (ctypes.c_uint64 * 16)()  # 128 bytes, 64-byte alignment not needed on the host
    _check(_cuda().cuTensorMapEncodeTiled(
        ctypes.byref(buf), _CU_DTYPE[spec["dtype"]], rank, ctypes.c_void_p(int(address)),
        dims, strides, box, estr, 0 if spec.get("interleave", "none") == "none" else 1,
        _CU_SWIZZLE[spec["swizzle"]], _CU_L2[spec.get("l2_promotion", "none")],
        _CU_OOB[spec.get("oob_fill", "zero")]), "cuTensorMapEncodeTiled")
    return bytes(buf)


_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
_sms = {}


def _num_sms():
    """Multiprocessor count of the current context's device."""
    _ensure_context()
    cu = _cuda()
    dev = ctypes.c_int()
    _check(cu.cuCtxGetDevice(ctypes.byref(dev)), "cuCtxGetDevice")
    if dev.value not in _sms:
        n = ctypes.c_int()
        _check(cu.cuDeviceGetAttribute(ctypes.byref(n), _CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                       dev), "cuDeviceGetAttribute")
        _sms[dev.value] = n.value
    return _sms[dev.value]


def _ceil_div(a, b):
    return (a + b - 1) // b


class Kernel:
    """One kernel of a manifest: loads its PTX once, launches it many times."""

    def __init__(self, manifest, ptx_bytes):
        self.manifest = manifest
        _ensure_context()
        cu = _cuda()
        self._module = ctypes.c_void_p()
        _check(cu.cuModuleLoadData(ctypes.byref(self._module), ctypes.c_char_p(ptx_bytes)),
               "cuModuleLoadData")
        self._func = ctypes.c_void_p()
        _check(cu.cuModuleGetFunction(ctypes.byref(self._func), self._module,
                                      manifest["kernel"].encode()), "cuModuleGetFunction")
        self.dyn_smem = int(manifest.get("dynamic_shared_memory_bytes", 0))
        if self.dyn_smem > 48 * 1024:
            _check(cu.cuFuncSetAttribute(self._func,
                                         _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         self.dyn_smem), "cuFuncSetAttribute")

    @classmethod
    def load(cls, manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        ptx_path = os.path.join(os.path.dirname(manifest_path), manifest["ptx"])
        with open(ptx_path, "rb") as f:
            ptx = f.read() + b"\0"
        return cls(manifest, ptx)

    _GRID_FNS = {"__builtins__": {}, "ceil": math.ceil, "min": min, "max": max}

    def grid(self, sizes):
        """Evaluates the manifest's grid formulas on sizes: integers, size
        names, ceil(X/n), and for persistent kernels min(tiles, num_sms)
        with tiles = the manifest's "tiles" formula and num_sms = the
        device's multiprocessor count. The formulas are compiled once and the
        grid is memoized per sizes: this runs on every launch, and at short
        sequence lengths the host's launch path is as long as the kernel."""
        key = tuple(sorted(sizes.items()))
        memo = self.__dict__.setdefault("_grids", {})
        if key in memo:
            return memo[key]
        code = self.__dict__.get("_grid_code")
        if code is None:
            comp = lambda e: compile(str(e), "<grid>", "eval")  # noqa: E731
            code = self._grid_code = (
                comp(self.manifest["tiles"]) if "tiles" in self.manifest else None,
                [e if isinstance(e, int) else comp(e) for e in self.manifest["grid"]])
        env = dict(sizes)
        env["num_sms"] = _num_sms() if self.manifest.get("persistent") else 0
        ev = lambda c: c if isinstance(c, int) else int(eval(c, self._GRID_FNS, env))  # noqa: E731
        if code[0] is not None:
            env["tiles"] = ev(code[0])
        dims = [ev(c) for c in code[1]]
        if len(memo) > 256:
            memo.clear()
        memo[key] = dims
        return dims

    def launch_ptrs(self, *ptrs, stream=0, **sizes):
        """Launches on raw device pointers (in manifest order) and i32 sizes."""
        params = self.manifest["params"]
        ptr_params = [p for p in params if p["type"] in _PTR_TYPES]
        if len(ptrs) != len(ptr_params):
            raise ValueError(f"expected {len(ptr_params)} pointers, got {len(ptrs)}")
        holders = []
        it = iter(ptrs)
        for p in params:
            if p["type"] in _PTR_TYPES:
                holders.append(ctypes.c_void_p(int(next(it))))
            elif p["type"] == "i32":
                holders.append(ctypes.c_int32(int(sizes[p["name"]])))
            else:
                raise ValueError(f"unknown parameter type {p['type']}")
        argv = (ctypes.c_void_p * len(holders))(
            *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        gx, gy, gz = self.grid(sizes)
        bx, by, bz = self.manifest["block"]
        if gx == 0 or gy == 0 or gz == 0:
            return
        _ensure_context()
        _check(_cuda().cuLaunchKernel(self._func, gx, gy, gz, bx, by, bz, self.dyn_smem,
                                      ctypes.c_void_p(stream), argv, None), "cuLaunchKernel")

    def tensor_maps(self, q, k, v):
        """The q, k, v CUtensorMaps (manifest "tensor_maps") in one device
        buffer of 3 x 128 bytes; cached per (pointers, shapes)."""
        import torch
        key = (q.data_ptr(), k.data_ptr(), v.data_ptr(), tuple(q.shape), tuple(k.shape))
        cache = self.__dict__.setdefault("_maps", {})
        if key not in cache:
            B, Hq, Nq, D = q.shape
            sizes = dict(B=B, Hq=Hq, Hkv=k.shape[1], Nq=Nq, Nk=k.shape[2], D=D)
            addr = {"q_map": q.data_ptr(), "k_map": k.data_ptr(), "v_map": v.data_ptr()}
            blob = b"".join(encode_tensor_map(m, addr[m["param"]], sizes)
                            for m in self.manifest["tensor_maps"])
            host = torch.frombuffer(bytearray(blob), dtype=torch.uint8)
            if len(cache) > 64:
                cache.clear()
            cache[key] = host.to(q.device)  # allocations are 512-byte aligned
        return cache[key]

    def __call__(self, q, k, v, out=None, lse=None):
        """torch path: q [B,Hq,Nq,D], k/v [B,Hkv,Nk,D] on the GPU; returns out (and lse)."""
        import torch
        B, Hq, Nq, D = q.shape
        Hkv, Nk = k.shape[1], k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        if out is None:
            out = torch.empty_like(q)
        if self.manifest.get("tensor_maps"):
            maps = self.tensor_maps(q, k, v)
            ptrs = [maps.data_ptr() + 128 * i for i in range(3)] + [out.data_ptr()]
        else:
            ptrs = [q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()]
        if self.manifest.get("lse"):
            if lse is None:
                lse = torch.empty((B, Hq, Nq), device=q.device, dtype=torch.float32)
            ptrs.append(lse.data_ptr())
        stream = torch.cuda.current_stream(q.device).cuda_stream
        self.launch_ptrs(*ptrs, stream=stream, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk)
        return (out, lse) if self.manifest.get("lse") else out
