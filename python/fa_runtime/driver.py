"""ctypes bindings of the few CUDA driver calls the fa kernels need.

What a launch must satisfy is checked by fa_runtime.manifest (pure Python, tested
without a GPU) before any driver call; this file only talks to libcuda.
"""
import ctypes
import json
import os
import threading

from .manifest import (AUXILIARY_OPS, CAPTURE_GRAD, FP8_QUANTIZE_OPS, SPLIT_KV_TENSORS, TensorDesc, auxiliary_manifests,
                       check_cu_seqlens, check_index_values, check_launch, check_manifest,
                       check_num_splits, check_pointers, check_size, check_sizes, compile_expr,
                       cuda_ordinal, op_of, output_shapes, packed_sizes, page_size,
                       takes_kv_lens, takes_split_kv, takes_varlen, tensor_map_args,
                       tensor_params, uses_symbol, varlen_layout)

# Driver constants that are not part of a kernel's contract (cuda.h names).
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9


class CudaError(RuntimeError):
    pass


def check_indices_default():
    """The checked mode's default (FA_CHECK_INDICES=1; read on each launch of a
    kernel with kv_lens, a page table or packed variable-length sequences)."""
    return os.environ.get("FA_CHECK_INDICES", "").lower() in ("1", "true", "yes", "on")


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


_ctxs = {}  # device ordinal -> its retained primary context
_initialized = False


def _init():
    global _initialized
    if not _initialized:
        _check(_cuda().cuInit(0), "cuInit")
        _initialized = True


def _ensure_context(device=0):
    """Makes the primary context of CUDA device `device` (an ordinal, as in
    torch's cuda:N) current, retaining it the first time; torch uses the same
    primary contexts."""
    cu = _cuda()
    ctx = _ctxs.get(device)
    if ctx is None:
        _init()
        dev = ctypes.c_int()
        _check(cu.cuDeviceGet(ctypes.byref(dev), device), f"cuDeviceGet({device})")
        ctx = ctypes.c_void_p()
        _check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        _ctxs[device] = ctx
    _check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


_sms = {}


def multiprocessor_count(device):
    """Multiprocessor count of CUDA device `device` (an ordinal), cached; the
    split-KV plans take it (fa_runtime and fa.torch_ops)."""
    if device not in _sms:
        _init()
        cu = _cuda()
        dev = ctypes.c_int()
        _check(cu.cuDeviceGet(ctypes.byref(dev), device), f"cuDeviceGet({device})")
        n = ctypes.c_int()
        _check(cu.cuDeviceGetAttribute(ctypes.byref(n), _CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                       dev), "cuDeviceGetAttribute")
        _sms[device] = n.value
    return _sms[device]


def _pointer_device(ptr, name):
    """The ordinal of the device a pointer was allocated on."""
    _init()
    ordinal = ctypes.c_int()
    rc = _cuda().cuPointerGetAttribute(ctypes.byref(ordinal), _CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                       ctypes.c_uint64(ptr))
    if rc != 0:
        raise ValueError(f"{name}: {ptr:#x} is not a CUDA device pointer (driver error {rc})")
    return ordinal.value


def encode_tensor_map(spec, address, sizes):
    """cuTensorMapEncodeTiled for one manifest "tensor_maps" entry; `sizes`
    gives the values of its dims/strides symbols (B, Hq, Hkv, Nq, Nk, D); the
    enum values are the ones the compiler wrote (cuda_enums).
    Returns the 128 bytes of the CUtensorMap."""
    a = tensor_map_args(spec, sizes)
    rank = a["rank"]
    dims = (ctypes.c_uint64 * rank)(*a["dims"])
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*a["strides_bytes"])
    box = (ctypes.c_uint32 * rank)(*a["box"])
    estr = (ctypes.c_uint32 * rank)(*a["element_strides"])
    buf = (ctypes.c_uint64 * 16)()  # 128 bytes, 64-byte alignment not needed on the host
    _check(_cuda().cuTensorMapEncodeTiled(
        ctypes.byref(buf), a["data_type"], rank, ctypes.c_void_p(int(address)),
        dims, strides, box, estr, a["interleave"], a["swizzle"], a["l2_promotion"],
        a["oob_fill"]), f"cuTensorMapEncodeTiled({spec['param']})")
    return bytes(buf)


_TORCH_DTYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float32": "f32",
                 "torch.float8_e4m3fn": "f8e4m3", "torch.bool": "bool", "torch.int8": "i8",
                 "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64"}


def transpose_v_fp8(v, key_order):
    """The fp8 kernels' V operand: v [B, Hkv, Nk, D] (float8_e4m3fn) as v_t [B, Hkv, D, Nk32]
    (Nk padded with zeros to a multiple of len(key_order)), the keys of each group in
    `key_order` (the manifest's "v_key_order"): v_t[b, h, d, 32g + c] = v[b, h, 32g + order[c], d].
    One read and one write of v (the quantization pass that writes v can write this instead)."""
    import torch
    B, H, N, D = v.shape
    g = len(key_order)
    n32 = -(-N // g) * g
    u = v.view(torch.uint8)
    if n32 != N:
        u = torch.nn.functional.pad(u, (0, 0, 0, n32 - N))
    order = torch.tensor(key_order, device=v.device)
    u = u.view(B, H, n32 // g, g, D).index_select(3, order)
    return u.permute(0, 1, 4, 2, 3).reshape(B, H, D, n32).contiguous().view(v.dtype)


def current_stream(torch, device):
    """The raw handle of torch's current stream on `device` (a torch.device):
    torch's own C accessor where it has one (a fraction of a microsecond,
    against several for torch.cuda.current_stream(); this runs on every
    launch), else the public API."""
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is not None and device.index is not None:
        return raw(device.index)
    return torch.cuda.current_stream(device).cuda_stream


def describe(t):
    """The TensorDesc of a torch tensor (what fa_runtime.manifest checks)."""
    return TensorDesc(tuple(t.shape), _TORCH_DTYPES.get(str(t.dtype), str(t.dtype)),
                      str(t.device), tuple(t.stride()), t.data_ptr())


# Buffers of launches, per (device ordinal, stream handle) and name: flat tensors that grow
# (never shrink) to the largest launch's element count. Launches on one stream run one after
# another, so they share them; two streams never do. A zeroed buffer is zeroed when
# allocated and every launch leaves it zero (the kernel's last CTA resets it): the tile
# counter of kernels with dynamic tiles, split-KV's split_counter; no memset per launch.
# The others are uninitialized scratch (split_o, split_lse). A grown buffer replaces the
# old one, which torch's caching allocator reuses only for work of the same stream (the
# stream it was allocated on: the launch's), ordered after the launches that still read it.
_STREAM_BUFFERS = {}


def stream_buffer(device, stream, name, dtype, numel, zeroed):
    """The buffer `name` ("i32" or "f32" `dtype`, at least `numel` elements and 1;
    zero when `zeroed`, else uninitialized) of (device ordinal, stream handle),
    allocated on the first use and reallocated when a launch needs more."""
    bufs = _STREAM_BUFFERS.setdefault((device, stream), {})
    buf = bufs.get(name)
    if buf is None or int(buf.shape[0]) < numel:
        import torch
        # On the device's current stream: the launch's (Kernel.__call__).
        make = torch.zeros if zeroed else torch.empty
        buf = make((max(numel, 1),), dtype=torch.int32 if dtype == "i32" else torch.float32,
                   device=f"cuda:{device}")
        bufs[name] = buf
    return buf


def tile_counter(device, stream):
    """The zeroed tile counter ([2] int32) of (device ordinal, stream handle)."""
    return stream_buffer(device, stream, "tile_counter", "i32", 2, zeroed=True)


def split_kv_workspace(device, stream, name, numel):
    """The split-KV workspace `name` (SPLIT_KV_TENSORS: split_o, split_lse:
    float32, uninitialized; split_counter: int32, zero) of (device ordinal,
    stream handle), at least `numel` elements."""
    i32 = SPLIT_KV_TENSORS[name] == "i32"
    return stream_buffer(device, stream, name, "i32" if i32 else "f32", numel, zeroed=i32)


def longest_sequence(cu_seqlens_q, Nq):
    """The most query rows of one sequence of a varlen launch, as the kernel
    sees them (offsets clamped into [0, Nq]), at least 0; cu_seqlens_q has at
    least 2 entries. Computed on the device and copied to the host: a
    synchronization."""
    cu = cu_seqlens_q.clamp(0, Nq)
    return max(int((cu[1:] - cu[:-1]).max()), 0)


class Kernel:
    """One kernel of a manifest: loads its PTX once per device (on the first
    launch there), launches it many times."""

    def __init__(self, manifest, ptx_bytes, _module_owner=None):
        # ManifestError (a ValueError) before anything else
        check_manifest(manifest, _auxiliary=_module_owner is not None)
        self.manifest = manifest
        self._ptx = ptx_bytes
        self._funcs = {}  # device ordinal -> (CUmodule, CUfunction)
        # An auxiliary kernel takes its function from the module its owner loaded
        # (one PTX, JIT-compiled once per device).
        self._module_owner = _module_owner
        # op -> Kernel: the manifest's auxiliary kernels (the backward's
        # preprocess and postprocess), launched by grad.
        self._aux = {op: Kernel(m, ptx_bytes, _module_owner=self)
                     for op, m in auxiliary_manifests(manifest).items()}
        self.dyn_smem = int(manifest.get("dynamic_shared_memory_bytes", 0))
        self._grid_code = [compile_expr(e, f"grid[{i}]") for i, e in enumerate(manifest["grid"])]
        self._grid_needs_sms = any(uses_symbol(e, "num_sms") for e in manifest["grid"])
        self._ptr_params = tensor_params(manifest)
        self.op = op_of(manifest)  # "attention" (__call__) or "attention_grad" (grad)
        self.kv_lens = takes_kv_lens(manifest)  # takes kv_lens [B] i32
        self.page_size = page_size(manifest)  # paged: K, V page pools, a page_table
        # packed sequences: cu_seqlens_q, cu_seqlens_k [B + 1] i32, the size max_seqlen_q
        self.varlen = takes_varlen(manifest)
        # their memory layout: "thd" (q [Nq, Hq, D], ...) or "htd" ([1, Hq, Nq, D]); else None
        self.varlen_layout = varlen_layout(manifest)
        # dynamic tiles: a tile counter per stream (tile_counter), unless the caller gives one
        self.takes_tile_counter = any(p["tensor"] == "tile_counter" for p in self._ptr_params)
        # split-KV: num_splits CTAs per query tile, the workspaces split_o, split_lse,
        # split_counter per stream (split_kv_workspace), unless the caller gives them
        self.split_kv = takes_split_kv(manifest)
        # ... and the compiler's plan of it (manifest "num_splits_plan"), the default
        plan = manifest.get("num_splits_plan")
        self._split_plan = compile_expr(plan, "num_splits_plan") if plan is not None else None
        # What every launch reads, computed once (the host's launch path is as long as a
        # short kernel).
        self._fp8 = manifest.get("dtype") == "f8e4m3"
        # fp8 kernels read V^T from a pre-pass (v_t), unless they transpose v
        # themselves (transpose_v: they take v as stored, like k)
        self._fp8_v_t = "v_key_order" in manifest
        self._has_lse = any(p["tensor"] == "lse" for p in self._ptr_params)
        self._map_slot = {m["param"]: i for i, m in enumerate(manifest.get("tensor_maps") or [])}
        self._param_is_i32 = [p["type"] == "i32" for p in manifest["params"]]
        self._i32_names = [p["name"] for p in manifest["params"] if p["type"] == "i32"]
        # Per thread: the kernel parameters' ctypes holders and their argv, reused by
        # every launch (cuLaunchKernel copies the values; a thread's launches are
        # sequential, and the ctypes call lets other threads run meanwhile).
        self._holders = threading.local()
        self._split_kv_shapes = {
            p["tensor"]: [compile_expr(e, f"{p['tensor']}.shape[{i}]")
                          for i, e in enumerate(p["shape"])]
            for p in self._ptr_params if p["tensor"] in SPLIT_KV_TENSORS}

    @classmethod
    def load(cls, manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        check_manifest(manifest, manifest_path)
        ptx_path = os.path.join(os.path.dirname(manifest_path), manifest["ptx"])
        with open(ptx_path, "rb") as f:
            ptx = f.read() + b"\0"
        return cls(manifest, ptx)

    def _function(self, device):
        """The kernel's CUfunction in device `device`'s primary context (made
        current), loading the PTX there the first time."""
        _ensure_context(device)
        if device not in self._funcs:
            cu = _cuda()
            if self._module_owner is not None:
                self._module_owner._function(device)
                module = self._module_owner._funcs[device][0]
            else:
                module = ctypes.c_void_p()
                _check(cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(self._ptx)),
                       "cuModuleLoadData")
            func = ctypes.c_void_p()
            _check(cu.cuModuleGetFunction(ctypes.byref(func), module,
                                          self.manifest["kernel"].encode()),
                   "cuModuleGetFunction")
            if self.dyn_smem > 48 * 1024:
                _check(cu.cuFuncSetAttribute(func,
                                             _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             self.dyn_smem), "cuFuncSetAttribute")
            self._funcs[device] = (module, func)
        return self._funcs[device][1]

    def grid(self, sizes, device=0, num_sms=None):
        """The manifest's grid (typed expressions, fa_runtime.manifest) at these
        sizes; num_sms, when the grid uses it (persistent kernels), is the
        device's multiprocessor count unless given. Memoized per (sizes, SMs):
        this runs on every launch, and at short sequence lengths the host's
        launch path is as long as the kernel."""
        if self._grid_needs_sms and num_sms is None:
            num_sms = multiprocessor_count(device)
        key = (tuple(sizes.items()), num_sms)  # names and values (an order: one more entry)
        memo = self.__dict__.setdefault("_grids", {})
        if key not in memo:
            env = dict(sizes, D=self.manifest["head_dim"])
            if num_sms is not None:
                env["num_sms"] = num_sms
            if len(memo) > 256:
                memo.clear()
            memo[key] = [int(c(env)) for c in self._grid_code]
        return memo[key]

    def num_splits_plan(self, sizes, device=0, num_sms=None):
        """A split-KV kernel's num_splits for these launch sizes (B, Hq, Hkv,
        Nq, Nk, ...) as its manifest's "num_splits_plan" gives it (the
        compiler's measured plan; the device's SM count unless `num_sms`), 1
        when the manifest has none."""
        if self._split_plan is None:
            return 1
        if num_sms is None:
            num_sms = multiprocessor_count(device)
        return max(int(self._split_plan(dict(sizes, D=self.manifest["head_dim"],
                                             num_sms=num_sms))), 1)

    def _launch(self, ptrs, sizes, stream, device):
        """cuLaunchKernel on checked pointers (manifest order) and sizes."""
        gx, gy, gz = self.grid(sizes, device)
        if gx == 0 or gy == 0 or gz == 0:
            return
        local = self._holders
        holders = getattr(local, "holders", None)
        if holders is None:
            holders = [ctypes.c_int32() if i32 else ctypes.c_void_p()
                       for i32 in self._param_is_i32]
            local.holders = holders
            local.argv = (ctypes.c_void_p * len(holders))(
                *[ctypes.addressof(h) for h in holders])
        it, names = iter(ptrs), iter(self._i32_names)
        for h, i32 in zip(holders, self._param_is_i32):
            h.value = sizes[next(names)] if i32 else next(it)
        bx, by, bz = self.manifest["block"]
        func = self._function(device)
        _check(_cuda().cuLaunchKernel(func, gx, gy, gz, bx, by, bz, self.dyn_smem,
                                      ctypes.c_void_p(stream), local.argv, None),
               "cuLaunchKernel")

    def launch_ptrs(self, *ptrs, stream=0, device=None, **sizes):
        """Launches on raw device pointers (in manifest order) and i32 sizes, on
        CUDA device `device` (default: the device the first pointer lives on).
        Checks the count and alignment of the pointers and the sizes first
        (ValueError naming the parameter); cannot check what they point to.
        A kernel with dynamic tiles takes its tile_counter here too: an int32
        [2] buffer, zero, used by no launch running at the same time (the
        kernel leaves it zero; tile_counter(device, stream) keeps one). A
        split-KV kernel takes the size num_splits (1 .. 1024) and the pointers
        of its workspaces split_o, split_lse and split_counter (that one zero,
        used by no launch running at the same time; split_kv_workspace(device,
        stream, name, numel) keeps them)."""
        ptrs = check_pointers(self.manifest, ptrs)
        sizes = check_sizes(self.manifest, sizes)
        if device is None:
            devs = {_pointer_device(a, p["name"]) for a, p in zip(ptrs, self._ptr_params)
                    if p["type"] == "ptr"}
            if len(devs) != 1:
                raise ValueError(f"pointers on devices {sorted(devs)}: all must be on one device")
            device = devs.pop()
        self._launch(ptrs, sizes, stream, device)

    def tensor_maps(self, q, k, v, sizes=None):
        """The q, k, v CUtensorMaps (manifest "tensor_maps") in one device
        buffer of 3 x 128 bytes, on q's device; cached per (device, pointers,
        shapes). For fp8 kernels `v` is v_t (transpose_v_fp8)."""
        key = (q.device, q.data_ptr(), k.data_ptr(), v.data_ptr(), tuple(q.shape),
               tuple(k.shape), tuple(v.shape))
        cache = self.__dict__.setdefault("_maps", {})
        if key not in cache:
            _ensure_context(cuda_ordinal(q.device, "q"))
            if sizes is None and self.varlen:  # packed in the kernel's layout
                sizes = packed_sizes(self.varlen_layout, q.shape, k.shape)
            elif sizes is None:
                B, Hq, Nq, _ = q.shape
                sizes = dict(B=B, Hq=Hq, Hkv=k.shape[1], Nq=Nq, Nk=k.shape[2])
                if self.page_size:  # a page pool [num_pages, Hkv, S, D]
                    sizes["num_pages"] = k.shape[0]
            addr = {"q": q.data_ptr(), "k": k.data_ptr(), "v": v.data_ptr(),
                    "v_t": v.data_ptr()}
            if len(cache) > 64:
                cache.clear()
            cache[key] = self._device_maps(addr, sizes, q.device)
        return cache[key]

    def _device_maps(self, addr, sizes, device):
        """The manifest's CUtensorMaps, in its order, over the tensors at `addr`
        (tensor name -> device address) at launch sizes `sizes`, copied into
        one device buffer of 128 bytes per map on `device`."""
        import torch
        env = dict(sizes, D=self.manifest["head_dim"])
        tensor_of = {p["name"]: p["tensor"] for p in self._ptr_params}
        blob = b"".join(encode_tensor_map(m, addr[tensor_of[m["param"]]], env)
                        for m in self.manifest["tensor_maps"])
        host = torch.frombuffer(bytearray(blob), dtype=torch.uint8)
        # Allocations are 512-byte aligned. non_blocking: from pageable memory CUDA
        # stages the bytes before returning, so the copy is ordered on the current
        # stream without the stream synchronization that a blocking copy costs on
        # every call with new pointers.
        return host.to(device, non_blocking=True)

    def grad_tensor_maps(self, tensors, sizes):
        """A backward kernel's CUtensorMaps (manifest "tensor_maps": the sm_90a
        kernel's q_map, k_map, v_map, do_map and dq_accum_map) over `tensors`
        (tensor name -> torch tensor, at least the maps' tensors: q and do
        [B, Hq, Nq, D], k and v [B, Hkv, Nk, D] contiguous, dq_accum
        [B, Hq, Nq, D] f32) at launch sizes `sizes` (B,
        Hq, Hkv, Nq, Nk), in one device buffer of 128 bytes per map on
        dq_accum's device, in the manifest's order; cached per (device,
        addresses, sizes). The pointer of map i is the buffer's address +
        128 i (launch_ptrs takes it in the tensormap parameter's place)."""
        tensor_of = {p["name"]: p["tensor"] for p in self._ptr_params}
        names = [tensor_of[m["param"]] for m in self.manifest["tensor_maps"]]
        device = tensors[names[-1]].device
        key = (device, tuple(tensors[n].data_ptr() for n in names),
               tuple(sorted(sizes.items())))
        cache = self.__dict__.setdefault("_grad_maps", {})
        if key not in cache:
            _ensure_context(cuda_ordinal(device, names[-1]))
            if len(cache) > 64:
                cache.clear()
            cache[key] = self._device_maps({n: tensors[n].data_ptr() for n in names},
                                           sizes, device)
        return cache[key]

    def grad_pointers(self, tensors, sizes):
        """A backward kernel's (or its auxiliary kernel's) pointer arguments in
        launch order over `tensors` (tensor name -> torch tensor, every tensor
        the parameters name): a tensormap parameter (sm_90a: q_map, k_map,
        v_map, do_map, dq_accum_map) gets the pointer to its CUtensorMap
        (grad_tensor_maps), a ptr parameter the tensor's address."""
        if not self._map_slot:
            return [tensors[p["tensor"]].data_ptr() for p in self._ptr_params]
        maps = self.grad_tensor_maps(tensors, sizes).data_ptr()
        return [maps + 128 * self._map_slot[p["name"]] if p["type"] == "tensormap"
                else tensors[p["tensor"]].data_ptr() for p in self._ptr_params]

    def check(self, q, k, v, out=None, lse=None, copy_inputs=True, num_splits=None, **extra):
        """fa_runtime.manifest.check_launch on torch tensors: the LaunchPlan, or
        ValueError naming the argument that does not fit the kernel. `extra`:
        the fp8 kernels' v_t, q_descale, k_descale, v_descale. `num_splits`:
        a split-KV kernel's (default 1; in the plan's sizes).

        Memoized: the plan depends only on each tensor's shape, strides, dtype,
        device and address modulo 64 (the alignments the manifest can ask
        for), so a call like an earlier one skips the checks (they are most of
        the host's launch path at short sequence lengths). Failures are not
        memoized."""
        names = ("q", "k", "v", "out", "lse") + tuple(sorted(extra))
        tensors = (q, k, v, out, lse) + tuple(extra[n] for n in names[5:])
        key = names + tuple(None if t is None else
                            (t.shape, t.stride(), t.dtype, t.device, t.data_ptr() % 64)
                            for t in tensors) + (copy_inputs, num_splits)
        memo = self.__dict__.setdefault("_plans", {})
        plan = memo.get(key)
        if plan is None:
            plan = check_launch(self.manifest,
                                {n: (describe(t) if t is not None else None)
                                 for n, t in zip(names, tensors)}, copy_inputs, num_splits)
            if len(memo) > 1024:
                memo.clear()
            memo[key] = plan
        return plan

    def __call__(self, q, k, v, out=None, lse=None, *, kv_lens=None, page_table=None,
                 cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, check_indices=None,
                 q_descale=None, k_descale=None, v_descale=None, v_t=None, num_splits=None,
                 **inputs):
        """torch path: q [B,Hq,Nq,D], k/v [B,Hkv,Nk,D] on one CUDA device; out
        [B,Hq,Nq,D] and lse [B,Hq,Nq] f32 (kernels with lse) are allocated
        unless given. Checked first (Kernel.check): non-contiguous q, k, v are
        copied, everything else that does not fit raises ValueError. Launches
        on the tensors' device, on its current torch stream. Returns out (and
        lse).
        Kernels with "kv_lens" take kv_lens [B] int32 (sequence b sees keys
        j < clamp(kv_lens[b], 0, Nk), its causal/window diagonal at
        L_b - Nq); paged kernels ("page_size" S) take k, v as page pools
        [num_pages, Hkv, S, D] and page_table [B, max_pages] int32 (key j of
        sequence b is k[page_table[b, j // S], :, j % S]; Nk = max_pages * S).
        The kernel clamps lengths and page ids; check_indices=True (default:
        FA_CHECK_INDICES=1) first reads both on the host (a synchronization)
        and raises ValueError naming the sequence and page of a length outside
        0 .. Nk or a page id outside the pool (manifest.check_index_values).
        Varlen kernels ("varlen") take B sequences packed along the tokens, in
        the layout of the manifest's "varlen_layout": "thd" (token-major,
        FlashAttention's varlen layout) q [Tq, Hq, D], k, v [Tk, Hkv, D], out
        [Tq, Hq, D], lse [Hq, Tq]; "htd" (one batch row) q [1, Hq, Tq, D],
        k, v [1, Hkv, Tk, D], out [1, Hq, Tq, D], lse [1, Hq, Tq]; and
        cu_seqlens_q, cu_seqlens_k [B + 1] int32 on q's device (sequence s has
        the query rows [cu_q[s], cu_q[s + 1]) and the keys [cu_k[s],
        cu_k[s + 1])). max_seqlen_q (an int, at least the longest
        sequence's query rows) sizes the grid; when None it is computed from
        cu_seqlens_q on the device and copied to the host (a synchronization;
        pass it to avoid one). The kernel clamps the offsets into [0, Tq] and
        [0, Tk] and leaves the rows of out and lse that no sequence covers
        (and a sequence's rows past max_seqlen_q) unwritten; the checked mode
        reads the offsets on the host and raises ValueError naming the
        sequence unless they start at 0, never decrease and end at Tq / Tk,
        and max_seqlen_q covers every sequence (manifest.check_cu_seqlens).
        fp8 kernels (dtype f8e4m3): q, k, v are float8_e4m3fn, the descales
        [1] f32 device tensors; v is transposed here (transpose_v_fp8) unless
        v_t is given (then v may be None), or the kernel was built with
        transpose-v (manifest "transpose_v": it takes v as stored).
        `inputs`: the other tensors the manifest names (a kernel of an attention
        with a mask operand takes `mask`; one whose score_mod / mask_mod reads a
        function argument N takes it as `argN`); non-contiguous ones are copied.
        A kernel with dynamic tiles ("tile_counter") gets the stream's zeroed
        counter (tile_counter()) unless `tile_counter` is given: an int32 [2]
        tensor, zero, that no launch running at the same time uses.
        Split-KV kernels ("split_kv") cut the keys of each query tile into
        `num_splits` chunks (an int in 1 .. 1024; 1: the plain kernel's
        result), a CTA each; an error for other kernels. By default the
        manifest's "num_splits_plan" for these sizes and the device's SM count
        (the compiler's measured plan; num_splits_plan()), 1 without one. Their
        workspaces split_o [num_splits, B, Hq, Nq, D] f32, split_lse
        [num_splits, B, Hq, Nq] f32 and split_counter [B, Hq, ceil(Nq / 128)]
        int32 are the stream's (split_kv_workspace: grown as needed, the
        counter zero) unless given as `split_o=`, `split_lse=`,
        `split_counter=` (contiguous, checked against their contracts at this
        num_splits; the counter zero and used by no launch running at the same
        time). With num_splits = 1 the kernel does not touch split_o and
        split_lse, and the stream's are passed as they are (not grown)."""
        fp8 = self._fp8
        extra = {n: t for n, t in inputs.items() if t is not None}
        for name, t in (("kv_lens", kv_lens), ("page_table", page_table),
                        ("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
            if t is not None:
                extra[name] = t
        self._check_longest("max_seqlen_q", max_seqlen_q)
        if num_splits is not None and not self.split_kv:
            raise ValueError(f"num_splits: kernel {self.manifest['kernel']} takes no "
                             f"num_splits: it was compiled without split-KV (a variant with "
                             f"split_kv takes it)")
        if self.split_kv and num_splits is not None:
            check_num_splits(num_splits)
        if fp8:
            extra.update({"q_descale": q_descale, "k_descale": k_descale,
                          "v_descale": v_descale})
            for name in ("q_descale", "k_descale", "v_descale"):
                if extra[name] is None:
                    raise ValueError(f"{name}: missing (fp8 kernel {self.manifest['kernel']})")
            if self._fp8_v_t:
                if v_t is None:
                    v_t = transpose_v_fp8(v, self.manifest["v_key_order"])
                extra["v_t"] = v_t
                v = None
            elif v_t is not None:
                raise ValueError(f"v_t: kernel {self.manifest['kernel']} takes v as stored "
                                 f"(transpose_v: it transposes V itself); pass v")
            else:
                fp8 = False  # v goes in as it is (its tensor map is v's)
        # before anything touches the GPU
        plan = self.check(q, k, v, out, lse, num_splits=num_splits, **extra)
        if self.split_kv and num_splits is None and self._split_plan is not None \
                and not plan.empty:
            # The compiler's plan for these sizes (then the workspaces given, if any, are
            # checked against it).
            num_splits = self.num_splits_plan(plan.sizes, plan.device)
            plan = self.check(q, k, v, out, lse, num_splits=num_splits, **extra)
        if self.split_kv:
            num_splits = plan.sizes["num_splits"]
        import torch
        s = plan.sizes
        if "q" in plan.copies:
            q = q.contiguous()
        if "k" in plan.copies:
            k = k.contiguous()
        if "v" in plan.copies:
            v = v.contiguous()
        for name in plan.copies:
            if name in extra:
                extra[name] = extra[name].contiguous()
        # A varlen kernel's B counts sequences, packed in its layout (thd: out [Nq, Hq, D],
        # lse [Hq, Nq]; htd: [1, Hq, Nq, D], [1, Hq, Nq]).
        out_shape, lse_shape = output_shapes(self.manifest, s)
        if out is None:
            out_dtype = q.dtype
            if "out_dtype" in self.manifest:
                out_dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[
                    self.manifest["out_dtype"]]
            out = torch.empty(out_shape, device=q.device, dtype=out_dtype)
        has_lse = self._has_lse
        if has_lse and lse is None:
            lse = torch.empty(lse_shape, device=q.device, dtype=torch.float32)
        if check_indices is None and (self.kv_lens or self.page_size or self.varlen):
            check_indices = check_indices_default()
        if check_indices and not plan.empty and (self.kv_lens or self.page_size):
            self.check_indices(plan, extra.get("kv_lens"), extra.get("page_table"))
        if self.varlen:
            longest = None
            if check_indices:
                # Even with nothing to compute: q's rows that no sequence covers
                # would be left unwritten.
                longest = self.check_cu_seqlens(plan, extra["cu_seqlens_q"],
                                                extra["cu_seqlens_k"], max_seqlen_q)
            if max_seqlen_q is None and longest is not None:
                max_seqlen_q = longest  # the checked mode read the offsets already
            elif max_seqlen_q is None:
                # Nothing to compute (no sequence, or no row): no need to read the offsets.
                max_seqlen_q = 0 if plan.empty else longest_sequence(extra["cu_seqlens_q"],
                                                                     s["Nq"])
            s = dict(s, max_seqlen_q=max_seqlen_q)
        # A varlen grid of no CTAs (max_seqlen_q = 0): no tensor maps to encode either.
        if not plan.empty and (not self.varlen or max_seqlen_q > 0):
            stream = current_stream(torch, q.device)
            if self.takes_tile_counter and "tile_counter" not in extra:
                extra["tile_counter"] = tile_counter(plan.device, stream)
            if self.split_kv:
                env = dict(s, D=self.manifest["head_dim"])
                for name, shape in self._split_kv_shapes.items():
                    if name in extra:
                        continue
                    numel = 1
                    for dim in shape:
                        numel *= dim(env)
                    if num_splits == 1 and name != "split_counter":
                        numel = 0  # not touched: any valid pointer
                    extra[name] = split_kv_workspace(plan.device, stream, name, numel)
            tensors = {"q": q, "k": k, "v": v, "out": out, "lse": lse, **extra}
            if self._map_slot:
                maps = self.tensor_maps(q, k, v_t if fp8 else v, s)
                slot = self._map_slot
                ptrs = [maps.data_ptr() + 128 * slot[p["name"]] if p["type"] == "tensormap"
                        else tensors[p["tensor"]].data_ptr() for p in self._ptr_params]
            else:
                ptrs = [tensors[p["tensor"]].data_ptr() for p in self._ptr_params]
            self._launch(ptrs, s, stream, plan.device)
        return (out, lse) if has_lse else out

    def check_indices(self, plan, kv_lens, page_table):
        """The checked mode: kv_lens and the page ids a sequence reads, on the
        host (manifest.check_index_values; ValueError)."""
        s = plan.sizes
        check_index_values(None if kv_lens is None else kv_lens.tolist(),
                           None if page_table is None else page_table.tolist(),
                           s["Nk"], s.get("num_pages"), self.page_size)

    def _check_longest(self, name, value):
        """A varlen launch's max_seqlen_q / max_seqlen_k (None: read from the
        offsets): ValueError for a kernel without varlen or a size outside i32."""
        if value is None:
            return
        if not self.varlen:
            raise ValueError(f"{name}: kernel {self.manifest['kernel']} takes no {name}: it "
                             f"was compiled without packed variable-length sequences (a "
                             f"variant with varlen takes it)")
        check_size(name, value, name)

    def check_cu_seqlens(self, plan, cu_seqlens_q, cu_seqlens_k, max_seqlen_q):
        """The checked mode of a varlen kernel: the offsets on the host
        (manifest.check_cu_seqlens; ValueError). Returns the longest
        sequence's query rows."""
        s = plan.sizes
        return check_cu_seqlens(cu_seqlens_q.tolist(), cu_seqlens_k.tolist(), s["Nq"], s["Nk"],
                                max_seqlen_q)

    def grad(self, q, k, v, o, lse, do, *, grad_lse=None, cu_seqlens_q=None,
             cu_seqlens_k=None, max_seqlen_k=None, check_indices=None, **inputs):
        """torch path of a backward kernel (manifest op "attention_grad",
        docs/Backward.md): the gradients (dq, dk, dv) of attention(q, k, v) = o
        given do = dL/do, from the forward's o and lse ([B, Hq, Nq] f32,
        natural log). `grad_lse` ([B, Hq, Nq], dL/dlse, when the loss also
        uses lse) enters as delta - grad_lse: d lse_i / d s_ij = P_ij, exactly
        the term delta multiplies. Checked first (Kernel.check): q, k, v, do,
        lse non-contiguous are copied; o and grad_lse may have any strides.
        Then, on the current torch stream of the tensors' device: delta =
        rowsum(do * o) in f32 and dq_accum = 0 (f32), the kernel (which adds
        scale * dS K into dq_accum atomically and writes dk, dv whole), and
        dq = dq_accum rounded to q's dtype; before and after the kernel by the
        manifest's auxiliary kernels (its preprocess: o is then copied when not
        contiguous; its postprocess), else by torch. dk, dv have k's shape (GQA: summed
        over the query heads of a group). A deterministic kernel (manifest
        parameter dq_semaphore) also gets its zeroed counters, and its dq is
        bitwise the same on every run. `inputs`: the forward's mask operand
        as `mask` (a kernel compiled with one: the same contract as the
        forward's) and the tensors the op's score_mod / mask_mod read, as
        `argN` for function argument N (as for the forward); non-contiguous
        ones are copied. A kernel compiled with grad_captures (manifest
        parameters grad_argN) also returns, fourth, {"grad_argN": the f32
        gradient of argument N} (allocated zero-filled here).

        A varlen kernel (manifest "varlen") takes the sequences packed in its
        "varlen_layout": thd q, o, do [Tq, Hq, D], k, v [Tk, Hkv, D], lse [Hq,
        Tq] (FlashAttention's varlen layout; dq, dk, dv likewise), or htd the
        batch-1 planes [1, H, T, ...]; their offsets cu_seqlens_q and cu_seqlens_k
        ([B + 1] int32, as for the forward) and max_seqlen_k (at least the
        longest sequence's keys; read from cu_seqlens_k, a synchronization,
        when None). As the forward leaves rows of no sequence unwritten, keys
        that no sequence covers (offsets that do not start at 0 and end at Tk)
        and a sequence's keys past max_seqlen_k are left unwritten in dk, dv;
        rows of no sequence get dq 0. check_indices (default
        FA_CHECK_INDICES): the offsets and max_seqlen_k checked on the host
        first (manifest.check_cu_seqlens)."""
        if self.op != "attention_grad":
            raise ValueError(f"kernel {self.manifest['kernel']} computes {self.op}, not "
                             f"attention_grad: launch it by calling it")
        extra = {n: t for n, t in inputs.items() if t is not None}
        for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
            if t is not None:
                extra[name] = t
        self._check_longest("max_seqlen_k", max_seqlen_k)
        plan = self.check(q, k, v, None, lse, do=do, o=o, grad_lse=grad_lse, **extra)
        import torch
        s = plan.sizes
        if self.varlen:
            if check_indices is None:
                check_indices = check_indices_default()
            if check_indices:
                check_cu_seqlens(extra["cu_seqlens_q"].tolist(), extra["cu_seqlens_k"].tolist(),
                                 s["Nq"], s["Nk"], None, max_seqlen_k)
            if max_seqlen_k is None:
                max_seqlen_k = 0 if plan.empty else longest_sequence(extra["cu_seqlens_k"],
                                                                     s["Nk"])
            s = dict(s, max_seqlen_k=max_seqlen_k)
        inputs = {"q": q, "k": k, "v": v, "do": do, "lse": lse, **extra}
        for name in plan.copies:
            inputs[name] = inputs[name].contiguous()
        q, k, v, do, lse = (inputs[n] for n in ("q", "k", "v", "do", "lse"))
        D = self.manifest["head_dim"]
        # varlen: B counts sequences, packed in the kernel's layout (htd: batch-1
        # planes; thd: q, dq [Nq, Hq, D], k, dk, dv [Nk, Hkv, D], lse, delta
        # [Hq, Nq]); dq_accum is the planes [1, Hq, Nq, D] in both.
        planes = 1 if self.varlen else s["B"]
        accum_shape = (planes, s["Hq"], s["Nq"], D)
        if self.varlen_layout == "thd":
            q_shape, kv_shape = (s["Nq"], s["Hq"], D), (s["Nk"], s["Hkv"], D)
            row_shape = (s["Hq"], s["Nq"])
        else:
            q_shape, kv_shape = accum_shape, (planes, s["Hkv"], s["Nk"], D)
            row_shape = accum_shape[:3]
        # grad_captures: the f32 gradient of each captured argument N, as
        # grad_argN, zero-filled (the kernel adds into it); returned fourth.
        capture_grads = {p["tensor"]: torch.zeros([int(n) for n in p["shape"]],
                                                  device=q.device, dtype=torch.float32)
                         for p in self._ptr_params if CAPTURE_GRAD.fullmatch(p["tensor"])}

        def result(dq, dk, dv):
            return (dq, dk, dv, capture_grads) if capture_grads else (dq, dk, dv)
        if plan.empty:
            return result(torch.zeros(q_shape, device=q.device, dtype=q.dtype),
                          torch.zeros(kv_shape, device=q.device, dtype=q.dtype),
                          torch.zeros(kv_shape, device=q.device, dtype=q.dtype))
        pre, post = (self._aux.get(op) for op in AUXILIARY_OPS)
        stream = current_stream(torch, q.device)
        if pre is not None:
            # The compiled preprocess: delta and dq_accum's zeros in one pass. It
            # reads o in 16-byte vectors: contiguous and 16-byte aligned.
            o = o.contiguous()
            if o.data_ptr() % 16:
                o = o.clone()
            delta = torch.empty(row_shape, device=q.device, dtype=torch.float32)
            dq_accum = torch.empty(accum_shape, device=q.device, dtype=torch.float32)
            pre._launch(pre.grad_pointers(
                {"do": do, "out": o, "delta": delta, "dq_accum": dq_accum}, s),
                s, stream, plan.device)
        else:
            # do is contiguous here, so do.float() and the row sums are too.
            delta = do.float().mul_(o).sum(-1)
            if self.varlen_layout == "thd":
                delta = delta.t().contiguous()
            dq_accum = torch.zeros(accum_shape, device=q.device, dtype=torch.float32)
        if grad_lse is not None:
            delta.sub_(grad_lse)
        dk = torch.empty(kv_shape, device=q.device, dtype=q.dtype)
        dv = torch.empty(kv_shape, device=q.device, dtype=q.dtype)
        tensors = {**inputs, "q": q, "k": k, "v": v, "do": do, "lse": lse,
                   "delta": delta, "dq_accum": dq_accum, "dk": dk, "dv": dv,
                   **capture_grads}
        if any(p["tensor"] == "dq_semaphore" for p in self._ptr_params):
            # Deterministic kernels (fa-to-ptx{deterministic}): a counter per
            # query block of each (batch, head), zero before the launch.
            blocks = -(-s["Nq"] // self.manifest["block_q"])
            tensors["dq_semaphore"] = torch.zeros((s["B"], s["Hq"], blocks),
                                                  device=q.device, dtype=torch.int32)
        ptrs = self.grad_pointers(tensors, s)
        self._launch(ptrs, s, stream, plan.device)
        if post is None:
            dq = dq_accum.to(q.dtype)
            return result(
                dq[0].transpose(0, 1).contiguous() if self.varlen_layout == "thd" else dq,
                dk, dv)
        dq = torch.empty(q_shape, device=q.device, dtype=q.dtype)
        post._launch(post.grad_pointers({"dq_accum": dq_accum, "dq": dq}, s), s, stream,
                     plan.device)
        return result(dq, dk, dv)

    def quantize(self, q, k, v):
        """An fp8 kernel with per-block descales: f16 / bf16 q [B, Hq, Nq, D],
        k, v [B, Hkv, Nk, D] (the kernel's out dtype, on one CUDA device) to its
        operands by the compiled quantization kernels of its module (manifest
        "auxiliary_kernels": attention_fp8_quantize_q / _k / _v, docs/FP8.md):
        per 128-row block delta = max(max|x| / 448, 2^-126) and x / delta in
        e4m3 (nearest even, saturated), V written transposed in v_key_order.
        Returns dict(q=, k=, v=None, v_t=, q_descale=, k_descale=,
        v_descale=), so that `kernel(**kernel.quantize(q, k, v))` runs the
        attention. ValueError when the kernel has no such kernels or a tensor
        does not fit."""
        import torch
        ops = [op for op in FP8_QUANTIZE_OPS if op in self._aux]
        if len(ops) != len(FP8_QUANTIZE_OPS):
            raise ValueError(f"kernel {self.manifest['kernel']}: no quantization kernels "
                             f"(an fp8 kernel "
                             f"with per-block descales of 128 x 128 blocks has them)")
        out_dt = {"f16": torch.float16, "bf16": torch.bfloat16}[self.manifest["out_dtype"]]
        D = self.manifest["head_dim"]
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.dtype != out_dt or t.dim() != 4 or t.shape[-1] != D or not t.is_cuda:
                raise ValueError(f"{name}: needs a CUDA {out_dt} tensor [B, H, N, {D}], "
                                 f"got {t.dtype} {tuple(t.shape)} on {t.device}")
        if k.shape != v.shape or q.shape[0] != k.shape[0] or k.shape[1] == 0 \
                or q.shape[1] % k.shape[1]:
            raise ValueError(f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: "
                             f"k and v need one shape, q the same batch and a multiple of "
                             f"k's heads")
        if q.device != k.device or q.device != v.device:
            raise ValueError("q, k and v must be on one device")
        B, Hq, Nq, _ = q.shape
        Hkv, Nk = k.shape[1], k.shape[2]
        s = {"B": B, "Hq": Hq, "Hkv": Hkv, "Nq": Nq, "Nk": Nk}
        dev = q.device
        f8 = torch.float8_e4m3fn

        def aligned(t):
            t = t.contiguous()
            return t if t.data_ptr() % 16 == 0 else t.clone()

        q, k, v = aligned(q), aligned(k), aligned(v)
        blocks = lambda n: -(-n // 128)  # noqa: E731
        group = len(self.manifest["v_key_order"])
        res = dict(q=torch.empty(q.shape, device=dev, dtype=f8),
                   k=torch.empty(k.shape, device=dev, dtype=f8), v=None,
                   v_t=torch.empty((B, Hkv, D, -(-Nk // group) * group), device=dev,
                                   dtype=f8),
                   q_descale=torch.empty((B, Hq, blocks(Nq)), device=dev,
                                         dtype=torch.float32),
                   k_descale=torch.empty((B, Hkv, blocks(Nk)), device=dev,
                                         dtype=torch.float32),
                   v_descale=torch.empty((B, Hkv, blocks(Nk)), device=dev,
                                         dtype=torch.float32))
        tensors = {"q": q, "k": k, "v": v, "q8": res["q"], "k8": res["k"],
                   "v_t": res["v_t"], "q_descale": res["q_descale"],
                   "k_descale": res["k_descale"], "v_descale": res["v_descale"]}
        if q.numel() == 0 or k.numel() == 0:
            return res
        stream = current_stream(torch, dev)
        for op in FP8_QUANTIZE_OPS:
            aux = self._aux[op]
            aux._launch(aux.grad_pointers(tensors, s), s, stream,
                        cuda_ordinal(dev, "q"))
        return res
