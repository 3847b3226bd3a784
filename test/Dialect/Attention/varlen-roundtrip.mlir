// RUN: fa-opt %s --split-input-file | FileCheck %s
// RUN: fa-opt %s --split-input-file --mlir-print-op-generic \
// RUN: | fa-opt --split-input-file | FileCheck %s
// RUN: fa-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The varlen(...) clause of fa.attention: packed variable-length sequences,
// after pages(...) and before the attributes.

// CHECK-LABEL: func.func @packed_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<1x8x400x64xf16>, %[[K:.+]]: tensor<1x2x400x64xf16>, %[[CQ:.+]]: tensor<4xi32>, %[[CK:.+]]: tensor<4xi32>)
// CHECK: fa.attention %[[Q]], %[[K]], %[[K]] varlen(%[[CQ]], %[[CK]] : tensor<4xi32>, tensor<4xi32>) {causal}
// GENERIC-LABEL: sym_name = "packed_causal"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1>
func.func @packed_causal(%q: tensor<1x8x400x64xf16>, %k: tensor<1x2x400x64xf16>,
                         %cq: tensor<4xi32>, %ck: tensor<4xi32>) -> tensor<1x8x400x64xf16> {
  %o = fa.attention %q, %k, %k varlen(%cq, %ck : tensor<4xi32>, tensor<4xi32>) {causal}
      : tensor<1x8x400x64xf16>, tensor<1x2x400x64xf16>, tensor<1x2x400x64xf16> -> tensor<1x8x400x64xf16>
  return %o : tensor<1x8x400x64xf16>
}

// -----

// Dynamic packed lengths and offset count, with lse and a window.
// CHECK-LABEL: func.func @packed_dynamic
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} varlen(%{{.+}}, %{{.+}} : tensor<?xi32>, tensor<?xi32>) {window = array<i64: 64, 0>} : tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16> -> (tensor<1x4x?x128xbf16>, tensor<1x4x?xf32>)
func.func @packed_dynamic(%q: tensor<1x4x?x128xbf16>, %k: tensor<1x4x?x128xbf16>,
                          %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x4x?x128xbf16>, tensor<1x4x?xf32>) {
  %o, %l = fa.attention %q, %k, %k varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {window = array<i64: 64, 0>}
      : tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16> -> (tensor<1x4x?x128xbf16>, tensor<1x4x?xf32>)
  return %o, %l : tensor<1x4x?x128xbf16>, tensor<1x4x?xf32>
}
