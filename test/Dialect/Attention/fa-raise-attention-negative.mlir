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

// tril(diagonal=len) with len a runtime tensor: not a function of positions alone.
// CHECK-LABEL: func.func @mask_runtime(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @mask_runtime(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %len: tensor<i64>) -> tensor<2x4x16x32xf32> {
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

  %ones = arith.constant dense<true> : tensor<16x16xi1>
  %tril_e = tensor.empty() : tensor<16x16xi1>
  %tril = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ones : tensor<16x16xi1>) outs(%tril_e : tensor<16x16xi1>) {
  ^bb0(%in: i1, %out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %c = tensor.extract %len[] : tensor<i64>
    %le = arith.cmpi sle, %d, %c : i64
    %false = arith.constant false
    %0 = arith.select %le, %in, %false : i1
    linalg.yield %0 : i1
  } -> tensor<16x16xi1>
  %not_e = tensor.empty() : tensor<16x16xi1>
  %not = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tril : tensor<16x16xi1>) outs(%not_e : tensor<16x16xi1>) {
  ^bb0(%in: i1, %out: i1):
    %true = arith.constant true
    %0 = arith.xori %in, %true : i1
    linalg.yield %0 : i1
  } -> tensor<16x16xi1>
  %bias_zero = arith.constant 0.000000e+00 : f32
  %bias_e = tensor.empty() : tensor<16x16xf32>
  %bias_z = linalg.fill ins(%bias_zero : f32) outs(%bias_e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%not, %bias_z : tensor<16x16xi1>, tensor<16x16xf32>) outs(%bias_e : tensor<16x16xf32>) {
  ^bb0(%in: i1, %in_0: f32, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %0 = arith.select %in, %ninf, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<16x16xf32>
  %sm_in_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %bias : tensor<2x4x16x16xf32>, tensor<16x16xf32>) outs(%sm_in_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_in : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_in, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
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

// The scale is a function argument, not a constant.
// CHECK-LABEL: func.func @scale_runtime(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @scale_runtime(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %scale: f32) -> tensor<2x4x16x32xf32> {
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

// masked_fill with -1e9: a finite bias above -1e30 is not taken for -inf.
// CHECK-LABEL: func.func @mask_finite_small(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @mask_finite_small(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
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

  %ones = arith.constant dense<true> : tensor<16x16xi1>
  %tril_e = tensor.empty() : tensor<16x16xi1>
  %tril = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ones : tensor<16x16xi1>) outs(%tril_e : tensor<16x16xi1>) {
  ^bb0(%in: i1, %out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %c = arith.constant 0 : i64
    %le = arith.cmpi sle, %d, %c : i64
    %false = arith.constant false
    %0 = arith.select %le, %in, %false : i1
    linalg.yield %0 : i1
  } -> tensor<16x16xi1>
  %not_e = tensor.empty() : tensor<16x16xi1>
  %not = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tril : tensor<16x16xi1>) outs(%not_e : tensor<16x16xi1>) {
  ^bb0(%in: i1, %out: i1):
    %true = arith.constant true
    %0 = arith.xori %in, %true : i1
    linalg.yield %0 : i1
  } -> tensor<16x16xi1>
  %bias_zero = arith.constant 0.000000e+00 : f32
  %bias_e = tensor.empty() : tensor<16x16xf32>
  %bias_z = linalg.fill ins(%bias_zero : f32) outs(%bias_e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%not, %bias_z : tensor<16x16xi1>, tensor<16x16xf32>) outs(%bias_e : tensor<16x16xf32>) {
  ^bb0(%in: i1, %in_0: f32, %out: f32):
    %ninf = arith.constant -1.000000e+09 : f32
    %0 = arith.select %in, %ninf, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<16x16xf32>
  %sm_in_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %bias : tensor<2x4x16x16xf32>, tensor<16x16xf32>) outs(%sm_in_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_in : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_in, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
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

// (s + mask) * scale: the mask is scaled too, fa adds it after the scale.
// CHECK-LABEL: func.func @mask_before_scale(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @mask_before_scale(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %mask: tensor<2x1x16x16xf32>) -> tensor<2x4x16x32xf32> {
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
  %sm_in_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x4x16x16xf32>, tensor<2x1x16x16xf32>) outs(%sm_in_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %scale = arith.constant 0.176776695 : f32
  %ss_e = tensor.empty() : tensor<2x4x16x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_in : tensor<2x4x16x16xf32>) outs(%ss_e : tensor<2x4x16x16xf32>) {
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

// j != i: the visible keys of a row are not one interval around the diagonal.
// CHECK-LABEL: func.func @not_band(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
func.func @not_band(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %c0 = arith.constant 0 : i64
    %k0 = arith.cmpi ne, %d, %c0 : i64
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %k0, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
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

// -----

// A boolean and an additive mask: fa.attention has one mask operand.
// CHECK-LABEL: func.func @bool_and_additive(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
func.func @bool_and_additive(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>, %mask: tensor<16x16xi1>, %bias: tensor<16x16xf32>) -> tensor<8x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask, %bias : tensor<8x16x16xf32>, tensor<16x16xi1>, tensor<16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) {
  ^bb0(%x: f32, %m: i1, %a: f32, %out: f32):
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.addf %y, %a : f32
    %r = arith.select %m, %z, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// The causal -inf inside the cap (tanh of the masked scores): fa caps, then masks.
// CHECK-LABEL: func.func @mask_inside_cap(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
func.func @mask_inside_cap(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %le = arith.cmpi ule, %j, %i : index
    %scale = arith.constant 0.176776695 : f32
    %cap = arith.constant 5.000000e+01 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %ym = arith.select %le, %y, %ninf : f32
    %u = arith.divf %ym, %cap : f32
    %th = math.tanh %u : f32
    %r = arith.mulf %th, %cap : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// Positions cast to i32 on dynamic sizes: the band cannot be derived without
// the sizes (the cast wraps past 2^31).
// CHECK-LABEL: func.func @dynamic_i32(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
func.func @dynamic_i32(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %b = tensor.dim %q, %i0 : tensor<?x?x32xf32>
  %nq = tensor.dim %q, %i1 : tensor<?x?x32xf32>
  %nk = tensor.dim %k, %i1 : tensor<?x?x32xf32>
  %kt_e = tensor.empty(%b, %nk) : tensor<?x32x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x?x32xf32>) outs(%kt_e : tensor<?x32x?xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty(%b, %nq, %nk) : tensor<?x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<?x?x32xf32>, tensor<?x32x?xf32>) outs(%s_f : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %i64 = arith.index_cast %i : index to i32
    %j64 = arith.index_cast %j : index to i32
    %d = arith.subi %j64, %i64 : i32
    %c0 = arith.constant 0 : i32
    %k0 = arith.cmpi sle, %d, %c0 : i32
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %k0, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<?x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o_e = tensor.empty(%b, %nq) : tensor<?x?x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x32xf32>) outs(%o_f : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %o : tensor<?x?x32xf32>
}

// -----

// Two causal conditions combined 30 times through i1 tensors (a_n = a_(n-1) and
// b_(n-1), b_n = b_(n-1) and a_(n-1), one generic per step): a DAG of a few hundred
// nodes but 2^30 as a tree, which the proof would evaluate at every point.
// Refused (bounded work), left alone.
// CHECK-LABEL: func.func @condition_dag(
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @condition_dag(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %m_e = tensor.empty() : tensor<16x16xi1>
  %a0, %b0 = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%o1: i1, %o2: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %u = arith.cmpi ule, %j, %i : index
    %w = arith.cmpi sle, %j, %i : index
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a1, %b1 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a0, %b0 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a2, %b2 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a1, %b1 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a3, %b3 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a2, %b2 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a4, %b4 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a3, %b3 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a5, %b5 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a4, %b4 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a6, %b6 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a5, %b5 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a7, %b7 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a6, %b6 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a8, %b8 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a7, %b7 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a9, %b9 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a8, %b8 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a10, %b10 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a9, %b9 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a11, %b11 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a10, %b10 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a12, %b12 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a11, %b11 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a13, %b13 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a12, %b12 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a14, %b14 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a13, %b13 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a15, %b15 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a14, %b14 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a16, %b16 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a15, %b15 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a17, %b17 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a16, %b16 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a18, %b18 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a17, %b17 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a19, %b19 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a18, %b18 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a20, %b20 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a19, %b19 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a21, %b21 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a20, %b20 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a22, %b22 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a21, %b21 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a23, %b23 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a22, %b22 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a24, %b24 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a23, %b23 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a25, %b25 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a24, %b24 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a26, %b26 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a25, %b25 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a27, %b27 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a26, %b26 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a28, %b28 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a27, %b27 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a29, %b29 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a28, %b28 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %a30, %b30 = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%a29, %b29 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%m_e, %m_e : tensor<16x16xi1>, tensor<16x16xi1>) {
  ^bb0(%e: i1, %f: i1, %o1: i1, %o2: i1):
    %u = arith.andi %e, %f : i1
    %w = arith.andi %f, %e : i1
    linalg.yield %u, %w : i1, i1
  } -> (tensor<16x16xi1>, tensor<16x16xi1>)
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %a30 : tensor<8x16x16xf32>, tensor<16x16xi1>) outs(%s_e : tensor<8x16x16xf32>) {
  ^bb0(%x: f32, %c: i1, %out: f32):
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %c, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}
