"""fa.compile: an fa.attention signature or MLIR text to launchable kernels
(PTX + launch manifest), cached in memory and on disk (fa.cache).
"""
import glob
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time

from . import _capi, cache
from .variant import Variant, normalize_options

# Counters the tests read: how each compile() call was served.
stats = {"compiles": 0, "memory_hits": 0, "disk_hits": 0}
_memory = {}
_memory_lock = threading.Lock()


class Kernel:
    """One compiled kernel: its PTX and launch manifest (docs/Manifest.md).
    Calling it launches it on torch tensors through fa_runtime (the CUDA
    driver; no MLIR needed); `save(dir)` writes the .ptx and .json that
    fa_runtime.Kernel.load and bundles read."""

    def __init__(self, manifest, ptx, variant=None):
        from fa_runtime import check_manifest
        check_manifest(manifest)
        self.manifest = manifest
        self.ptx = ptx if isinstance(ptx, str) else ptx.decode()
        self.variant = variant
        self.compile_seconds = None  # of the compile that produced it (all its module's kernels)
        self._runtime = None

    name = property(lambda self: self.manifest["kernel"])
    chip = property(lambda self: self.manifest["chip"])
    function = property(lambda self: self.manifest.get("function"))

    @classmethod
    def load(cls, json_path, variant=None):
        with open(json_path) as f:
            manifest = json.load(f)
        from fa_runtime import check_manifest
        check_manifest(manifest, json_path)
        with open(os.path.join(os.path.dirname(json_path), manifest["ptx"])) as f:
            ptx = f.read()
        return cls(manifest, ptx, variant)

    def save(self, directory):
        """Writes <kernel>.ptx and <kernel>.json into `directory`; returns the .json path."""
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, self.manifest["ptx"]), "w") as f:
            f.write(self.ptx)
        path = os.path.join(directory, self.name + ".json")
        with open(path, "w") as f:
            json.dump(self.manifest, f, indent=1, sort_keys=True)
        return path

    @property
    def runtime(self):
        """The fa_runtime.Kernel that launches this one (loads the PTX per
        device on its first launch there)."""
        if self._runtime is None:
            from fa_runtime import Kernel as RuntimeKernel
            self._runtime = RuntimeKernel(self.manifest, self.ptx.encode() + b"\0")
        return self._runtime

    def __call__(self, q, k, v, out=None, lse=None, **inputs):
        """fa_runtime.Kernel.__call__ (`inputs`: kv_lens=, page_table=,
        check_indices=, and the other tensors the manifest names)."""
        return self.runtime(q, k, v, out, lse, **inputs)

    def quantize(self, q, k, v):
        """An fp8 kernel's operands from f16 / bf16 q, k, v by its compiled
        quantization kernels (fa_runtime.Kernel.quantize): `kernel(**that)`."""
        return self.runtime.quantize(q, k, v)

    def grad(self, q, k, v, o, lse, do, *, grad_lse=None, **inputs):
        """A backward kernel's (dq, dk, dv) (fa_runtime.Kernel.grad; `inputs`:
        the other tensors the manifest names, e.g. a modifier's arg6)."""
        return self.runtime.grad(q, k, v, o, lse, do, grad_lse=grad_lse, **inputs)

    def __repr__(self):
        return f"<fa.Kernel {self.name} {self.chip} {self.manifest.get('dtype')} " \
               f"d{self.manifest.get('head_dim')}>"


def _build_info():
    try:
        from . import _build_info as b
        return {"git": b.GIT_HASH, "library_sha256": b.LIBRARY_SHA256}
    except ImportError:  # used from the source tree (PYTHONPATH=python)
        import subprocess
        try:
            git = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                                  "rev-parse", "HEAD"], capture_output=True, text=True,
                                 timeout=10).stdout.strip() or "unknown"
        except (OSError, subprocess.SubprocessError):
            git = "unknown"
        return {"git": git, "library_sha256": None}


_compiler_id = None


def compiler_id():
    """What identifies the compiler in cache keys: the git hash it was built
    from and the sha256 of the library (computed here when FA_CAPI_LIBRARY
    points at another build than the installed one)."""
    global _compiler_id
    if _compiler_id is None:
        _capi.lib()  # CompilerUnavailable where there is none
        info = _build_info()
        if os.environ.get("FA_CAPI_LIBRARY") or not info["library_sha256"]:
            h = hashlib.sha256()
            with open(_capi.library_path(), "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            info["library_sha256"] = h.hexdigest()
        _compiler_id = f"{info['git']}:{info['library_sha256']}"
    return _compiler_id


def pipeline_text(chip, options):
    opts = " ".join(f"{k}={v}" for k, v in options)
    return f"fa-to-ptx{{chip={chip}{' ' + opts if opts else ''}}}"


def _compile_into(mlir, pipeline, directory):
    """Runs the pipeline and fa-dump-kernel into `directory`; returns the
    entry (kernels listed by function)."""
    start = time.perf_counter()
    with _capi.compile_lock():
        with _capi.Context() as ctx:
            module = _capi.Module(ctx, mlir)
            try:
                module.run(f"{pipeline},fa-dump-kernel{{dir={directory}}}", shown=pipeline)
            finally:
                module.close()
    seconds = time.perf_counter() - start
    kernels = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            m = json.load(f)
        kernels.append({"function": m.get("function"), "kernel": m["kernel"],
                        "json": os.path.basename(path)})
    if not kernels:
        raise _capi.CompileError(f"fa: {pipeline} produced no kernel (no fa.attention in a "
                                 f"func.func?)")
    stats["compiles"] += 1
    return {"kernels": kernels, "pipeline": pipeline, "compile_seconds": seconds,
            "compiler": compiler_id()}


def _load_entry(entry, variant):
    kernels = {k["function"]: Kernel.load(os.path.join(entry["dir"], k["json"]), variant)
               for k in entry["kernels"]}
    for k in kernels.values():
        k.compile_seconds = entry.get("compile_seconds")
    return kernels


def compile_mlir(mlir, chip="sm_90a", options=(), variant=None, use_cache=True):
    """{function: Kernel} for every fa.attention function of `mlir` compiled
    by fa-to-ptx{chip, options}. Cached in memory and on disk (fa.cache)."""
    options = normalize_options(options) if isinstance(options, dict) else tuple(options)
    pipeline = pipeline_text(chip, options)
    key = hashlib.sha256(json.dumps({"format": 1, "mlir": mlir, "pipeline": pipeline,
                                     "compiler": compiler_id()}, sort_keys=True).encode()
                         ).hexdigest()
    if use_cache:
        with _memory_lock:
            hit = _memory.get(key)
        if hit is not None:
            stats["memory_hits"] += 1
            return hit
    base = cache.root() if use_cache else None
    if base is None:
        tmp = tempfile.mkdtemp(prefix="fa-compile.")
        try:
            entry = _compile_into(mlir, pipeline, tmp)
            entry["dir"] = tmp
            result = _load_entry(entry, variant)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        result = _from_disk(key, base, mlir, pipeline, variant)
    if use_cache:
        with _memory_lock:
            _memory[key] = result
    return result


def _from_disk(key, base, mlir, pipeline, variant):
    entry = cache.read(key, base)
    if entry is not None:
        try:
            result = _load_entry(entry, variant)
            stats["disk_hits"] += 1
            return result
        except (OSError, ValueError, KeyError):
            cache.discard(key, base)  # damaged: compile again
    with cache.key_lock(key, base):
        entry = cache.read(key, base)  # filled while we waited for the lock?
        if entry is not None:
            stats["disk_hits"] += 1
        else:
            entry = cache.publish(key, lambda d: _compile_into(mlir, pipeline, d), base)
        return _load_entry(entry, variant)


def compile(signature_or_mlir, chip=None, *, cache=True, **options):
    """Compiles fa.attention kernels to PTX for `chip` ("sm_90a" or "sm_80").

    `signature_or_mlir` is one of:
      - a fa.Variant, or a dict of its fields (dtype, head_dim, causal, window,
        scale, softcap, lse, grad): one kernel, returned as a fa.Kernel;
      - a variant spec string such as "f16,d128,causal,lse" (Variant.parse;
        "f16,d128,causal,grad" is that attention's backward kernel);
      - MLIR text holding func.func's with one fa.attention each: a
        fa.Kernel if there is one function, else {function name: fa.Kernel}.
    Keyword options are fa-to-ptx options (block_q=..., stages=...,
    persistent=true, ...). Results are cached in memory and on disk unless
    cache=False. Raises fa.CompileError with the compiler's diagnostics, or
    fa.CompilerUnavailable where the compiler is not installed."""
    if isinstance(signature_or_mlir, str) and ("func.func" in signature_or_mlir
                                               or "fa.attention" in signature_or_mlir):
        kernels = compile_mlir(signature_or_mlir, chip or "sm_90a", options, use_cache=cache)
        return next(iter(kernels.values())) if len(kernels) == 1 else kernels
    if isinstance(signature_or_mlir, str):
        v = Variant.parse(signature_or_mlir, chip=chip or "sm_90a")
        if options:
            v = Variant.make(**{**v.to_json(), "options": {**v.to_json()["options"], **options}})
    elif isinstance(signature_or_mlir, Variant):
        v = signature_or_mlir
        if chip or options:
            j = v.to_json()
            v = Variant.make(**{**j, "chip": chip or v.chip,
                                "options": {**j["options"], **options}})
    elif isinstance(signature_or_mlir, dict):
        v = Variant.make(**{"chip": chip or "sm_90a", **signature_or_mlir, "options": options})
    else:
        raise TypeError(f"fa.compile: {type(signature_or_mlir).__name__} is not a Variant, a "
                        f"dict, a variant spec or MLIR text")
    return compile_variant(v, use_cache=cache)


def compile_variant(variant, use_cache=True):
    kernels = compile_mlir(variant.mlir(), variant.chip, variant.options, variant, use_cache)
    return kernels[variant.func_name()]
