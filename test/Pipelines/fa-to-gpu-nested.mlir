// An attention in a nested module compiles when fa-to-gpu runs on that module
// (fa ops elsewhere than in a func.func of the module the pipeline runs on are
// reported: fa-outline-attention-invalid.mlir); the kernel and the launch stay
// inside it, the outer module's functions are untouched.
// RUN: fa-opt %s '--pass-pipeline=builtin.module(builtin.module(fa-to-gpu{chip=sm_90a}))' | FileCheck %s

// CHECK: module {
// CHECK:   module @inner attributes {{{.*}}gpu.container_module}
// CHECK:     gpu.binary @g_attention_kernels
// CHECK:     llvm.func @g(
// CHECK:       llvm.call @g_attention(
// CHECK:   func.func @outer(
// CHECK-NEXT:  return
module {
  module @inner {
    func.func @g(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
      %o = fa.attention %q, %q, %q {causal} : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
      return %o : tensor<1x2x64x64xf16>
    }
  }
  func.func @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
