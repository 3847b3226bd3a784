// RUN: fa-opt %s --fa-tile-attention --fa-outline-attention --verify-diagnostics -o /dev/null

// The tiled form in a function of a nested module is reported, not left
// behind (run the pass on that module instead).
module {
  module @inner {
    func.func @g(%q: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
      // expected-error @+1 {{fa-outline-attention: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'builtin.module' @inner}}
      %o = fa.attention %q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
      return %o : tensor<1x1x64x64xf32>
    }
  }
}
