// RUN: fa-opt %s -split-input-file --fa-to-cpu -verify-diagnostics
// RUN: fa-opt %s -split-input-file --fa-to-cpu=reference=1 -verify-diagnostics

// fa-to-cpu lowers fa.attention_grad in the functions of the module it runs
// on (numerics: test/Integration/CPU/grad-*.test, static and dynamic sizes);
// elsewhere it stops with a diagnostic on the op.
module {
  module @inner {
    func.func @grad(%q: tensor<1x1x4x8xf32>, %l: tensor<1x1x4xf32>) -> tensor<1x1x4x8xf32> {
      // expected-error @+1 {{'fa.attention_grad' op fa-to-cpu: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'builtin.module' @inner}}
      %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      return %dq : tensor<1x1x4x8xf32>
    }
  }
}
