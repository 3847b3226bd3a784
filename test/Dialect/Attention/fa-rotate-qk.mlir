// RUN: fa-opt %s --split-input-file --fa-rotate-qk=seed=1 | FileCheck %s

// Q and K rotated by the same constant (seed 1: signs - - - + over sqrt(4)),
// two butterfly stages each, cast back to f16; V untouched.
// CHECK-LABEL: func.func @rotate
// CHECK:       %[[S:.+]] = arith.constant dense<[-5.000000e-01, -5.000000e-01, -5.000000e-01, 5.000000e-01]> : tensor<4xf32>
// CHECK:       linalg.generic {{.*}} ins(%arg0, %[[S]] : tensor<1x2x8x4xf16>, tensor<4xf32>)
// CHECK-COUNT-2: tensor.collapse_shape
// CHECK:       %[[Q:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x8x4xf16>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:       %[[S2:.+]] = arith.constant dense<[-5.000000e-01, -5.000000e-01, -5.000000e-01, 5.000000e-01]> : tensor<4xf32>
// CHECK:       linalg.generic {{.*}} ins(%arg1, %[[S2]] : tensor<1x2x8x4xf16>, tensor<4xf32>)
// CHECK-COUNT-2: tensor.collapse_shape
// CHECK:       %[[K:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x8x4xf16>)
// CHECK:       fa.attention %[[Q]], %[[K]], %arg2 {causal}
func.func @rotate(%q: tensor<1x2x8x4xf16>, %k: tensor<1x2x8x4xf16>, %v: tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16> -> tensor<1x2x8x4xf16>
  return %o : tensor<1x2x8x4xf16>
}

