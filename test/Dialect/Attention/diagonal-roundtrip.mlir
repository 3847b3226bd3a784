// RUN: fa-opt %s --split-input-file | FileCheck %s
// RUN: fa-opt %s --split-input-file --mlir-print-op-generic \
// RUN: | fa-opt --split-input-file | FileCheck %s

// The diagonal(...) clause of fa.attention: the key column of query row 0's
// diagonal, overriding Nk - Nq for causal and window bands.

// CHECK-LABEL: func.func @causal_diagonal
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x16x32xf16>, %[[K:.+]]: tensor<1x2x64x32xf16>, %[[V:.+]]: tensor<1x2x64x32xf16>, %[[D:.+]]: index)
// CHECK: fa.attention %[[Q]], %[[K]], %[[V]] diagonal(%[[D]]) {causal}
// CHECK-SAME: : tensor<1x2x16x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x16x32xf16>
func.func @causal_diagonal(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x64x32xf16>,
                           %v: tensor<1x2x64x32xf16>, %d: index) -> tensor<1x2x16x32xf16> {
  %o = fa.attention %q, %k, %v diagonal(%d) {causal}
      : tensor<1x2x16x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}

// -----

// After the other clauses, with a window and the lse result.
// CHECK-LABEL: func.func @window_mask_diagonal
// CHECK: %[[C:.+]] = arith.constant -4 : index
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<1x1x16x64xi1>) diagonal(%[[C]]) {window = array<i64: 8, 2>}
// CHECK-SAME: -> (tensor<2x4x16x32xf32>, tensor<2x4x16xf32>)
func.func @window_mask_diagonal(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x64x32xf32>,
                                %v: tensor<2x2x64x32xf32>, %m: tensor<1x1x16x64xi1>)
    -> (tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) {
  %c = arith.constant -4 : index
  %o, %lse = fa.attention %q, %k, %v mask(%m : tensor<1x1x16x64xi1>) diagonal(%c)
      {window = array<i64: 8, 2>}
      : tensor<2x4x16x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>
      -> (tensor<2x4x16x32xf32>, tensor<2x4x16xf32>)
  return %o, %lse : tensor<2x4x16x32xf32>, tensor<2x4x16xf32>
}

// -----

// With fp8 descale factors: diagonal comes after descale.
// CHECK-LABEL: func.func @fp8_diagonal
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} descale(%{{.+}}, %{{.+}}, %{{.+}}) diagonal(%{{.+}}) {causal}
func.func @fp8_diagonal(%q: tensor<1x1x16x32xf8E4M3FN>, %k: tensor<1x1x64x32xf8E4M3FN>,
                        %v: tensor<1x1x64x32xf8E4M3FN>, %s: f32, %d: index) -> tensor<1x1x16x32xf16> {
  %o = fa.attention %q, %k, %v descale(%s, %s, %s) diagonal(%d) {causal}
      : tensor<1x1x16x32xf8E4M3FN>, tensor<1x1x64x32xf8E4M3FN>, tensor<1x1x64x32xf8E4M3FN>
      -> tensor<1x1x16x32xf16>
  return %o : tensor<1x1x16x32xf16>
}
