// RUN: fa-opt %s -split-input-file --fa-decompose-attention-grad -verify-diagnostics | FileCheck %s --enable-var-scope --implicit-check-not=fa.attention_grad

// GQA (Hq = 4, Hkv = 2), causal, f16: scores and probabilities materialized in
// f32, K and V read at head h floordiv 2, dK and dV reduced over each pair of
// query heads, the three results rounded to f16 once.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x16x32xf16>, %[[K:[^:]+]]: tensor<1x2x16x32xf16>, %[[V:[^:]+]]: tensor<1x2x16x32xf16>, %[[O:[^:]+]]: tensor<1x4x16x32xf16>, %[[L:[^:]+]]: tensor<1x4x16xf32>, %[[DO:[^:]+]]: tensor<1x4x16x32xf16>)
// S = Q K^T
// CHECK: %[[S:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x4x16x32xf16>) outs(%{{.+}} : tensor<1x4x16x16xf32>)
// CHECK: arith.divui
// CHECK: tensor.extract %[[K]]
// P = exp(score - lse), 0 outside the band or on a dead row
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[L]] : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>)
// CHECK: math.exp
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// dP = dO V^T
// CHECK: %[[DP:.+]] = linalg.generic {{.*}} ins(%[[DO]] : tensor<1x4x16x32xf16>)
// CHECK: tensor.extract %[[V]]
// delta = rowsum(dO * O)
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.+}} : tensor<1x4x16xf32>)
// CHECK: %[[DS:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[DP]], %[[DELTA]], %[[S]] :
// CHECK-NOT: math.tanh
// CHECK: %[[DQ:.+]] = linalg.generic {{.*}} ins(%[[DS]] : tensor<1x4x16x16xf32>) outs(%{{.+}} : tensor<1x4x16x32xf32>)
// CHECK: %[[DKH:.+]] = linalg.generic {{.*}} ins(%[[DS]], %[[Q]] : {{.*}}) outs(%{{.+}} : tensor<1x4x16x32xf32>)
// CHECK: %[[DKG:.+]] = tensor.expand_shape %[[DKH]] {{\[\[}}0], [1, 2], [3], [4]] {{.*}} into tensor<1x2x2x16x32xf32>
// CHECK: %[[DK:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[DKG]] : tensor<1x2x2x16x32xf32>) outs(%{{.+}} : tensor<1x2x16x32xf32>)
// CHECK: %[[DVH:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[DO]] : {{.*}}) outs(%{{.+}} : tensor<1x4x16x32xf32>)
// CHECK: %[[DVG:.+]] = tensor.expand_shape %[[DVH]]
// CHECK: %[[DV:.+]] = linalg.generic {{.*}} ins(%[[DVG]] :
// CHECK: %[[DQ16:.+]] = linalg.generic {{.*}} ins(%[[DQ]] : tensor<1x4x16x32xf32>) outs(%{{.+}} : tensor<1x4x16x32xf16>)
// CHECK: arith.truncf
// CHECK: %[[DK16:.+]] = linalg.generic {{.*}} ins(%[[DK]] : tensor<1x2x16x32xf32>) outs(%{{.+}} : tensor<1x2x16x32xf16>)
// CHECK: %[[DV16:.+]] = linalg.generic {{.*}} ins(%[[DV]] : tensor<1x2x16x32xf32>) outs(%{{.+}} : tensor<1x2x16x32xf16>)
// CHECK: return %[[DQ16]], %[[DK16]], %[[DV16]]
func.func @causal_gqa(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>,
                      %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>)
    -> (tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return %dq, %dk, %dv : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
}

// -----

// Softcap: the derivative 1 - tanh^2 multiplies dS.
// CHECK-LABEL: func.func @softcap
// CHECK: math.tanh
// CHECK: math.exp
// CHECK: %[[DS:.+]] = linalg.generic
// CHECK: %[[T:.+]] = math.tanh
// CHECK: %[[T2:.+]] = arith.mulf %[[T]], %[[T]]
// CHECK: arith.subf %{{.+}}, %[[T2]]
func.func @softcap(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                   %o: tensor<1x1x4x8xf32>, %l: tensor<1x1x4xf32>, %do: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {softcap = 5.0 : f32} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return %dq : tensor<1x1x4x8xf32>
}

// -----

// Dynamic shapes are not lowered yet: a diagnostic, not a crash.
func.func @dynamic(%q: tensor<?x1x4x8xf32>, %k: tensor<?x1x4x8xf32>, %v: tensor<?x1x4x8xf32>,
                   %o: tensor<?x1x4x8xf32>, %l: tensor<?x1x4xf32>, %do: tensor<?x1x4x8xf32>) -> tensor<?x1x4x8xf32> {
  // expected-error @+1 {{the CPU lowering of fa.attention_grad needs static shapes, got 'tensor<?x1x4x8xf32>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<?x1x4x8xf32>, tensor<?x1x4x8xf32>, tensor<?x1x4x8xf32>, tensor<?x1x4x8xf32>, tensor<?x1x4xf32>, tensor<?x1x4x8xf32> -> tensor<?x1x4x8xf32>, tensor<?x1x4x8xf32>, tensor<?x1x4x8xf32>
  return %dq : tensor<?x1x4x8xf32>
}
