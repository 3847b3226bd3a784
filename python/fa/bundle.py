"""Ahead-of-time bundles: kernels compiled on a machine with the compiler, loaded
where it is absent (GPU servers without LLVM).

A bundle is a directory:
    index.json            {"format": "fa-bundle", "version": 1, "compiler": ...,
                           "created": ..., "kernels": [{"variant": {...},
                           "spec": "f16,d128,causal,lse", "json": "sm_90a/<kernel>.json"}]}
    <chip>/<kernel>.ptx, <chip>/<kernel>.json   what fa-dump-kernel wrote
                                                (docs/Manifest.md)
Kernels are found by their Variant (dtype, head dim, mask, scale, softcap,
lse, chip, options), never by the compiler's identity: the bundle is the
kernels its index lists. Written by `python -m fa.precompile`.
"""
import json
import os
import time

from .variant import Variant

FORMAT = "fa-bundle"
VERSION = 1


class BundleError(ValueError):
    pass


class Bundle:
    def __init__(self, directory, index):
        self.directory = directory
        self.index = index
        self.kernels = {}  # Variant -> fa.Kernel (loaded on first use)
        self._json = {}
        for i, k in enumerate(index["kernels"]):
            try:
                v = Variant.from_json(k["variant"])
                path = k["json"]
            except (KeyError, TypeError, ValueError) as e:
                raise BundleError(f"{directory}/index.json: kernels[{i}]: {e}") from None
            if not os.path.isfile(os.path.join(directory, path)):
                raise BundleError(f"{directory}: index.json lists {path}, which is missing")
            self._json[v] = path

    @classmethod
    def load(cls, directory):
        path = os.path.join(directory, "index.json")
        try:
            with open(path) as f:
                index = json.load(f)
        except OSError as e:
            raise BundleError(f"{directory}: not an fa bundle ({e})") from None
        except ValueError as e:
            raise BundleError(f"{path}: not JSON ({e})") from None
        if not isinstance(index, dict) or index.get("format") != FORMAT:
            raise BundleError(f"{path}: not an fa bundle index (format {index.get('format')!r})"
                              if isinstance(index, dict) else f"{path}: not an object")
        if index.get("version") != VERSION:
            raise BundleError(f"{path}: bundle version {index.get('version')!r}; this fa reads "
                              f"version {VERSION} (rebuild it with python -m fa.precompile)")
        if not isinstance(index.get("kernels"), list):
            raise BundleError(f"{path}: no kernels list")
        return cls(directory, index)

    def variants(self):
        return list(self._json)

    def get(self, variant):
        """The fa.Kernel of `variant`, or None. Manifests are checked
        (fa_runtime.check_manifest) when loaded."""
        if variant not in self._json:
            return None
        if variant not in self.kernels:
            from .compiler import Kernel
            self.kernels[variant] = Kernel.load(os.path.join(self.directory, self._json[variant]),
                                                variant)
        return self.kernels[variant]

    def validate(self):
        """Loads and checks every kernel; returns how many."""
        for v in self._json:
            self.get(v)
        return len(self._json)


def write(directory, kernels, compiler=None):
    """Writes a bundle of (Variant, fa.Kernel) pairs into `directory` (merging
    with a bundle already there); returns the index."""
    os.makedirs(directory, exist_ok=True)
    entries = {}
    index_path = os.path.join(directory, "index.json")
    if os.path.exists(index_path):
        for e in Bundle.load(directory).index["kernels"]:
            entries[Variant.from_json(e["variant"])] = e
    for v, k in kernels:
        path = k.save(os.path.join(directory, v.chip))  # one chip's kernels share names
        entries[v] = {"variant": v.to_json(), "spec": v.spec(),
                      "json": os.path.relpath(path, directory),
                      "kernel": k.name, "compile_seconds": k.compile_seconds}
    index = {"format": FORMAT, "version": VERSION, "compiler": compiler,
             "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "kernels": sorted(entries.values(), key=lambda e: (e["variant"]["chip"], e["spec"]))}
    tmp = index_path + f".tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
    os.replace(tmp, index_path)
    return index


_bundles = []
_env_loaded = None


def load_bundle(directory):
    """Makes fa.attention look in the bundle at `directory` (before compiling)."""
    b = Bundle.load(directory)
    _bundles.insert(0, b)
    from . import dispatch
    dispatch.clear()
    return b


def find(variant):
    """The kernel of `variant` from a loaded bundle ($FA_BUNDLE, a
    colon-separated list of directories, is loaded on first use), or None."""
    global _env_loaded
    env = os.environ.get("FA_BUNDLE", "")
    if env != _env_loaded:
        _env_loaded = env
        for d in reversed([d for d in env.split(os.pathsep) if d]):
            if not any(os.path.abspath(b.directory) == os.path.abspath(d) for b in _bundles):
                _bundles.append(Bundle.load(d))
    for b in _bundles:
        k = b.get(variant)
        if k is not None:
            return k
    return None


def loaded():
    return list(_bundles)
