// RUN: fa-opt %s -split-input-file --fa-decompose-attention-grad -verify-diagnostics | FileCheck %s --enable-var-scope '--implicit-check-not=fa.attention_grad %'

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

// Dynamic batch, head and sequence sizes: the sizes are tensor.dim values
// (the query heads per K/V head their quotient r); the grouped dK / dV
// reduction reads the per-query-head sums at head g r + hr over an hr loop
// of size r (no expand_shape of two dynamic sizes), and each result has
// exactly its operand's type.
// CHECK-LABEL: func.func @dynamic
// The dims the verifier could not compare are checked at run time first
// (emitDynamicShapeChecks): q, k, v as fa.attention's, then out, lse, do.
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: key batch size differs from the query's"
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: query head count must be a multiple of the key/value head count"
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: do dim 2 differs from the query's"
// CHECK-NOT: cf.assert
// CHECK-DAG: %[[HQ:.+]] = tensor.dim %arg0, %c1
// CHECK-DAG: %[[HKV:.+]] = tensor.dim %arg1, %c1
// CHECK: %[[R:.+]] = arith.divui %[[HQ]], %[[HKV]] : index
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[HRS:.+]] = linalg.fill {{.*}} -> tensor<?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[HRS]] : tensor<?xf32>) outs(%{{.+}} : tensor<?x?x?x8xf32>)
// CHECK: %[[G:.+]] = linalg.index 1
// CHECK: %[[GR:.+]] = arith.muli %[[G]], %[[R]]
// CHECK: %[[HR:.+]] = linalg.index 4
// CHECK: %[[H:.+]] = arith.addi %[[GR]], %[[HR]]
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[H]], %{{.+}}, %{{.+}}] : tensor<?x?x?x8xf32>
// CHECK: return %{{.+}} : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
func.func @dynamic(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %v: tensor<?x?x?x8xf32>,
                   %o: tensor<?x?x?x8xf32>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x8xf32>) -> (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x?x8xf32> -> tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
  return %dq, %dk, %dv : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
}

// -----

// A static q and a dynamic k: dK's sizes come from both, rounded and cast to
// k's type.
// CHECK-LABEL: func.func @mixed
// CHECK: tensor.cast %{{.+}} : tensor<1x2x?x8xf32> to tensor<?x2x?x8xf32>
func.func @mixed(%q: tensor<1x2x4x8xf32>, %k: tensor<?x2x?x8xf32>, %l: tensor<1x2x4xf32>) -> tensor<?x2x?x8xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %k, %q, %l, %q : tensor<1x2x4x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
  return %dk : tensor<?x2x?x8xf32>
}

// -----

// varlen: a loop over the sequences (B = dim(cu_seqlens_q) - 1), each one's
// slices of the packed tensors lowered as an attention_grad of its own, its
// gradients inserted at its rows (dq) and keys (dk, dv) into zeros.
// CHECK-LABEL: func.func @varlen
// CHECK: %[[ZQ:.+]] = linalg.fill {{.*}} -> tensor<1x4x?x16xbf16>
// CHECK: scf.for %[[S:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[DQ:.+]] = %[[ZQ]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK: tensor.extract %arg4[%[[S]]] : tensor<?xi32>
// CHECK: tensor.extract_slice %arg0[0, 0, %{{.+}}, 0] [1, 4, %{{.+}}, 16] [1, 1, 1, 1] : tensor<1x4x?x16xbf16> to tensor<1x4x?x16xbf16>
// CHECK: tensor.insert_slice %{{.+}} into %[[DQ]][0, 0, %{{.+}}, 0] [1, 4, %{{.+}}, 16] [1, 1, 1, 1]
// CHECK: scf.yield
func.func @varlen(%q: tensor<1x4x?x16xbf16>, %k: tensor<1x2x?x16xbf16>, %o: tensor<1x4x?x16xbf16>,
                  %lse: tensor<1x4x?xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %k, %o, %lse, %o varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>,
        tensor<1x4x?x16xbf16>, tensor<1x4x?xf32>, tensor<1x4x?x16xbf16>
      -> tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>
  return %dq, %dk, %dv : tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>
}
