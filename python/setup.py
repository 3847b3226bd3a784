"""Builds libFAPythonCAPI.so (python/CMakeLists.txt) with CMake and puts it in
the package (fa/_lib/), with fa/_build_info.py naming the compiler (git hash,
library sha256: the disk cache's key). Metadata: pyproject.toml.

Environment:
  FA_BUILD_DIR           the CMake build directory to use (default: <repo>/build;
                         configured like scripts/setup.sh if it has no build.ninja)
  FA_PYTHON_NO_COMPILER  1: no library (a machine without LLVM; bundles only)
"""
import hashlib
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LIB = "libFAPythonCAPI.so"
LLVM_PREFIX = "/usr/lib/llvm-22"


def _git_hash():
    try:
        h = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return h + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _build_library():
    build_dir = os.environ.get("FA_BUILD_DIR") or os.path.join(REPO, "build")
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        print(f"fa: configuring {build_dir}", flush=True)
        subprocess.run(["cmake", "-G", "Ninja", "-S", REPO, "-B", build_dir,
                        "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_COMPILER=clang-22",
                        "-DCMAKE_CXX_COMPILER=clang++-22", "-DLLVM_USE_LINKER=lld",
                        f"-DMLIR_DIR={LLVM_PREFIX}/lib/cmake/mlir",
                        f"-DLLVM_EXTERNAL_LIT={LLVM_PREFIX}/bin/lit"], check=True)
    print(f"fa: building {LIB} in {build_dir}", flush=True)
    subprocess.run(["cmake", "--build", build_dir, "--target", "FAPythonCAPI"], check=True)
    return os.path.join(build_dir, "lib", LIB)


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "fa")
        lib_sha = None
        if os.environ.get("FA_PYTHON_NO_COMPILER", "") not in ("", "0"):
            print("fa: FA_PYTHON_NO_COMPILER set: no compiler library (bundles only)")
        else:
            src = _build_library()
            os.makedirs(os.path.join(pkg, "_lib"), exist_ok=True)
            dst = os.path.join(pkg, "_lib", LIB)
            shutil.copy2(src, dst)
            with open(dst, "rb") as f:
                lib_sha = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(pkg, "_build_info.py"), "w") as f:
            f.write('"""Written by setup.py: the compiler this package was built with."""\n')
            f.write(f"GIT_HASH = {_git_hash()!r}\nLIBRARY_SHA256 = {lib_sha!r}\n")


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific."""

    def has_ext_modules(self):
        return os.environ.get("FA_PYTHON_NO_COMPILER", "") in ("", "0")


setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
