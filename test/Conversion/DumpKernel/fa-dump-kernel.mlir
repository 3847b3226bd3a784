// RUN: rm -rf %t && fa-opt %s -split-input-file --fa-dump-kernel=dir=%t -verify-diagnostics | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=PTX < %t/k_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/k_kernel.json
// RUN: not ls %t/other_kernel.ptx

// The IR is left unchanged; only binaries with a manifest are written.
// IR: gpu.binary @k_kernels
// IR: gpu.binary @other_kernels
// PTX: .target sm_80
// JSON: {"kernel": "k_kernel"}
module attributes {gpu.container_module, fa.manifest.k_kernels = {kernel = "k_kernel", json = "{\"kernel\": \"k_kernel\"}"}} {
  gpu.binary @k_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A">]
  gpu.binary @other_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".target sm_80">]
}

// -----

module attributes {gpu.container_module, fa.manifest.c_kernels = {kernel = "c_kernel", json = "{}"}} {
  // expected-error @+1 {{fa-dump-kernel: no PTX object (use gpu-module-to-binary{format=isa}) or malformed manifest}}
  gpu.binary @c_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "\00\01">]
}
