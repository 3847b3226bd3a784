# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fa_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Debian's runner utils, for executing lowered modules on the CPU.
runner_libs = [
    os.path.join(config.mlir_lib_dir, "libmlir_runner_utils.so"),
    os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so"),
]
config.substitutions.append(
    ("%mlir_runner",
     "mlir-runner -e main --entry-point-result=void "
     + " ".join("--shared-libs=" + lib for lib in runner_libs)))

# Numerics are checked against numpy, through Debian's python3 (the pyenv
# python on PATH does not see Debian's numpy).
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%fa_src_root", config.fa_src_root))
config.substitutions.append(("%fa_tools_dir", config.fa_tools_dir))

# The libFuzzer target (tools/fa-fuzz), when this build has it.
if os.path.exists(os.path.join(config.fa_tools_dir, "fa-fuzz")):
    config.available_features.add("fa-fuzz")
    config.substitutions.append(
        ("%fa_fuzz", os.path.join(config.fa_tools_dir, "fa-fuzz")))

# The out-of-tree consumer built against the installed fa (examples/embedding,
# built and passed in by scripts/embedding.sh); test/Embedding needs it.
fa_embed = lit_config.params.get("fa_embed")
if fa_embed:
    if not os.path.isfile(fa_embed):
        lit_config.fatal("fa_embed=%s: no such file" % fa_embed)
    config.available_features.add("fa-embed")
    config.substitutions.append(
        ("%fa_embed_cpu", os.path.join(os.path.dirname(fa_embed), "fa-embed-cpu")))
    config.substitutions.append(("%fa_embed_dir", os.path.dirname(fa_embed)))
    config.substitutions.append(
        ("%fa_embed_c", os.path.join(os.path.dirname(fa_embed), "fa-embed-c")))
    config.substitutions.append(("%fa_embed", fa_embed))
    config.substitutions.append(
        ("%fa_install", lit_config.params.get("fa_install", "")))

# A stock mlir-opt-22 (Debian's mlir-22-tools) with fa loaded as a dialect +
# pass plugin (lib/Plugin, build/lib/FAPlugin.so); test/Plugin needs it.
# %fa_mlir_opt is the whole command: mlir-opt-22 with both plugin flags.
# Not in a sanitizer build (scripts/sanitize.sh): an instrumented plugin does
# not load into the uninstrumented mlir-opt-22 (no ASan runtime there).
mlir_opt_22 = shutil.which("mlir-opt-22")
if mlir_opt_22 and not config.fa_sanitizer:
    fa_plugin = os.path.join(config.fa_obj_root, "lib", "FAPlugin.so")
    config.available_features.add("mlir-opt-22")
    config.substitutions.append(
        ("%fa_mlir_opt", "%s --load-dialect-plugin=%s --load-pass-plugin=%s"
         % (mlir_opt_22, fa_plugin, fa_plugin)))
    config.substitutions.append(("%mlir_opt_22", mlir_opt_22))
    config.substitutions.append(("%fa_plugin", fa_plugin))

tool_dirs = [config.fa_tools_dir, config.llvm_tools_dir]
tools = ["fa-opt", "fa-capi-test", "mlir-runner", "mlir-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas, for assembling generated PTX.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# cuda.h and a C++ compiler, for checking the CUDA enum values the compiler
# writes into launch manifests (it does not include cuda.h itself).
clangxx = shutil.which("clang++-22")
cuda_include = "/usr/local/cuda/include"
if clangxx and os.path.exists(os.path.join(cuda_include, "cuda.h")):
    config.available_features.add("cuda-h")
    config.substitutions.append(("%clangxx", clangxx))
    config.substitutions.append(("%cuda_include", cuda_include))

# libfa_cuda_runtime.so (lib/Runtime: the mgpu* entry points over a dlopened
# libcuda); test/Runtime links programs against it and runs them on a fake
# driver. Not in a sanitizer build: the instrumented library does not link
# into the uninstrumented test programs.
if config.fa_cuda_runtime and not config.fa_sanitizer:
    config.available_features.add("fa-cuda-runtime")
    config.substitutions.append(
        ("%fa_cuda_runtime_dir", os.path.dirname(config.fa_cuda_runtime)))

# A usable NVIDIA GPU (driver device node and nvidia-smi): the integration
# tests of test/Integration/GPU run fa-to-gpu programs on it. None of the
# CI machines has one; the GPU machine has no LLVM (its runs are recorded in
# bench/results/).
if ("fa-cuda-runtime" in config.available_features
        and os.path.exists("/dev/nvidia0") and shutil.which("nvidia-smi")
        and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0):
    config.available_features.add("cuda")
config.substitutions.append(
    ("%runner_utils_libs", ",".join(runner_libs)))
