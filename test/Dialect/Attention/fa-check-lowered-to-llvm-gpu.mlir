// RUN: fa-opt %s -split-input-file '--fa-check-lowered-to-llvm=gpu-launches=1' -verify-diagnostics
// RUN: not fa-opt %s -split-input-file --fa-check-lowered-to-llvm 2>&1 | FileCheck %s --check-prefix=CPU

// With gpu-launches (the end of fa-to-gpu), the kernels' gpu.binary and the
// host's gpu.launch_func are what a lowered GPU program keeps; without it (the
// end of fa-to-cpu) they are reported like any op outside the llvm dialect.
// CPU: error: 'gpu.binary' op fa-check-lowered-to-llvm: could not lower this op to the llvm dialect
// CPU: error: 'gpu.launch_func' op fa-check-lowered-to-llvm: could not lower this op to the llvm dialect
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, "">]
  llvm.func @host(%n: i64) {
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) : i64
    llvm.return
  }
}

// -----

// Other gpu ops are not accepted: only what a launch lowers to.
module attributes {gpu.container_module} {
  llvm.func @host() {
    // expected-error @+1 {{'gpu.wait' op fa-check-lowered-to-llvm: could not lower this op to the llvm dialect}}
    gpu.wait
    llvm.return
  }
}
