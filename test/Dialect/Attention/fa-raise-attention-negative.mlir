// RUN: fa-opt %s --split-input-file --fa-raise-attention | FileCheck %s --implicit-check-not=fa.attention

// Attention-like linalg that fa-raise-attention must leave alone (each differs
// from a case of fa-raise-attention.mlir in the one way its comment says).

// softmax(dim=-2): max and sum reduce over the query dim.
// CHECK-LABEL: func.func @softmax_wrong_dim(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @softmax_wrong_dim(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x32x16xf32>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x32x16xf32> into tensor<8x32x16xf32>
  %qk_zero = arith.constant 0.000000e+00 : f32
  %qk_e = tensor.empty() : tensor<8x16x16xf32>
  %qk_f = linalg.fill ins(%qk_zero : f32) outs(%qk_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%qk_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
  %scale = arith.constant 0.176776695 : f32
  %ss_e = tensor.empty() : tensor<2x4x16x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x16x16xf32>) outs(%ss_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x1x16xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%ss : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x1x16xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x1x16xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.subf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>
  %sm_exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_sub : tensor<2x4x16x16xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>
  %sm_si = linalg.fill ins(%sm_zero : f32) outs(%sm_r : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  %sm_sum = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%sm_exp : tensor<2x4x16x16xf32>) outs(%sm_si : tensor<2x4x1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x1x16xf32>
  %sm_p = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_exp, %sm_sum : tensor<2x4x16x16xf32>, tensor<2x4x1x16xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.divf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x16x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// exp(s) / sum(exp(s)) without the max subtraction: mathematically the softmax,
// but it overflows where the original would, so it is left as written.
// CHECK-LABEL: func.func @softmax_no_max(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @softmax_no_max(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x32x16xf32>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x32x16xf32> into tensor<8x32x16xf32>
  %qk_zero = arith.constant 0.000000e+00 : f32
  %qk_e = tensor.empty() : tensor<8x16x16xf32>
  %qk_f = linalg.fill ins(%qk_zero : f32) outs(%qk_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%qk_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
  %scale = arith.constant 0.176776695 : f32
  %ss_e = tensor.empty() : tensor<2x4x16x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x16x16xf32>) outs(%ss_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ss : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.subf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>
  %sm_exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss : tensor<2x4x16x16xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>
  %sm_si = linalg.fill ins(%sm_zero : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_exp : tensor<2x4x16x16xf32>) outs(%sm_si : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_exp, %sm_sum : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.divf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x16x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// P^T V: the second contraction is over the query dim of P.
// CHECK-LABEL: func.func @pv_wrong_dim(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @pv_wrong_dim(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x32x16xf32>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x32x16xf32> into tensor<8x32x16xf32>
  %qk_zero = arith.constant 0.000000e+00 : f32
  %qk_e = tensor.empty() : tensor<8x16x16xf32>
  %qk_f = linalg.fill ins(%qk_zero : f32) outs(%qk_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%qk_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
  %scale = arith.constant 0.176776695 : f32
  %ss_e = tensor.empty() : tensor<2x4x16x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x16x16xf32>) outs(%ss_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ss : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.subf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>
  %sm_exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_sub : tensor<2x4x16x16xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>
  %sm_si = linalg.fill ins(%sm_zero : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_exp : tensor<2x4x16x16xf32>) outs(%sm_si : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_exp, %sm_sum : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.divf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %ptr_e = tensor.empty() : tensor<2x4x16x16xf32>
  %ptr = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_p : tensor<2x4x16x16xf32>) outs(%ptr_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x16x16xf32>

  %pc = tensor.collapse_shape %ptr [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x16x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// The first contraction also sums over the heads (two reduction dims): not Q K^T.
// CHECK-LABEL: func.func @qk_reduces_heads(
// CHECK: linalg.generic
// CHECK: linalg.softmax
// CHECK: linalg.batch_matmul
func.func @qk_reduces_heads(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %s_e = tensor.empty() : tensor<2x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%q, %k : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) outs(%s_f : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x16x16xf32>) outs(%s_e : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %o_e = tensor.empty() : tensor<2x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x32xf32>) outs(%o_f : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %o : tensor<2x16x32xf32>
}

// -----

// masked_fill(~mask, finfo.min) with a boolean tensor: whether a row loses every key
// depends on the data, where finite and -inf differ (average against 0).
// CHECK-LABEL: func.func @bool_finite(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
func.func @bool_finite(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>, %mask: tensor<16x16xi1>) -> tensor<8x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<8x16x16xf32>, tensor<16x16xi1>) outs(%s_e : tensor<8x16x16xf32>) {
  ^bb0(%x: f32, %m: i1, %out: f32):
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant -3.40282347E+38 : f32
    %r = arith.select %m, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}
