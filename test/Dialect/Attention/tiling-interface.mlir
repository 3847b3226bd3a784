// RUN: fa-opt %s --transform-interpreter --split-input-file --verify-diagnostics | FileCheck %s

// TilingInterface of fa.attention through transform.structured.tile_using_forall.
// Loops are (batch, query head, query row); keys stay whole inside each tile.

// Causal GQA (Hq = 8, Hkv = 2, r = 4), Nq = 64 != Nk = 96, lse returned,
// tiles of (1 batch, 1 head, 32 rows). The K/V head of a tile is h floordiv 4;
// the tile's diagonal is (Nk - Nq) + i0 = 32 + i0.

// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 32)>
// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-DAG: #[[$DIAG:.+]] = affine_map<(d0) -> (d0 + 32)>
// CHECK-LABEL: func.func @causal_gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x64x16xf32>, %[[K:.+]]: tensor<2x2x96x16xf32>, %[[V:.+]]: tensor<2x2x96x8xf32>)
// CHECK-DAG: %[[OUT0:.+]] = tensor.empty() : tensor<2x8x64x8xf32>
// CHECK-DAG: %[[LSE0:.+]] = tensor.empty() : tensor<2x8x64xf32>
// CHECK: %[[R:.+]]:2 = scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 8, 2)
// CHECK-SAME: shared_outs(%[[OUT:.+]] = %[[OUT0]], %[[LSE:.+]] = %[[LSE0]])
// CHECK-DAG: %[[I0:.+]] = affine.apply #[[$ROW]](%[[I]])
// CHECK-DAG: %[[G:.+]] = affine.apply #[[$KVH]](%[[H]])
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[I0]], 0] [1, 1, 32, 16] [1, 1, 1, 1] : tensor<2x8x64x16xf32> to tensor<1x1x32x16xf32>
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[G]], 0, 0] [1, 1, 96, 16] [1, 1, 1, 1] : tensor<2x2x96x16xf32> to tensor<1x1x96x16xf32>
// CHECK-DAG: %[[VS:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[G]], 0, 0] [1, 1, 96, 8] [1, 1, 1, 1] : tensor<2x2x96x8xf32> to tensor<1x1x96x8xf32>
// CHECK-DAG: %[[D:.+]] = affine.apply #[[$DIAG]](%[[I0]])
// CHECK: %[[O:.+]], %[[L:.+]] = fa.attention %[[QS]], %[[KS]], %[[VS]] diagonal(%[[D]]) {causal, scale = 2.500000e-01 : f32}
// CHECK-SAME: : tensor<1x1x32x16xf32>, tensor<1x1x96x16xf32>, tensor<1x1x96x8xf32> -> (tensor<1x1x32x8xf32>, tensor<1x1x32xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[O]] into %[[OUT]][%[[B]], %[[H]], %[[I0]], 0] [1, 1, 32, 8] [1, 1, 1, 1] : tensor<1x1x32x8xf32> into tensor<2x8x64x8xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[L]] into %[[LSE]][%[[B]], %[[H]], %[[I0]]] [1, 1, 32] [1, 1, 1] : tensor<1x1x32xf32> into tensor<2x8x64xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @causal_gqa(%q: tensor<2x8x64x16xf32>, %k: tensor<2x2x96x16xf32>, %v: tensor<2x2x96x8xf32>)
    -> (tensor<2x8x64x8xf32>, tensor<2x8x64xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal, scale = 0.25 : f32}
      : tensor<2x8x64x16xf32>, tensor<2x2x96x16xf32>, tensor<2x2x96x8xf32>
      -> (tensor<2x8x64x8xf32>, tensor<2x8x64xf32>)
  return %o, %l : tensor<2x8x64x8xf32>, tensor<2x8x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 1, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head tile 2 inside groups of r = 4: one K/V head, h0 floordiv 4. No
// causal/window: no diagonal.

// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0) -> (d0 * 2)>
// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-LABEL: func.func @gqa_head_tile_in_group
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x64x16xf32>, %[[K:.+]]: tensor<2x2x96x16xf32>, %[[V:.+]]: tensor<2x2x96x8xf32>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 4, 2)
// CHECK-DAG: %[[H0:.+]] = affine.apply #[[$HEAD]](%[[H]])
// CHECK-DAG: %[[G:.+]] = affine.apply #[[$KVH]](%[[H0]])
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H0]], %{{.+}}, 0] [1, 2, 32, 16]
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[G]], 0, 0] [1, 1, 96, 16]
// CHECK-DAG: %[[VS:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[G]], 0, 0] [1, 1, 96, 8]
// CHECK: fa.attention %[[QS]], %[[KS]], %[[VS]] :
// CHECK-SAME: tensor<1x2x32x16xf32>, tensor<1x1x96x16xf32>, tensor<1x1x96x8xf32> -> tensor<1x2x32x8xf32>
// CHECK: tensor.parallel_insert_slice %{{.+}}[%[[B]], %[[H0]], %{{.+}}, 0] [1, 2, 32, 8]
func.func @gqa_head_tile_in_group(%q: tensor<2x8x64x16xf32>, %k: tensor<2x2x96x16xf32>, %v: tensor<2x2x96x8xf32>)
    -> tensor<2x8x64x8xf32> {
  %o = fa.attention %q, %k, %v
      : tensor<2x8x64x16xf32>, tensor<2x2x96x16xf32>, tensor<2x2x96x8xf32> -> tensor<2x8x64x8xf32>
  return %o : tensor<2x8x64x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 2, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head tile 8 over groups of r = 4: two whole groups, K/V heads
// [h0 floordiv 4, +2).

// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0) -> (d0 * 8)>
// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-LABEL: func.func @gqa_head_tile_whole_groups
// CHECK-SAME: (%[[Q:.+]]: tensor<1x16x64x16xf32>, %[[K:.+]]: tensor<1x4x96x16xf32>, %[[V:.+]]: tensor<1x4x96x8xf32>)
// CHECK: scf.forall (%[[H:.+]], %[[I:.+]]) in (2, 2)
// CHECK-DAG: %[[H0:.+]] = affine.apply #[[$HEAD]](%[[H]])
// CHECK-DAG: %[[G:.+]] = affine.apply #[[$KVH]](%[[H0]])
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][0, %[[H0]], %{{.+}}, 0] [1, 8, 32, 16]
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][0, %[[G]], 0, 0] [1, 2, 96, 16]
// CHECK-DAG: %[[VS:.+]] = tensor.extract_slice %[[V]][0, %[[G]], 0, 0] [1, 2, 96, 8]
// CHECK: fa.attention %[[QS]], %[[KS]], %[[VS]] diagonal(%{{.+}}) {window = array<i64: 16, 4>} :
// CHECK-SAME: tensor<1x8x32x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x8xf32> -> tensor<1x8x32x8xf32>
func.func @gqa_head_tile_whole_groups(%q: tensor<1x16x64x16xf32>, %k: tensor<1x4x96x16xf32>, %v: tensor<1x4x96x8xf32>)
    -> tensor<1x16x64x8xf32> {
  %o = fa.attention %q, %k, %v {window = array<i64: 16, 4>}
      : tensor<1x16x64x16xf32>, tensor<1x4x96x16xf32>, tensor<1x4x96x8xf32> -> tensor<1x16x64x8xf32>
  return %o : tensor<1x16x64x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 8, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head tile 8 over Hq = 12, r = 4: the last tile holds 4 heads (min(8, 12 - h0)),
// still whole groups, so the K/V size is that size floordiv 4. A broadcast
// mask keeps its size-1 batch dim and is sliced on heads and rows.

// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0) -> (d0 * 8)>
// CHECK-DAG: #[[$HS:.+]] = affine_map<(d0) -> (-d0 + 12, 8)>
// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-LABEL: func.func @gqa_partial_head_tile
// CHECK-SAME: (%[[Q:.+]]: tensor<2x12x64x16xf32>, %[[K:.+]]: tensor<2x3x96x16xf32>, %[[V:.+]]: tensor<2x3x96x8xf32>, %[[M:.+]]: tensor<1x12x64x96xi1>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 2, 2)
// CHECK-DAG: %[[H0:.+]] = affine.apply #[[$HEAD]](%[[H]])
// CHECK-DAG: %[[HSZ:.+]] = affine.min #[[$HS]](%[[H0]])
// CHECK-DAG: %[[G:.+]] = affine.apply #[[$KVH]](%[[H0]])
// CHECK-DAG: %[[GSZ:.+]] = affine.apply #[[$KVH]](%[[HSZ]])
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H0]], %[[I0:.+]], 0] [1, %[[HSZ]], 32, 16]
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[G]], 0, 0] [1, %[[GSZ]], 96, 16]
// CHECK-DAG: %[[VS:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[G]], 0, 0] [1, %[[GSZ]], 96, 8]
// CHECK-DAG: %[[MS:.+]] = tensor.extract_slice %[[M]][0, %[[H0]], %[[I0]], 0] [1, %[[HSZ]], 32, 96]
// CHECK: fa.attention %[[QS]], %[[KS]], %[[VS]] mask(%[[MS]] : tensor<1x?x32x96xi1>) :
// CHECK-SAME: tensor<1x?x32x16xf32>, tensor<1x?x96x16xf32>, tensor<1x?x96x8xf32> -> tensor<1x?x32x8xf32>
func.func @gqa_partial_head_tile(%q: tensor<2x12x64x16xf32>, %k: tensor<2x3x96x16xf32>, %v: tensor<2x3x96x8xf32>,
                                 %m: tensor<1x12x64x96xi1>) -> tensor<2x12x64x8xf32> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x12x64x96xi1>)
      : tensor<2x12x64x16xf32>, tensor<2x3x96x16xf32>, tensor<2x3x96x8xf32> -> tensor<2x12x64x8xf32>
  return %o : tensor<2x12x64x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 8, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A key-padding mask [B, 1, 1, Nk] is sliced on the batch only: every tile of
// heads and rows reads its one row.

// CHECK-LABEL: func.func @mask_row_broadcast_tile
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x64x16xf32>, %[[K:.+]]: tensor<2x4x96x16xf32>, %[[V:.+]]: tensor<2x4x96x16xf32>, %[[M:.+]]: tensor<2x1x1x96xi1>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 2, 2)
// CHECK-DAG: %[[MS:.+]] = tensor.extract_slice %[[M]][%[[B]], 0, 0, 0] [1, 1, 1, 96]
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[MS]] : tensor<1x1x1x96xi1>) :
// CHECK-SAME: tensor<1x2x32x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32> -> tensor<1x2x32x16xf32>
func.func @mask_row_broadcast_tile(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x96x16xf32>, %v: tensor<2x4x96x16xf32>,
                                   %m: tensor<2x1x1x96xi1>) -> tensor<2x4x64x16xf32> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x1x1x96xi1>)
      : tensor<2x4x64x16xf32>, tensor<2x4x96x16xf32>, tensor<2x4x96x16xf32> -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 2, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Heads left whole (tile size 0): all K/V heads. Rows left whole too: the
// causal op keeps its own diagonal, so none is added. A mask broadcast over
// batch and heads stays [0, 0].

// CHECK-LABEL: func.func @batch_only
// CHECK-SAME: (%[[Q:.+]]: tensor<4x8x64x16xf16>, %[[K:.+]]: tensor<4x2x64x16xf16>, %[[V:.+]]: tensor<4x2x64x16xf16>, %[[M:.+]]: tensor<1x1x64x64xf32>)
// CHECK: scf.forall (%[[B:.+]]) in (4)
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][%[[B]], 0, 0, 0] [1, 8, 64, 16]
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[B]], 0, 0, 0] [1, 2, 64, 16]
// CHECK-DAG: %[[VS:.+]] = tensor.extract_slice %[[V]][%[[B]], 0, 0, 0] [1, 2, 64, 16]
// CHECK-DAG: %[[MS:.+]] = tensor.extract_slice %[[M]][0, 0, 0, 0] [1, 1, 64, 64]
// CHECK: fa.attention %[[QS]], %[[KS]], %[[VS]] mask(%[[MS]] : tensor<1x1x64x64xf32>) {causal} :
func.func @batch_only(%q: tensor<4x8x64x16xf16>, %k: tensor<4x2x64x16xf16>, %v: tensor<4x2x64x16xf16>,
                      %m: tensor<1x1x64x64xf32>) -> tensor<4x8x64x16xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x64x64xf32>) {causal}
      : tensor<4x8x64x16xf16>, tensor<4x2x64x16xf16>, tensor<4x2x64x16xf16> -> tensor<4x8x64x16xf16>
  return %o : tensor<4x8x64x16xf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// An op that already has a diagonal: the tile's is that one plus i0.

// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 16)>
// CHECK-DAG: #[[$ADD:.+]] = affine_map<(d0)[s0] -> (d0 + s0)>
// CHECK-LABEL: func.func @nested_diagonal
// CHECK-SAME: %[[D:[a-zA-Z0-9_]+]]: index)
// CHECK: scf.forall (%[[I:.+]]) in (4)
// CHECK: %[[I0:.+]] = affine.apply #[[$ROW]](%[[I]])
// CHECK: %[[TD:.+]] = affine.apply #[[$ADD]](%[[I0]])[%[[D]]]
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} diagonal(%[[TD]]) {causal}
func.func @nested_diagonal(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x128x16xf32>, %v: tensor<1x1x128x16xf32>,
                           %d: index) -> tensor<1x1x64x16xf32> {
  %o = fa.attention %q, %k, %v diagonal(%d) {causal}
      : tensor<1x1x64x16xf32>, tensor<1x1x128x16xf32>, tensor<1x1x128x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Dynamic shapes, head tile 1: the K/V head is h / (Hq / Hkv) at run time, the
// diagonal (Nk - Nq) + i0, and the row tile min(32, Nq - i0).

// CHECK-DAG: #[[$DIAG:.+]] = affine_map<(d0)[s0, s1] -> (d0 + s0 - s1)>
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x?x16xf32>, %[[K:.+]]: tensor<?x?x?x16xf32>, %[[V:.+]]: tensor<?x?x?x8xf32>)
// CHECK: %[[OUT0:.+]] = tensor.empty(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x?x?x8xf32>
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (%{{.+}}, %{{.+}}, %{{.+}}) shared_outs(%{{.+}} = %[[OUT0]])
// CHECK-DAG: %[[HQ:.+]] = tensor.dim %[[Q]], %c1
// CHECK-DAG: %[[HKV:.+]] = tensor.dim %[[K]], %c1
// CHECK: %[[R:.+]] = arith.divui %[[HQ]], %[[HKV]] : index
// CHECK: %[[G:.+]] = arith.divui %[[H]], %[[R]] : index
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[G]], 0, 0]
// CHECK: %[[TD:.+]] = affine.apply #[[$DIAG]]
// CHECK: fa.attention {{.+}} diagonal(%[[TD]]) {causal} : tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
func.func @dynamic(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x8xf32>)
    -> tensor<?x?x?x8xf32> {
  %o = fa.attention %q, %k, %v {causal}
      : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32> -> tensor<?x?x?x8xf32>
  return %o : tensor<?x?x?x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 1, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Multi-query (Hkv = 1): any head tile reads K/V head 0, here 3 heads of 8
// with a partial last tile.

// CHECK-LABEL: func.func @mqa_any_head_tile
// CHECK-SAME: (%[[Q:.+]]: tensor<1x8x64x16xf32>, %[[K:.+]]: tensor<1x1x64x16xf32>, %[[V:.+]]: tensor<1x1x64x16xf32>)
// CHECK: scf.forall (%[[H:.+]]) in (3)
// CHECK: tensor.extract_slice %[[K]][0, 0, 0, 0] [1, 1, 64, 16]
// CHECK: fa.attention {{.+}} : tensor<1x?x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x?x64x16xf32>
func.func @mqa_any_head_tile(%q: tensor<1x8x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>)
    -> tensor<1x8x64x16xf32> {
  %o = fa.attention %q, %k, %v
      : tensor<1x8x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 3, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// tile_using_for works the same way: the head offset is an scf.for induction
// variable stepping by 2, a multiple of the tile size, inside groups of 4.

// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-LABEL: func.func @tile_using_for
// CHECK-SAME: (%[[Q:.+]]: tensor<1x8x64x16xf32>, %[[K:.+]]: tensor<1x2x64x16xf32>, %[[V:.+]]: tensor<1x2x64x8xf32>)
// CHECK: scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: %[[G:.+]] = affine.apply #[[$KVH]](%[[H]])
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][0, %[[H]], 0, 0] [1, 2, 64, 16]
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][0, %[[G]], 0, 0] [1, 1, 64, 16]
// CHECK: fa.attention %[[QS]], %[[KS]], %{{.+}} {causal} : tensor<1x2x64x16xf32>, tensor<1x1x64x16xf32>
// CHECK: tensor.insert_slice
func.func @tile_using_for(%q: tensor<1x8x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x8xf32>)
    -> tensor<1x8x64x8xf32> {
  %o = fa.attention %q, %k, %v {causal}
      : tensor<1x8x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32> -> tensor<1x8x64x8xf32>
  return %o : tensor<1x8x64x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_for %op tile_sizes [0, 2, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Producer fusion (generateResultTileValue): a consumer of out is tiled
// over (b, h, i, :) and fa.attention is fused into its loop, computing just
// the tile of out the consumer reads. Head tiles of 2 in groups of 4: K/V head
// (2 h) floordiv 4 = h floordiv 2 for the normalized loop index h.

// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0) -> (d0 * 2)>
// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-DAG: #[[$DIAG:.+]] = affine_map<(d0) -> (d0 * 16 + 32)>
// CHECK-LABEL: func.func @fuse_into_consumer
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x64x16xf32>, %[[K:.+]]: tensor<2x2x96x16xf32>, %[[V:.+]]: tensor<2x2x96x8xf32>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 4, 4)
// CHECK-DAG: %[[H0:.+]] = affine.apply #[[$HEAD]](%[[H]])
// CHECK-DAG: %[[G:.+]] = affine.apply #[[$KVH]](%[[H]])
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H0]], %{{.+}}, 0] [1, 2, 16, 16]
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[G]], 0, 0] [1, 1, 96, 16]
// CHECK-DAG: %[[D:.+]] = affine.apply #[[$DIAG]](%[[I]])
// CHECK: %[[O:.+]] = fa.attention %[[QS]], %[[KS]], %{{.+}} diagonal(%[[D]]) {causal} :
// CHECK-SAME: -> tensor<1x2x16x8xf32>
// CHECK: linalg.generic {{.+}} ins(%[[O]] : tensor<1x2x16x8xf32>)
func.func @fuse_into_consumer(%q: tensor<2x8x64x16xf32>, %k: tensor<2x2x96x16xf32>, %v: tensor<2x2x96x8xf32>)
    -> tensor<2x8x64x8xf16> {
  %o = fa.attention %q, %k, %v {causal}
      : tensor<2x8x64x16xf32>, tensor<2x2x96x16xf32>, tensor<2x2x96x8xf32> -> tensor<2x8x64x8xf32>
  %e = tensor.empty() : tensor<2x8x64x8xf16>
  %t = linalg.generic {
      indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : tensor<2x8x64x8xf32>) outs(%e : tensor<2x8x64x8xf16>) {
  ^bb0(%x: f32, %y: f16):
    %r = arith.truncf %x : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x64x8xf16>
  return %t : tensor<2x8x64x8xf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %attn = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %cast = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %cast tile_sizes [1, 2, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f, %l2 = transform.structured.fuse_into_containing_op %attn into %l
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head tile 3 with r = 4: tiles straddle groups, which the tiled op cannot
// express. Tiling fails with a diagnostic instead of miscompiling.

func.func @misaligned_heads(%q: tensor<2x8x64x16xf32>, %k: tensor<2x2x64x16xf32>, %v: tensor<2x2x64x8xf32>)
    -> tensor<2x8x64x8xf32> {
  // expected-error @+4 {{'fa.attention' op cannot tile query heads with a tile of size at most 3 at offset a multiple of 3: with Hq = 8 and Hkv = 2 (r = Hq / Hkv = 4 query heads per K/V head), a head tile must lie in one group}}
  // expected-error @+3 {{faild to tile operation}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-note @+1 {{when applied to this op}}
  %o = fa.attention %q, %k, %v
      : tensor<2x8x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x8xf32> -> tensor<2x8x64x8xf32>
  return %o : tensor<2x8x64x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 3, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head tile 2 with dynamic head counts: r is unknown, so neither alignment can
// be proven.

func.func @dynamic_heads(%q: tensor<1x?x64x16xf32>, %k: tensor<1x?x64x16xf32>, %v: tensor<1x?x64x8xf32>)
    -> tensor<1x?x64x8xf32> {
  // expected-error @+4 {{'fa.attention' op cannot tile query heads with a tile of size at most 2 at offset a multiple of 2: with Hq = ? and Hkv = ? (r = Hq / Hkv = ? query heads per K/V head)}}
  // expected-error @+3 {{faild to tile operation}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-note @+1 {{when applied to this op}}
  %o = fa.attention %q, %k, %v
      : tensor<1x?x64x16xf32>, tensor<1x?x64x16xf32>, tensor<1x?x64x8xf32> -> tensor<1x?x64x8xf32>
  return %o : tensor<1x?x64x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 2, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Per-head (and per-block) descale tensors would have to be sliced along with
// the tile: not supported by the interface (fa-tile-attention handles them).

func.func @tensor_descales(%q: tensor<2x8x64x16xf8E4M3FN>, %k: tensor<2x2x64x16xf8E4M3FN>, %qd: tensor<2x8xf32>,
                           %kd: tensor<2x2xf32>) -> tensor<2x8x64x16xf32> {
  // expected-error @+4 {{'fa.attention' op cannot tile with per-head or per-block descales (only per-tensor f32 descales are supported by tiling)}}
  // expected-error @+3 {{faild to tile operation}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-note @+1 {{when applied to this op}}
  %o = fa.attention %q, %k, %k descale(%qd, %kd, %kd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x8x64x16xf8E4M3FN>, tensor<2x2x64x16xf8E4M3FN>, tensor<2x2x64x16xf8E4M3FN> -> tensor<2x8x64x16xf32>
  return %o : tensor<2x8x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 4, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
