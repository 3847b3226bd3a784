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

    def grid(self, sizes):
        """Evaluates the manifest's grid formulas (ceil(X/n), X) on sizes."""
        dims = []
        for expr in self.manifest["grid"]:
            if expr.startswith("ceil("):
                name, div = expr[5:-1].split("/")
                dims.append(_ceil_div(sizes[name], int(div)))
            else:
                dims.append(sizes[expr])
        return dims

    def launch_ptrs(self, *ptrs, stream=0, **sizes):
        """Launches on raw device pointers (in manifest order) and i32 sizes."""
        params = self.manifest["params"]
        ptr_params = [p for p in params if p["type"] == "ptr"]
        if len(ptrs) != len(ptr_params):
            raise ValueError(f"expected {len(ptr_params)} pointers, got {len(ptrs)}")
        holders = []
        it = iter(ptrs)
        for p in params:
            if p["type"] == "ptr":
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

    def __call__(self, q, k, v, out=None, lse=None):
        """torch path: q [B,Hq,Nq,D], k/v [B,Hkv,Nk,D] on the GPU; returns out (and lse)."""
        import torch
        B, Hq, Nq, D = q.shape
        Hkv, Nk = k.shape[1], k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        if out is None:
            out = torch.empty_like(q)
        ptrs = [q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()]
        if self.manifest.get("lse"):
            if lse is None:
                lse = torch.empty((B, Hq, Nq), device=q.device, dtype=torch.float32)
            ptrs.append(lse.data_ptr())
        stream = torch.cuda.current_stream(q.device).cuda_stream
        self.launch_ptrs(*ptrs, stream=stream, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk)
        return (out, lse) if self.manifest.get("lse") else out
