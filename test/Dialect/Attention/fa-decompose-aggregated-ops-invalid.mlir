// RUN: fa-opt %s -split-input-file --fa-decompose-aggregated-ops -verify-diagnostics

// linalg.softmax on buffers: upstream's decomposition builds tensor ops, so the
// pass refuses it on the op instead of leaving generics that mix tensors and
// buffers (an invalid module).
func.func @softmax_on_buffers(%a: memref<2x16xf32>, %b: memref<2x16xf32>) {
  // expected-error @+1 {{'linalg.softmax' op on buffers is not decomposed (the ops it aggregates are built on tensors): run fa-decompose-aggregated-ops before bufferization}}
  linalg.softmax dimension(1) ins(%a : memref<2x16xf32>) outs(%b : memref<2x16xf32>)
  return
}
