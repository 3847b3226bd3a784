// RUN: fa-opt %s --split-input-file | FileCheck %s
// RUN: fa-opt %s --split-input-file --mlir-print-op-generic \
// RUN: | fa-opt --split-input-file | FileCheck %s
// RUN: fa-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The kv_lens(...) and pages(...) clauses of fa.attention: per-sequence key
// lengths and paged K/V pools, after diagonal(...) and before the attributes.

// Decoding from a paged cache: the pools' dim 0 (512 pages) is no batch.
// CHECK-LABEL: func.func @paged_decode
// CHECK-SAME: (%[[Q:.+]]: tensor<4x32x1x128xf16>, %[[K:.+]]: tensor<512x8x16x128xf16>, %[[V:.+]]: tensor<512x8x16x128xf16>, %[[L:.+]]: tensor<4xi32>, %[[T:.+]]: tensor<4x64xi32>)
// CHECK: fa.attention %[[Q]], %[[K]], %[[V]] kv_lens(%[[L]] : tensor<4xi32>) pages(%[[T]] : tensor<4x64xi32>) {causal}
// CHECK-SAME: : tensor<4x32x1x128xf16>, tensor<512x8x16x128xf16>, tensor<512x8x16x128xf16> -> tensor<4x32x1x128xf16>
// GENERIC-LABEL: sym_name = "paged_decode"
// GENERIC: "fa.attention"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0>}>
func.func @paged_decode(%q: tensor<4x32x1x128xf16>, %k: tensor<512x8x16x128xf16>,
                        %v: tensor<512x8x16x128xf16>, %lens: tensor<4xi32>,
                        %table: tensor<4x64xi32>) -> tensor<4x32x1x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<4xi32>) pages(%table : tensor<4x64xi32>) {causal}
      : tensor<4x32x1x128xf16>, tensor<512x8x16x128xf16>, tensor<512x8x16x128xf16> -> tensor<4x32x1x128xf16>
  return %o : tensor<4x32x1x128xf16>
}

// -----

// kv_lens alone: key and value keep their [B, Hkv, Nk, D] layout.
// CHECK-LABEL: func.func @kv_lens_only
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} kv_lens(%{{.+}} : tensor<2xi32>) : tensor<2x4x8x32xf32>
// GENERIC-LABEL: sym_name = "kv_lens_only"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0>
func.func @kv_lens_only(%q: tensor<2x4x8x32xf32>, %k: tensor<2x2x64x32xf32>,
                        %v: tensor<2x2x64x32xf32>, %lens: tensor<2xi32>) -> tensor<2x4x8x32xf32> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>)
      : tensor<2x4x8x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32> -> tensor<2x4x8x32xf32>
  return %o : tensor<2x4x8x32xf32>
}

// -----

// pages alone (every sequence has M * S = 128 keys), a window, the lse result.
// CHECK-LABEL: func.func @pages_only
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} pages(%{{.+}} : tensor<2x2xi32>) {window = array<i64: 16, 0>}
// CHECK-SAME: -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
// GENERIC-LABEL: sym_name = "pages_only"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0>
func.func @pages_only(%q: tensor<2x4x8x32xbf16>, %k: tensor<7x2x64x32xbf16>,
                      %v: tensor<7x2x64x16xbf16>, %table: tensor<2x2xi32>)
    -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>) {
  %o, %lse = fa.attention %q, %k, %v pages(%table : tensor<2x2xi32>) {window = array<i64: 16, 0>}
      : tensor<2x4x8x32xbf16>, tensor<7x2x64x32xbf16>, tensor<7x2x64x16xbf16>
      -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  return %o, %lse : tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
}

// -----

// Every clause at once, in order; the mask's key dim is Ncap = M * S = 32.
// CHECK-LABEL: func.func @all_clauses
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<1x1x4x32xi1>) diagonal(%{{.+}}) kv_lens(%{{.+}} : tensor<2xi32>) pages(%{{.+}} : tensor<2x2xi32>) {causal, scale = 5.000000e-01 : f32}
// GENERIC-LABEL: sym_name = "all_clauses"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0>
func.func @all_clauses(%q: tensor<2x4x4x32xf16>, %k: tensor<9x1x16x32xf16>,
                       %v: tensor<9x1x16x32xf16>, %m: tensor<1x1x4x32xi1>, %d: index,
                       %lens: tensor<2xi32>, %table: tensor<2x2xi32>) -> tensor<2x4x4x32xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x4x32xi1>) diagonal(%d)
      kv_lens(%lens : tensor<2xi32>) pages(%table : tensor<2x2xi32>) {causal, scale = 0.5 : f32}
      : tensor<2x4x4x32xf16>, tensor<9x1x16x32xf16>, tensor<9x1x16x32xf16> -> tensor<2x4x4x32xf16>
  return %o : tensor<2x4x4x32xf16>
}

// -----

// Dynamic batch, pages per sequence and pool size; S stays static.
// CHECK-LABEL: func.func @dynamic
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} kv_lens(%{{.+}} : tensor<?xi32>) pages(%{{.+}} : tensor<?x?xi32>) {causal} : tensor<?x8x?x64xf16>, tensor<?x2x32x64xf16>, tensor<?x2x32x64xf16> -> tensor<?x8x?x64xf16>
func.func @dynamic(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x32x64xf16>, %v: tensor<?x2x32x64xf16>,
                   %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal}
      : tensor<?x8x?x64xf16>, tensor<?x2x32x64xf16>, tensor<?x2x32x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// With modifier regions: the clauses come before the attribute dictionary
// and the regions after it.
// CHECK-LABEL: func.func @with_mask_mod
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} kv_lens(%{{.+}} : tensor<1xi32>) pages(%{{.+}} : tensor<1x4xi32>) {scale = 1.250000e-01 : f32} mask_mod {
func.func @with_mask_mod(%q: tensor<1x2x16x32xf16>, %k: tensor<8x2x16x32xf16>, %v: tensor<8x2x16x32xf16>,
                         %lens: tensor<1xi32>, %table: tensor<1x4xi32>) -> tensor<1x2x16x32xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<1xi32>) pages(%table : tensor<1x4xi32>) {scale = 0.125 : f32}
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ule, %j, %i : index
    fa.yield %keep : i1
  } : tensor<1x2x16x32xf16>, tensor<8x2x16x32xf16>, tensor<8x2x16x32xf16> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}
