// RUN: fa-opt %s --transform-interpreter --split-input-file | FileCheck %s

// TilingInterface keeps the meaning of the modifier regions: the tiled op's
// (b, h, i) are relative to the tile, so the cloned regions start with
// b + b0, h + h0, i + i0 (the key j is never tiled). Offsets that are the
// constant 0 add nothing.

// Tiles of (1 batch, 2 heads, 8 rows) of B = 2, Hq = 4, Nq = 16.
// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0) -> (d0 * 2)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 8)>
// CHECK-LABEL: func.func @all_offsets
// CHECK-SAME: (%{{.+}}: tensor<2x4x16x8xf32>, %{{.+}}: tensor<2x4x16x8xf32>, %{{.+}}: tensor<2x4x16x8xf32>, %[[BIAS:.+]]: tensor<2x4x16x16xf32>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 2, 2)
// CHECK-DAG: %[[H0:.+]] = affine.apply #[[$HEAD]](%[[H]])
// CHECK-DAG: %[[I0:.+]] = affine.apply #[[$ROW]](%[[I]])
// CHECK: fa.attention {{.+}} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %[[BB:.+]]: index, %[[HH:.+]]: index, %[[II:.+]]: index, %[[JJ:.+]]: index):
// CHECK-NEXT: %[[BA:.+]] = arith.addi %[[BB]], %[[B]] : index
// CHECK-NEXT: %[[HA:.+]] = arith.addi %[[HH]], %[[H0]] : index
// CHECK-NEXT: %[[IA:.+]] = arith.addi %[[II]], %[[I0]] : index
// CHECK-NEXT: %[[X:.+]] = tensor.extract %[[BIAS]][%[[BA]], %[[HA]], %[[IA]], %[[JJ]]] : tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[T:.+]] = arith.addf %[[S]], %[[X]] : f32
// CHECK-NEXT: fa.yield %[[T]] : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%[[MB:.+]]: index, %[[MH:.+]]: index, %[[MI:.+]]: index, %[[MJ:.+]]: index):
// CHECK-NEXT: %[[MBA:.+]] = arith.addi %[[MB]], %[[B]] : index
// CHECK-NEXT: %[[MHA:.+]] = arith.addi %[[MH]], %[[H0]] : index
// CHECK-NEXT: %[[MIA:.+]] = arith.addi %[[MI]], %[[I0]] : index
// CHECK-NEXT: %[[S1:.+]] = arith.addi %[[MBA]], %[[MHA]] : index
// CHECK-NEXT: %[[S2:.+]] = arith.addi %[[S1]], %[[MIA]] : index
// CHECK-NEXT: %[[C:.+]] = arith.cmpi ule, %[[MJ]], %[[S2]] : index
// CHECK-NEXT: fa.yield %[[C]] : i1
// CHECK-NEXT: } : tensor<1x2x8x8xf32>
func.func @all_offsets(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                       %v: tensor<2x4x16x8xf32>, %bias: tensor<2x4x16x16xf32>) -> tensor<2x4x16x8xf32> {
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %bias[%b, %h, %i, %j] : tensor<2x4x16x16xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %s1 = arith.addi %b, %h : index
    %s2 = arith.addi %s1, %i : index
    %c = arith.cmpi ule, %j, %s2 : index
    fa.yield %c : i1
  } : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 2, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Rows only (batch and heads untiled: offsets 0): only i + i0 is added.
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 4)>
// CHECK-LABEL: func.func @rows_only
// CHECK: scf.forall (%[[I:.+]]) in (4)
// CHECK: %[[I0:.+]] = affine.apply #[[$ROW]](%[[I]])
// CHECK: fa.attention {{.+}} mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[MI:.+]]: index, %[[MJ:.+]]: index):
// CHECK-NEXT: %[[MIA:.+]] = arith.addi %[[MI]], %[[I0]] : index
// CHECK-NEXT: %[[C:.+]] = arith.cmpi ule, %[[MJ]], %[[MIA]] : index
// CHECK-NEXT: fa.yield %[[C]] : i1
// CHECK-NEXT: } : tensor<2x4x4x8xf32>
func.func @rows_only(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                     %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ule, %j, %i : index
    fa.yield %c : i1
  } : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
