// RUN: fa-opt %s -split-input-file '--fa-tile-attention-grad=block-q=16 block-kv=32' -verify-diagnostics | FileCheck %s --enable-var-scope '--implicit-check-not=fa.attention_grad %'

// Causal GQA (Hq = 4, Hkv = 2), Nq = Nk = 100: delta first, then loops over
// (batch, K/V head, key block), the group's query heads and the query blocks
// from the key block's diagonal on; S, P, dP, dS are 16 x 32 tiles only.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x100x32xf16>, %[[K:[^:]+]]: tensor<1x2x100x32xf16>, %[[V:[^:]+]]: tensor<1x2x100x16xf16>, %[[O:[^:]+]]: tensor<1x4x100x16xf16>, %[[L:[^:]+]]: tensor<1x4x100xf32>, %[[DO:[^:]+]]: tensor<1x4x100x16xf16>)
// Static shapes: nothing left to check at run time.
// CHECK-NOT: cf.assert
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.+}} : tensor<1x4x100xf32>)
// CHECK: %[[LOOPS:.+]]:3 = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK: scf.for %[[G:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[KT:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 32] [1, 1, 1, 1] : tensor<1x2x100x32xf16> to tensor<?x32xf16>
// CHECK: %[[VT:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 16] [1, 1, 1, 1] : tensor<1x2x100x16xf16> to tensor<?x16xf16>
// Causal (right = 0): the first query block is (col0 - diag - 0) / 16.
// CHECK: %[[LO:.+]] = arith.maxsi
// CHECK: %[[QB0:.+]] = arith.divsi %[[LO]]
// CHECK: scf.for %[[HR:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[QB:.+]] = %[[QB0]] to %{{.+}} step
// CHECK: %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %{{.+}} : tensor<?x?xf32>, tensor<?xf32>)
// CHECK: math.exp
// CHECK: arith.select
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<?x?xf32>, tensor<?x16xf16>) outs(%{{.+}} : tensor<?x16xf32>)
// CHECK: %[[DP:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[VT]] : tensor<?x16xf16>, tensor<?x16xf16>)
// CHECK: %[[DS:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[DP]], %{{.+}}, %[[S]] :
// CHECK: linalg.generic {{.*}} ins(%[[DS]], %{{.+}} : tensor<?x?xf32>, tensor<?x32xf16>) outs(%{{.+}} : tensor<?x32xf32>)
// CHECK: %[[DQT:.+]] = linalg.generic {{.*}} ins(%[[DS]], %[[KT]] :
// CHECK: tensor.insert_slice %[[DQT]]
// CHECK: scf.yield
// dK and dV of the key block, rounded and written once per key block.
// CHECK: arith.truncf
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%[[B]], %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 32] [1, 1, 1, 1] : tensor<?x32xf16> into tensor<1x2x100x32xf16>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%[[B]], %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 16] [1, 1, 1, 1] : tensor<?x16xf16> into tensor<1x2x100x16xf16>
// CHECK: %[[DQ:.+]] = linalg.generic {{.*}} ins(%[[LOOPS]]#0 : tensor<1x4x100x32xf32>) outs(%{{.+}} : tensor<1x4x100x32xf16>)
// CHECK: return %[[DQ]], %[[LOOPS]]#1, %[[LOOPS]]#2
func.func @causal_gqa(%q: tensor<1x4x100x32xf16>, %k: tensor<1x2x100x32xf16>, %v: tensor<1x2x100x16xf16>,
                      %o: tensor<1x4x100x16xf16>, %l: tensor<1x4x100xf32>, %do: tensor<1x4x100x16xf16>)
    -> (tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x16xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal}
      : tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x16xf16>,
        tensor<1x4x100x16xf16>, tensor<1x4x100xf32>, tensor<1x4x100x16xf16>
      -> tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x16xf16>
  return %dq, %dk, %dv : tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x16xf16>
}

// -----

// No window: every query block of every key block (no band arithmetic).
// CHECK-LABEL: func.func @full
// CHECK-NOT: arith.maxsi
// CHECK-NOT: arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: scf.for
func.func @full(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

// Dynamic sizes: the loops run to tensor.dim values, the key blocks'
// count is ceil(Nk / 32) without overflow (0 keys: 0 blocks).
// CHECK-LABEL: func.func @dynamic
// The dims the verifier could not compare are checked at run time first
// (emitDynamicShapeChecks): q, k, v as fa.attention's, then out, lse, do.
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: key batch size differs from the query's"
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: query head count must be a multiple of the key/value head count"
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: do dim 2 differs from the query's"
// CHECK-NOT: cf.assert
// CHECK-DAG: %[[NK:.+]] = tensor.dim %arg1, %c2
// CHECK: %[[NONE:.+]] = arith.cmpi eq, %[[NK]], %c0
// CHECK: %[[LAST:.+]] = arith.subi %[[NK]], %c1
// CHECK: %[[DIV:.+]] = arith.divui %[[LAST]], %c32
// CHECK: %[[BLOCKS:.+]] = arith.addi %[[DIV]], %c1
// CHECK: %[[NKB:.+]] = arith.select %[[NONE]], %c0{{.*}}, %[[BLOCKS]]
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %[[NKB]] step
// CHECK: return %{{.+}} : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
func.func @dynamic(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %l: tensor<?x?x?xf32>) -> (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %k, %q, %l, %q {window = array<i64: 8, 0>} : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x?x8xf32> -> tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
  return %dq, %dk, %dv : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
}

// -----

// varlen: a loop over the sequences (B = dim(cu_seqlens_q) - 1), each one's
// slices of the packed tensors lowered as an attention_grad of its own, its
// gradients inserted at its rows (dq) and keys (dk, dv) into zeros.
// CHECK-LABEL: func.func @varlen
// The packed tensors' dims are checked before the loop: here o's tokens
// against q's.
// CHECK: cf.assert %{{.+}}, "fa.attention_grad: out dim 2 differs from the query's"
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
