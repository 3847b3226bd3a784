// fa.attention in a nested module: fa-to-cpu refuses it with a diagnostic.
module {
  module @inner {
    func.func @attention(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>,
                         %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
      %o = fa.attention %q, %k, %v
          : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
          -> tensor<1x1x4x8xf32>
      return %o : tensor<1x1x4x8xf32>
    }
  }
}
