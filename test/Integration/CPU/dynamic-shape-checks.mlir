// Rules the verifier cannot check on dynamic dims are checked at run time:
// a grouped-query attention whose runtime head counts do not divide (Hq = 6,
// Hkv = 4) stops with a message instead of reading the wrong K/V heads. The
// failed cf.assert prints with puts and aborts: stdbuf -o0 keeps the message.
// RUN: fa-opt %s --fa-to-cpu | not --crash stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s
// RUN: fa-opt %s --fa-to-cpu=reference=1 | not --crash stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s
// The checks are emitted only for dynamic dims.
// RUN: fa-opt %s --fa-tile-attention | FileCheck %s --check-prefix=IR

// CHECK: fa.attention: query head count must be a multiple of the key/value head count

// IR-LABEL: func.func @attention(
// IR: cf.assert %{{.+}}, "fa.attention: key/value head count must be positive"
// IR: cf.assert %{{.+}}, "fa.attention: query head count must be a multiple of the key/value head count"
// IR: scf.forall
func.func @attention(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x4x8xf32>,
                     %v: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %o = fa.attention %q, %k, %v
      : tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>
      -> tensor<1x?x4x8xf32>
  return %o : tensor<1x?x4x8xf32>
}

// IR-LABEL: func.func @static_shapes(
// IR-NOT: cf.assert
// IR: scf.forall
func.func @static_shapes(%q: tensor<1x8x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                         %v: tensor<1x2x4x8xf32>) -> tensor<1x8x4x8xf32> {
  %o = fa.attention %q, %k, %v
      : tensor<1x8x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
      -> tensor<1x8x4x8xf32>
  return %o : tensor<1x8x4x8xf32>
}

func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x6x4x8xf32>
  %kv = arith.constant dense<0.5> : tensor<1x4x4x8xf32>
  %qd = tensor.cast %q : tensor<1x6x4x8xf32> to tensor<1x?x4x8xf32>
  %kvd = tensor.cast %kv : tensor<1x4x4x8xf32> to tensor<1x?x4x8xf32>
  %o = func.call @attention(%qd, %kvd, %kvd)
      : (tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32>
  return
}
