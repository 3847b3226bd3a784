"""ctypes over libFAPythonCAPI.so: fa's C API (include/fa-c) and the parts of
MLIR's C API the package needs (parse, print, diagnostics, ExecutionEngine).

Why ctypes and not a pybind11 extension: docs/Python.md. In short, the C API
already exists (issue 17), the library has no Python ABI in it (one build
serves Debian's 3.11, a pyenv 3.11 and the H200's 3.12), and a machine without
the compiler imports the same pure-Python package and only loads bundles.

The library is found, in order: $FA_CAPI_LIBRARY; fa/_lib/ of the installed
package. `available()` says whether it loads; nothing here is imported
eagerly by `fa`, so `import fa` works where it is absent.
"""
import ctypes
import os
import threading

_LIB_NAME = "libFAPythonCAPI.so"


class CompilerUnavailable(RuntimeError):
    """The compiler library is not installed here (a GPU server with a bundle)."""


class CompileError(RuntimeError):
    """The compiler rejected the input: the diagnostics, one per line."""

    def __init__(self, message, diagnostics=()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]


class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class _LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


# The handler returns MlirLogicalResult, a struct of one int8_t: ctypes callbacks
# cannot return structures, and the C ABI returns this one as its int8_t.
_DiagHandler = ctypes.CFUNCTYPE(ctypes.c_int8, _Handle, ctypes.c_void_p)
_StringCallback = ctypes.CFUNCTYPE(None, _StringRef, ctypes.c_void_p)
_SEVERITY = {0: "error", 1: "warning", 2: "note", 3: "remark"}

_lib = None
_lib_error = None
_lock = threading.Lock()  # one compile at a time per process (MLIR's registries are global)


def library_path():
    env = os.environ.get("FA_CAPI_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", _LIB_NAME)


def _declare(lib):
    H, S, R = _Handle, _StringRef, _LogicalResult
    sigs = {
        "mlirDialectRegistryCreate": ([], H),
        "mlirDialectRegistryDestroy": ([H], None),
        "faRegisterAllDialects": ([H], None),
        "mlirContextCreateWithRegistry": ([H, ctypes.c_bool], H),
        "mlirContextDestroy": ([H], None),
        "mlirContextAttachDiagnosticHandler": ([H, _DiagHandler, ctypes.c_void_p, ctypes.c_void_p],
                                               ctypes.c_uint64),
        "mlirDiagnosticPrint": ([H, _StringCallback, ctypes.c_void_p], None),
        "mlirDiagnosticGetSeverity": ([H], ctypes.c_int),
        "mlirDiagnosticGetLocation": ([H], H),
        "mlirDiagnosticGetNumNotes": ([H], ctypes.c_ssize_t),
        "mlirDiagnosticGetNote": ([H, ctypes.c_ssize_t], H),
        "mlirLocationPrint": ([H, _StringCallback, ctypes.c_void_p], None),
        "mlirModuleCreateParse": ([H, S], H),
        "mlirModuleDestroy": ([H], None),
        "mlirModuleGetOperation": ([H], H),
        "mlirOperationPrint": ([H, _StringCallback, ctypes.c_void_p], None),
        "faCompileModule": ([H, S], R),
        "mlirExecutionEngineCreate": ([H, ctypes.c_int, ctypes.c_int, ctypes.POINTER(S),
                                       ctypes.c_bool], H),
        "mlirExecutionEngineDestroy": ([H], None),
        "mlirExecutionEngineInvokePacked": ([H, S, ctypes.POINTER(ctypes.c_void_p)], R),
        "mlirExecutionEngineLookupPacked": ([H, S], ctypes.c_void_p),
        "faPythonCAPIVersion": ([], ctypes.c_char_p),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res


def lib():
    """The loaded library; CompilerUnavailable when it is not here."""
    global _lib, _lib_error
    if _lib is None and _lib_error is None:
        path = library_path()
        try:
            handle = ctypes.CDLL(path)
            _declare(handle)
            _lib = handle
        except (OSError, AttributeError) as e:
            _lib_error = f"{path}: {e}"
    if _lib is None:
        raise CompilerUnavailable(
            f"the fa compiler is not available here ({_lib_error}); install the package with "
            f"the compiler (pip install ./python on a machine with LLVM/MLIR 22), or load "
            f"precompiled kernels (fa.load_bundle / FA_BUNDLE, python -m fa.precompile)")
    return _lib


def available():
    try:
        lib()
        return True
    except CompilerUnavailable:
        return False


def _sref(b):
    return _StringRef(ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p), len(b))


def _collect(printer, obj):
    parts = []

    def cb(ref, _):
        parts.append(ctypes.string_at(ref.data, ref.length))

    c = _StringCallback(cb)
    printer(obj, c, None)
    return b"".join(parts).decode("utf-8", "replace")


class Context:
    """An MLIR context holding fa and what its pipelines need, with a
    diagnostic handler that collects messages instead of printing them."""

    def __init__(self):
        L = lib()
        registry = L.mlirDialectRegistryCreate()
        L.faRegisterAllDialects(registry)
        self.ctx = L.mlirContextCreateWithRegistry(registry, False)
        L.mlirDialectRegistryDestroy(registry)
        self.diagnostics = []
        self._handler = _DiagHandler(self._on_diagnostic)  # kept alive with the context
        L.mlirContextAttachDiagnosticHandler(self.ctx, self._handler, None, None)

    def _format(self, diag):
        L = lib()
        sev = _SEVERITY.get(L.mlirDiagnosticGetSeverity(diag), "error")
        loc = _collect(L.mlirLocationPrint, L.mlirDiagnosticGetLocation(diag))
        msg = _collect(L.mlirDiagnosticPrint, diag)
        lines = [f"{loc}: {sev}: {msg}"]
        for i in range(L.mlirDiagnosticGetNumNotes(diag)):
            lines.append("  " + self._format(L.mlirDiagnosticGetNote(diag, i)))
        return "\n".join(lines)

    def _on_diagnostic(self, diag, _):
        self.diagnostics.append(self._format(diag))
        return 1  # handled

    def close(self):
        if self.ctx is not None:
            lib().mlirContextDestroy(self.ctx)
            self.ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Module:
    def __init__(self, context, text):
        self.context = context
        L = lib()
        data = text.encode() if isinstance(text, str) else text
        self.module = L.mlirModuleCreateParse(context.ctx, _sref(data))
        if not self.module.ptr:
            raise CompileError("fa: the MLIR does not parse:\n" + "\n".join(context.diagnostics),
                               context.diagnostics)

    def run(self, pipeline, shown=None):
        """faCompileModule: the textual pipeline on the module, in place;
        CompileError with the diagnostics if it fails (naming the pipeline as
        `shown`, when given)."""
        n = len(self.context.diagnostics)
        r = lib().faCompileModule(self.module, _sref(pipeline.encode()))
        if not r.value:
            diags = self.context.diagnostics[n:]
            raise CompileError(f"fa: pipeline '{shown or pipeline}' failed:\n" + "\n".join(diags), diags)

    def __str__(self):
        L = lib()
        return _collect(L.mlirOperationPrint, L.mlirModuleGetOperation(self.module))

    def close(self):
        if self.module is not None and self.module.ptr:
            lib().mlirModuleDestroy(self.module)
            self.module = None


def compile_lock():
    return _lock
