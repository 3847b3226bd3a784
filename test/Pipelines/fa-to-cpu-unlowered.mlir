// RUN: fa-opt %s -split-input-file --fa-to-cpu -verify-diagnostics
// RUN: not fa-opt %s -split-input-file --fa-to-cpu 2>/dev/null | FileCheck %s

// fa-to-cpu ends with fa-check-lowered-to-llvm: an op its conversions leave
// (here a gpu op, which no CPU lowering handles) fails the pipeline at the op
// instead of exit 0 with the op in the output (then rejected by mlir-translate).
func.func @thread(%x: index) -> index {
  // expected-error @+1 {{'gpu.thread_id' op fa-to-cpu: could not lower this op to the llvm dialect}}
  %t = gpu.thread_id x
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' op fa-to-cpu: could not lower this op to the llvm dialect}}
  %s = arith.addi %t, %x : index
  return %s : index
}

// -----

// linalg.softmax outside any attention: decomposed (fa-decompose-aggregated-ops)
// and lowered; it used to stay in the output.
// CHECK-LABEL: llvm.func @softmax(
// CHECK: llvm.intr.exp
// CHECK-NOT: linalg.softmax
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
