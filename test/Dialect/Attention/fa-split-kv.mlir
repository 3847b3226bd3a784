// RUN: fa-opt %s --fa-split-kv=splits=4 --split-input-file | FileCheck %s
// RUN: fa-opt %s --fa-split-kv=splits=1 --split-input-file | FileCheck %s --check-prefix=PACK
// RUN: not fa-opt %s --fa-split-kv=splits=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=ZERO

// Decoding with GQA 4:1 per group: the group's 4 heads become 4 rows of one
// head, the 256 keys 4 chunks of 64 run as 4x the heads, without the causal
// mask (one row sees every key), with lse; the combine merges by lse.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:      %[[Q:.*]]: tensor<2x8x1x64xf16>, %[[K:.*]]: tensor<2x2x256x64xf16>, %[[V:.*]]: tensor<2x2x256x64xf16>)
// CHECK:         %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 4, 1, 64]
// CHECK:         %[[QP:.*]] = tensor.collapse_shape %[[QE]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x2x4x1x64xf16> into tensor<2x2x4x64xf16>
// CHECK:         %[[QB:.*]] = linalg.broadcast ins(%[[QP]] : tensor<2x2x4x64xf16>) outs(%{{.*}} : tensor<2x2x4x4x64xf16>) dimensions = [2]
// CHECK:         %[[QS:.*]] = tensor.collapse_shape %[[QB]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x4x4x64xf16> into tensor<2x8x4x64xf16>
// CHECK:         tensor.expand_shape %[[K]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, 2, 4, 64, 64]
// CHECK:         %[[KS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x4x64x64xf16> into tensor<2x8x64x64xf16>
// CHECK:         %[[VS:.*]] = tensor.collapse_shape
// CHECK:         fa.attention %[[QS]], %[[KS]], %[[VS]] : tensor<2x8x4x64xf16>, tensor<2x8x64x64xf16>, tensor<2x8x64x64xf16> -> (tensor<2x8x4x64xf16>, tensor<2x8x4xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK:           arith.maximumf
// CHECK:         linalg.generic
// CHECK:           arith.select
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]
// CHECK:           math.exp
// CHECK:           arith.mulf
// CHECK:         linalg.generic
// CHECK:           arith.divf
// CHECK:           arith.truncf
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x4x1x64xf16> into tensor<2x8x1x64xf16>
// CHECK-NOT:     fa.attention

// Packing alone (splits=1): one op over the 2 K/V heads, no lse, no combine.
// PACK-LABEL: func.func @decode(
// PACK:         fa.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x2x4x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16> -> tensor<2x2x4x64xf16>
// PACK-NOT:     linalg.generic

// ZERO: error: 'fa.attention' op fa-split-kv: splits must be >= 1
func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x256x64xf16>, %v: tensor<2x2x256x64xf16>) -> tensor<2x8x1x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<2x8x1x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16> -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

// -----

// Left as they are: rows that differ by position (causal over 2 rows, a
// window), a mask, dynamic shapes, a key length 4 does not divide.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-5: fa.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}
// CHECK-NOT:     tensor.collapse_shape
func.func @kept(%q2: tensor<1x4x2x64xf16>, %q: tensor<1x4x1x64xf16>, %k: tensor<1x1x256x64xf16>, %m: tensor<1x1x1x256xi1>,
                %qd: tensor<?x4x1x64xf16>, %k7: tensor<1x1x258x64xf16>) {
  %a = fa.attention %q2, %k, %k {causal} : tensor<1x4x2x64xf16>, tensor<1x1x256x64xf16>, tensor<1x1x256x64xf16> -> tensor<1x4x2x64xf16>
  %b = fa.attention %q, %k, %k {window = array<i64: 16, 0>} : tensor<1x4x1x64xf16>, tensor<1x1x256x64xf16>, tensor<1x1x256x64xf16> -> tensor<1x4x1x64xf16>
  %c = fa.attention %q, %k, %k mask(%m : tensor<1x1x1x256xi1>) : tensor<1x4x1x64xf16>, tensor<1x1x256x64xf16>, tensor<1x1x256x64xf16> -> tensor<1x4x1x64xf16>
  %d = fa.attention %qd, %k, %k : tensor<?x4x1x64xf16>, tensor<1x1x256x64xf16>, tensor<1x1x256x64xf16> -> tensor<?x4x1x64xf16>
  %e = fa.attention %q, %k7, %k7 : tensor<1x4x1x64xf16>, tensor<1x1x258x64xf16>, tensor<1x1x258x64xf16> -> tensor<1x4x1x64xf16>
  return
}

// -----

// Left as they are: kv_lens and pages (chunks of key dim 2 would be chunks of
// pages, and the chunks would need their own lengths), though they are
// decode-shaped and the key lengths divide.
// CHECK-LABEL: func.func @kept_kv_cache(
// CHECK:         fa.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} kv_lens(%{{.*}} : tensor<2xi32>) {causal}
// CHECK:         fa.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} pages(%{{.*}} : tensor<2x4xi32>) :
// CHECK-NOT:     tensor.collapse_shape
// PACK-LABEL: func.func @kept_kv_cache(
// PACK-NOT:     tensor.collapse_shape
func.func @kept_kv_cache(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x256x64xf16>, %kp: tensor<9x2x64x64xf16>,
                         %lens: tensor<2xi32>, %table: tensor<2x4xi32>) {
  %a = fa.attention %q, %k, %k kv_lens(%lens : tensor<2xi32>) {causal}
      : tensor<2x8x1x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16> -> tensor<2x8x1x64xf16>
  %b = fa.attention %q, %kp, %kp pages(%table : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<9x2x64x64xf16>, tensor<9x2x64x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

// Left as they are: varlen (chunks of the packed keys would cut sequences).
// CHECK-LABEL: func.func @kept_varlen(
// CHECK:         fa.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} varlen(
// CHECK-NOT:     tensor.collapse_shape
// PACK-LABEL: func.func @kept_varlen(
// PACK-NOT:     tensor.collapse_shape
func.func @kept_varlen(%q: tensor<1x8x2x64xf16>, %k: tensor<1x2x512x64xf16>, %c: tensor<3xi32>) {
  %a = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x8x2x64xf16>, tensor<1x2x512x64xf16>, tensor<1x2x512x64xf16> -> tensor<1x8x2x64xf16>
  return
}
