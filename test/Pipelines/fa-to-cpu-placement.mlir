// RUN: fa-opt %s -split-input-file --fa-to-cpu -verify-diagnostics
// RUN: fa-opt %s -split-input-file --fa-to-cpu=reference=1 -verify-diagnostics
// RUN: fa-opt %s -split-input-file --fa-check-placement=pipeline=fa-to-cpu -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--pass-pipeline=builtin.module(builtin.module(fa-to-cpu))' | FileCheck %s --check-prefix=NESTED

// fa-to-cpu lowers fa ops in the functions of the module it runs on. One in a
// nested module used to be left unlowered with exit 0 (reference=1) or to
// fail in buffer deallocation ("ops with unknown memory side effects").
// Running the pipeline on the nested module lowers it.
module {
  module @inner {
    func.func @attn(%q: tensor<1x1x8x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
      // expected-error @+1 {{'fa.attention' op fa-to-cpu: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'builtin.module' @inner (run the pipeline on that module: --pass-pipeline='builtin.module(builtin.module(...))')}}
      %o = fa.attention %q, %k, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
      return %o : tensor<1x1x8x8xf32>
    }
  }
}
// NESTED: module @inner
// NESTED: llvm.func @attn(
// NESTED-NOT: fa.attention

// -----

// The tile ops too.
module @outer {
  module @inner {
    func.func @range(%r0: index, %r1: index, %nk: index, %d: index) -> index {
      // expected-error @+1 {{'fa.kv_block_range' op fa-to-cpu: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'builtin.module' @inner}}
      %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %nk diagonal %d
          {block_kv = 16 : i64, window = array<i64: -1, 0>}
      return %e : index
    }
  }
}
// NESTED: module @inner
// NESTED: llvm.func @range(
// NESTED-NOT: fa.kv_block_range

// -----

// A called function is fine on the CPU (one-shot-bufferize crosses calls).
func.func private @attn(%q: tensor<1x1x8x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %o = fa.attention %q, %k, %v {causal} : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}
func.func @caller(%q: tensor<1x1x8x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %o = func.call @attn(%q, %k, %v) : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}
