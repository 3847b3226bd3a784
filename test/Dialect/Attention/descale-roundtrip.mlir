// RUN: fa-opt %s --split-input-file | FileCheck %s
// RUN: fa-opt %s --split-input-file --mlir-print-op-generic \
// RUN: | fa-opt --split-input-file | FileCheck %s

// The descale clause of fa.attention: scalars keep the old syntax (no types
// printed); tensors print their types after a colon.

// CHECK-LABEL: func.func @per_tensor
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} descale(%[[QD:.+]], %[[KD:.+]], %[[VD:[^ )]+]]) : tensor
func.func @per_tensor(%q: tensor<1x4x16x32xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x16x32xf16> {
  %o = fa.attention %q, %q, %q descale(%qd, %kd, %vd)
      : tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN> -> tensor<1x4x16x32xf16>
  return %o : tensor<1x4x16x32xf16>
}

// -----

// CHECK-LABEL: func.func @per_head
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {causal}
func.func @per_head(%q: tensor<2x8x64x32xf8E4M3FN>, %k: tensor<2x2x64x32xf8E4M3FN>,
                    %qd: tensor<2x8xf32>, %kd: tensor<2x2xf32>) -> tensor<2x8x64x32xbf16> {
  %o = fa.attention %q, %k, %k descale(%qd, %kd, %kd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {causal}
      : tensor<2x8x64x32xf8E4M3FN>, tensor<2x2x64x32xf8E4M3FN>, tensor<2x2x64x32xf8E4M3FN> -> tensor<2x8x64x32xbf16>
  return %o : tensor<2x8x64x32xbf16>
}

// -----

// CHECK-LABEL: func.func @per_block
// CHECK: %{{.*}}, %{{.*}} = fa.attention %{{.*}}, %{{.*}}, %{{.*}} descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>) {descale_block = array<i64: 128, 128>}
// CHECK-SAME: -> (tensor<2x8x500x64xf16>, tensor<2x8x500xf32>)
func.func @per_block(%q: tensor<2x8x500x64xf8E4M3FN>, %k: tensor<2x2x400x64xf8E4M3FN>,
                     %qd: tensor<2x8x4xf32>, %kd: tensor<2x2x4xf32>, %vd: tensor<2x2x4xf32>)
    -> (tensor<2x8x500x64xf16>, tensor<2x8x500xf32>) {
  %o, %lse = fa.attention %q, %k, %k descale(%qd, %kd, %vd : tensor<2x8x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
      {descale_block = array<i64: 128, 128>}
      : tensor<2x8x500x64xf8E4M3FN>, tensor<2x2x400x64xf8E4M3FN>, tensor<2x2x400x64xf8E4M3FN>
      -> (tensor<2x8x500x64xf16>, tensor<2x8x500xf32>)
  return %o, %lse : tensor<2x8x500x64xf16>, tensor<2x8x500xf32>
}

// -----

// Dynamic dims where the other shapes are dynamic.
// CHECK-LABEL: func.func @per_block_dynamic
// CHECK: descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8x?xf32>, tensor<?x2x?xf32>, tensor<?x2x?xf32>) {descale_block = array<i64: 64, 32>}
func.func @per_block_dynamic(%q: tensor<?x8x?x64xf8E4M3FN>, %k: tensor<?x2x?x64xf8E4M3FN>,
                             %qd: tensor<?x8x?xf32>, %kd: tensor<?x2x?xf32>) -> tensor<?x8x?x64xf32> {
  %o = fa.attention %q, %k, %k descale(%qd, %kd, %kd : tensor<?x8x?xf32>, tensor<?x2x?xf32>, tensor<?x2x?xf32>)
      {descale_block = array<i64: 64, 32>}
      : tensor<?x8x?x64xf8E4M3FN>, tensor<?x2x?x64xf8E4M3FN>, tensor<?x2x?x64xf8E4M3FN> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// -----

// fa.online_attention with a score and a value descale.
// CHECK-LABEL: func.func @online_value_descale
// CHECK: fa.online_attention %{{.*}} into %{{.*}} descale(%[[S:.+]], %[[V:[^ )]+]]) {scale = 1.250000e-01 : f32}
func.func @online_value_descale(%q: tensor<16x32xf8E4M3FN>, %m: tensor<16xf32>, %acc: tensor<16x32xf32>,
                                %sd: f32, %vd: f32) -> tensor<16x32xf32> {
  %r:3 = fa.online_attention %q, %q, %q into %m, %m, %acc descale(%sd, %vd) {scale = 0.125 : f32}
      : tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16xf32>, tensor<16x32xf32>
  return %r#2 : tensor<16x32xf32>
}
