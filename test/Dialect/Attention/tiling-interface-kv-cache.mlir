// RUN: fa-opt %s --transform-interpreter --split-input-file --verify-diagnostics | FileCheck %s

// TilingInterface of fa.attention with kv_lens(...) and pages(...): a batch
// tile slices kv_lens and the page table's batch dim, the pools keep every
// page (dim 0) and are sliced in heads as today. A row tile of a causal op
// with kv_lens and no diagonal carries diagonal(L_b - Nq + i0), one value for
// a batch tile of size 1 only.

// Tiles of (1 batch, 2 heads, 32 rows); GQA r = 2; Ncap = 8 * 16 = 128.
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 32)>
// CHECK-DAG: #[[$DIAG:.+]] = affine_map<(d0, d1) -> (d0 + d1 - 64)>
// CHECK-LABEL: func.func @paged_rows
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x64x16xf32>, %[[K:.+]]: tensor<9x2x16x16xf32>, %[[V:.+]]: tensor<9x2x16x8xf32>, %[[LENS:.+]]: tensor<2xi32>, %[[T:.+]]: tensor<2x8xi32>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 2, 2)
// CHECK-DAG: %[[I0:.+]] = affine.apply #[[$ROW]](%[[I]])
// CHECK-DAG: %[[KS:.+]] = tensor.extract_slice %[[K]][0, %[[G:.+]], 0, 0] [9, 1, 16, 16] [1, 1, 1, 1] : tensor<9x2x16x16xf32> to tensor<9x1x16x16xf32>
// CHECK-DAG: %[[VS:.+]] = tensor.extract_slice %[[V]][0, %[[G]], 0, 0] [9, 1, 16, 8] [1, 1, 1, 1] : tensor<9x2x16x8xf32> to tensor<9x1x16x8xf32>
// CHECK-DAG: %[[LS:.+]] = tensor.extract_slice %[[LENS]][%[[B]]] [1] [1] : tensor<2xi32> to tensor<1xi32>
// CHECK-DAG: %[[TS:.+]] = tensor.extract_slice %[[T]][%[[B]], 0] [1, 8] [1, 1] : tensor<2x8xi32> to tensor<1x8xi32>
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[L32:.+]] = tensor.extract %[[LENS]][%[[B]]] : tensor<2xi32>
// CHECK-DAG: %[[L:.+]] = arith.index_cast %[[L32]] : i32 to index
// CHECK-DAG: %[[LP:.+]] = arith.maxsi %[[L]], %{{.+}} : index
// CHECK-DAG: %[[LB:.+]] = arith.minsi %[[LP]], %[[C128]] : index
// CHECK-DAG: %[[D:.+]] = affine.apply #[[$DIAG]](%[[LB]], %[[I0]])
// CHECK: fa.attention %{{.+}}, %[[KS]], %[[VS]] diagonal(%[[D]]) kv_lens(%[[LS]] : tensor<1xi32>) pages(%[[TS]] : tensor<1x8xi32>) {causal}
// CHECK-SAME: : tensor<1x2x32x16xf32>, tensor<9x1x16x16xf32>, tensor<9x1x16x8xf32> -> tensor<1x2x32x8xf32>
func.func @paged_rows(%q: tensor<2x4x64x16xf32>, %k: tensor<9x2x16x16xf32>, %v: tensor<9x2x16x8xf32>,
                      %lens: tensor<2xi32>, %table: tensor<2x8xi32>) -> tensor<2x4x64x8xf32> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) pages(%table : tensor<2x8xi32>) {causal}
      : tensor<2x4x64x16xf32>, tensor<9x2x16x16xf32>, tensor<9x2x16x8xf32> -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
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

// Batch tiles of 2 with whole rows: each sequence keeps its own L_b - Nq, no
// diagonal needed.
// CHECK-LABEL: func.func @kv_lens_batch_tile
// CHECK-SAME: %[[LENS:[^:]+]]: tensor<4xi32>)
// CHECK: scf.forall (%[[B:.+]]) in (2)
// CHECK: %[[B0:.+]] = affine.apply #{{.+}}(%[[B]])
// CHECK: tensor.extract_slice %{{.+}}[%[[B0]], 0, 0, 0] [2, 2, 64, 16]
// CHECK: %[[LS:.+]] = tensor.extract_slice %[[LENS]][%[[B0]]] [2] [1] : tensor<4xi32> to tensor<2xi32>
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} kv_lens(%[[LS]] : tensor<2xi32>) {causal}
func.func @kv_lens_batch_tile(%q: tensor<4x2x16x16xf32>, %k: tensor<4x2x64x16xf32>, %v: tensor<4x2x64x16xf32>,
                              %lens: tensor<4xi32>) -> tensor<4x2x16x16xf32> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<4xi32>) {causal}
      : tensor<4x2x16x16xf32>, tensor<4x2x64x16xf32>, tensor<4x2x64x16xf32> -> tensor<4x2x16x16xf32>
  return %o : tensor<4x2x16x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [2, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Pages without kv_lens: a row tile's diagonal is Ncap - Nq + i0 (Ncap = 4 *
// 16 = 64, Nq = 16), whatever the batch tile.
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 8)>
// CHECK-DAG: #[[$DIAG:.+]] = affine_map<(d0) -> (d0 + 48)>
// CHECK-LABEL: func.func @paged_no_lens_rows
// CHECK: scf.forall (%{{.+}}, %[[I:.+]]) in (2, 2)
// CHECK: %[[I0:.+]] = affine.apply #[[$ROW]](%[[I]])
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [3, 2, 16, 16]
// CHECK: %[[D:.+]] = affine.apply #[[$DIAG]](%[[I0]])
// CHECK: fa.attention {{.+}} diagonal(%[[D]]) pages(%{{.+}} : tensor<2x4xi32>) {window = array<i64: 8, 0>}
func.func @paged_no_lens_rows(%q: tensor<4x2x16x16xf32>, %k: tensor<3x2x16x16xf32>, %v: tensor<3x2x16x16xf32>,
                              %table: tensor<4x4xi32>) -> tensor<4x2x16x16xf32> {
  %o = fa.attention %q, %k, %v pages(%table : tensor<4x4xi32>) {window = array<i64: 8, 0>}
      : tensor<4x2x16x16xf32>, tensor<3x2x16x16xf32>, tensor<3x2x16x16xf32> -> tensor<4x2x16x16xf32>
  return %o : tensor<4x2x16x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [2, 0, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Rows of several sequences at once with kv_lens and no diagonal: each has
// its own L_b - Nq + i0, which one diagonal(...) cannot carry.
func.func @kv_lens_rows_two_sequences(%q: tensor<4x2x16x16xf32>, %k: tensor<4x2x64x16xf32>,
                                      %v: tensor<4x2x64x16xf32>, %lens: tensor<4xi32>) -> tensor<4x2x16x16xf32> {
  // expected-error @+4 {{'fa.attention' op cannot tile the query rows of a causal/window op with kv_lens and no diagonal(...) with a batch tile of 2: each sequence's diagonal is L_b - Nq + i0, one value only for a batch tile of size 1}}
  // expected-error @+3 {{faild to tile operation}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-note @+1 {{when applied to this op}}
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<4xi32>) {causal}
      : tensor<4x2x16x16xf32>, tensor<4x2x64x16xf32>, tensor<4x2x64x16xf32> -> tensor<4x2x16x16xf32>
  return %o : tensor<4x2x16x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [2, 0, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// With an explicit diagonal the rows of several sequences tile as without
// kv_lens: d + i0.
// CHECK-LABEL: func.func @kv_lens_explicit_diagonal_rows
// CHECK-SAME: %[[DG:[^:]+]]: index)
// CHECK: scf.forall (%{{.+}}, %[[I:.+]]) in (2, 2)
// CHECK: %[[I0:.+]] = affine.apply #{{.+}}(%[[I]])
// CHECK: %[[D:.+]] = affine.apply #{{.+}}(%[[I0]])[%[[DG]]]
// CHECK: fa.attention {{.+}} diagonal(%[[D]]) kv_lens(%{{.+}} : tensor<2xi32>) {causal}
func.func @kv_lens_explicit_diagonal_rows(%q: tensor<4x2x16x16xf32>, %k: tensor<4x2x64x16xf32>,
                                          %v: tensor<4x2x64x16xf32>, %lens: tensor<4xi32>, %d: index)
    -> tensor<4x2x16x16xf32> {
  %o = fa.attention %q, %k, %v diagonal(%d) kv_lens(%lens : tensor<4xi32>) {causal}
      : tensor<4x2x16x16xf32>, tensor<4x2x64x16xf32>, tensor<4x2x64x16xf32> -> tensor<4x2x16x16xf32>
  return %o : tensor<4x2x16x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [2, 0, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// varlen: a row tile would cut the packed sequences.
func.func @varlen_rows(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x64x16xf32>, %c: tensor<3xi32>) -> tensor<1x2x16x16xf32> {
  // expected-error @+4 {{'fa.attention' op cannot tile the query rows of a varlen op (a tile would cut its packed sequences); tile the heads only}}
  // expected-error @+3 {{faild to tile operation}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-note @+1 {{when applied to this op}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) {causal}
      : tensor<1x2x16x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x16x16xf32>
  return %o : tensor<1x2x16x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 0, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// varlen: head tiles keep the offsets.
// CHECK-LABEL: func.func @varlen_heads
// CHECK: scf.forall
// CHECK: fa.attention {{.+}} varlen(%{{.+}}, %{{.+}} : tensor<3xi32>, tensor<3xi32>) {causal} : tensor<1x1x16x16xf32>, tensor<1x1x64x16xf32>
func.func @varlen_heads(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x64x16xf32>, %c: tensor<3xi32>) -> tensor<1x2x16x16xf32> {
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) {causal}
      : tensor<1x2x16x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x16x16xf32>
  return %o : tensor<1x2x16x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["fa.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
