// RUN: fa-opt %s --split-input-file --fa-raise-attention | FileCheck %s

// Attention as torch-mlir's linalg-on-tensors backend and stablehlo-to-linalg
// lower it, raised to fa.attention; the dead linalg ops are erased.

// torch-mlir, f32: q @ k.transpose(-2, -1) * scale, softmax(dim=-1), @ v. aten.matmul
// collapses batch and heads around linalg.batch_matmul; the transpose is a generic;
// softmax is decomposed (max.dim keepdim, sub, exp, sum keepdim, div).
// CHECK-LABEL: func.func @torch_f32(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_f32(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
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

// f16 matmuls, the softmax in f32 between extf and truncf (the f16 scale constant,
// rounded, is the scale).
// CHECK-LABEL: func.func @torch_f16(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf16>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf16>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf16>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 0.176757813 : f32} : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16> -> tensor<2x4x16x32xf16>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_f16(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x16x32xf16>, %v: tensor<2x4x16x32xf16>) -> tensor<2x4x16x32xf16> {
  %kt_e = tensor.empty() : tensor<2x4x32x16xf16>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x32xf16>) outs(%kt_e : tensor<2x4x32x16xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<2x4x32x16xf16>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x16x32xf16> into tensor<8x16x32xf16>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x32x16xf16> into tensor<8x32x16xf16>
  %qk_zero = arith.constant 0.000000e+00 : f16
  %qk_e = tensor.empty() : tensor<8x16x16xf16>
  %qk_f = linalg.fill ins(%qk_zero : f16) outs(%qk_e : tensor<8x16x16xf16>) -> tensor<8x16x16xf16>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x16x32xf16>, tensor<8x32x16xf16>) outs(%qk_f : tensor<8x16x16xf16>) -> tensor<8x16x16xf16>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf16> into tensor<2x4x16x16xf16>
  %scale = arith.constant 0.176776695 : f16
  %ss_e = tensor.empty() : tensor<2x4x16x16xf16>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x16x16xf16>) outs(%ss_e : tensor<2x4x16x16xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.mulf %in, %scale : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x16xf16>

  %sx_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss : tensor<2x4x16x16xf16>) outs(%sx_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sx : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sx, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
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

  %pt_e = tensor.empty() : tensor<2x4x16x16xf16>
  %pt = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_p : tensor<2x4x16x16xf32>) outs(%pt_e : tensor<2x4x16x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x16xf16>

  %pc = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<2x4x16x16xf16> into tensor<8x16x16xf16>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x32xf16> into tensor<8x16x32xf16>
  %pv_zero = arith.constant 0.000000e+00 : f16
  %pv_e = tensor.empty() : tensor<8x16x32xf16>
  %pv_f = linalg.fill ins(%pv_zero : f16) outs(%pv_e : tensor<8x16x32xf16>) -> tensor<8x16x32xf16>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf16>, tensor<8x16x32xf16>) outs(%pv_f : tensor<8x16x32xf16>) -> tensor<8x16x32xf16>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf16> into tensor<2x4x16x32xf16>
  return %o : tensor<2x4x16x32xf16>
}

// -----

// f16 throughout (the softmax in f16 too): raised, fa.attention accumulates in f32.
// CHECK-LABEL: func.func @torch_f16_math(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf16>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf16>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf16>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 0.176757813 : f32} : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16> -> tensor<2x4x16x32xf16>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_f16_math(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x16x32xf16>, %v: tensor<2x4x16x32xf16>) -> tensor<2x4x16x32xf16> {
  %kt_e = tensor.empty() : tensor<2x4x32x16xf16>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x32xf16>) outs(%kt_e : tensor<2x4x32x16xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<2x4x32x16xf16>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x16x32xf16> into tensor<8x16x32xf16>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x32x16xf16> into tensor<8x32x16xf16>
  %qk_zero = arith.constant 0.000000e+00 : f16
  %qk_e = tensor.empty() : tensor<8x16x16xf16>
  %qk_f = linalg.fill ins(%qk_zero : f16) outs(%qk_e : tensor<8x16x16xf16>) -> tensor<8x16x16xf16>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x16x32xf16>, tensor<8x32x16xf16>) outs(%qk_f : tensor<8x16x16xf16>) -> tensor<8x16x16xf16>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf16> into tensor<2x4x16x16xf16>
  %scale = arith.constant 0.176776695 : f16
  %ss_e = tensor.empty() : tensor<2x4x16x16xf16>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x16x16xf16>) outs(%ss_e : tensor<2x4x16x16xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.mulf %in, %scale : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x16xf16>

  %sm_e = tensor.empty() : tensor<2x4x16x16xf16>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf16>
  %sm_ninf = arith.constant 0xFC00 : f16
  %sm_zero = arith.constant 0.000000e+00 : f16
  %sm_mi = linalg.fill ins(%sm_ninf : f16) outs(%sm_r : tensor<2x4x16x1xf16>) -> tensor<2x4x16x1xf16>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ss : tensor<2x4x16x16xf16>) outs(%sm_mi : tensor<2x4x16x1xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.maximumf %in, %out : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x1xf16>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %sm_max : tensor<2x4x16x16xf16>, tensor<2x4x16x1xf16>) outs(%sm_e : tensor<2x4x16x16xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %0 = arith.subf %in, %in_0 : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x16xf16>
  %sm_exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_sub : tensor<2x4x16x16xf16>) outs(%sm_e : tensor<2x4x16x16xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = math.exp %in : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x16xf16>
  %sm_si = linalg.fill ins(%sm_zero : f16) outs(%sm_r : tensor<2x4x16x1xf16>) -> tensor<2x4x16x1xf16>
  %sm_sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_exp : tensor<2x4x16x16xf16>) outs(%sm_si : tensor<2x4x16x1xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.addf %in, %out : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x1xf16>
  %sm_p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_exp, %sm_sum : tensor<2x4x16x16xf16>, tensor<2x4x16x1xf16>) outs(%sm_e : tensor<2x4x16x16xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %0 = arith.divf %in, %in_0 : f16
    linalg.yield %0 : f16
  } -> tensor<2x4x16x16xf16>

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x16x16xf16> into tensor<8x16x16xf16>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x32xf16> into tensor<8x16x32xf16>
  %pv_zero = arith.constant 0.000000e+00 : f16
  %pv_e = tensor.empty() : tensor<8x16x32xf16>
  %pv_f = linalg.fill ins(%pv_zero : f16) outs(%pv_e : tensor<8x16x32xf16>) -> tensor<8x16x32xf16>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf16>, tensor<8x16x32xf16>) outs(%pv_f : tensor<8x16x32xf16>) -> tensor<8x16x32xf16>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf16> into tensor<2x4x16x32xf16>
  return %o : tensor<2x4x16x32xf16>
}

// -----

// is_causal: ones(N, N, bool).tril(), masked_fill(~mask, -inf) on zeros, added to
// the scores (the mask from linalg.index comparisons). Nq == Nk: fa's causal.
// CHECK-LABEL: func.func @torch_causal(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_causal(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
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

// torch's tril() is aligned top-left: with Nq = 8 != Nk = 16 it is not fa's causal
// (diagonal Nk - Nq = 8) but the band j <= i + 0: diagonal(0).
// CHECK-LABEL: func.func @torch_causal_topleft(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[D:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] diagonal(%[[D]]) {causal, scale = 0.176776692 : f32}
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_causal_topleft(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x8x32xf32> {
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x32x16xf32>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x8x32xf32> into tensor<8x8x32xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x32x16xf32> into tensor<8x32x16xf32>
  %qk_zero = arith.constant 0.000000e+00 : f32
  %qk_e = tensor.empty() : tensor<8x8x16xf32>
  %qk_f = linalg.fill ins(%qk_zero : f32) outs(%qk_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x8x32xf32>, tensor<8x32x16xf32>) outs(%qk_f : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  %scale = arith.constant 0.176776695 : f32
  %ss_e = tensor.empty() : tensor<2x4x8x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x8x16xf32>) outs(%ss_e : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x16xf32>

  %ones = arith.constant dense<true> : tensor<8x16xi1>
  %tril_e = tensor.empty() : tensor<8x16xi1>
  %tril = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ones : tensor<8x16xi1>) outs(%tril_e : tensor<8x16xi1>) {
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
  } -> tensor<8x16xi1>
  %not_e = tensor.empty() : tensor<8x16xi1>
  %not = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tril : tensor<8x16xi1>) outs(%not_e : tensor<8x16xi1>) {
  ^bb0(%in: i1, %out: i1):
    %true = arith.constant true
    %0 = arith.xori %in, %true : i1
    linalg.yield %0 : i1
  } -> tensor<8x16xi1>
  %bias_zero = arith.constant 0.000000e+00 : f32
  %bias_e = tensor.empty() : tensor<8x16xf32>
  %bias_z = linalg.fill ins(%bias_zero : f32) outs(%bias_e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%not, %bias_z : tensor<8x16xi1>, tensor<8x16xf32>) outs(%bias_e : tensor<8x16xf32>) {
  ^bb0(%in: i1, %in_0: f32, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %0 = arith.select %in, %ninf, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %sm_in_e = tensor.empty() : tensor<2x4x8x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %bias : tensor<2x4x8x16xf32>, tensor<8x16xf32>) outs(%sm_in_e : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x16xf32>

  %sm_e = tensor.empty() : tensor<2x4x8x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x8x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x8x1xf32>) -> tensor<2x4x8x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_in : tensor<2x4x8x16xf32>) outs(%sm_mi : tensor<2x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_in, %sm_max : tensor<2x4x8x16xf32>, tensor<2x4x8x1xf32>) outs(%sm_e : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.subf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x16xf32>
  %sm_exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_sub : tensor<2x4x8x16xf32>) outs(%sm_e : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x16xf32>
  %sm_si = linalg.fill ins(%sm_zero : f32) outs(%sm_r : tensor<2x4x8x1xf32>) -> tensor<2x4x8x1xf32>
  %sm_sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_exp : tensor<2x4x8x16xf32>) outs(%sm_si : tensor<2x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x1xf32>
  %sm_p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_exp, %sm_sum : tensor<2x4x8x16xf32>, tensor<2x4x8x1xf32>) outs(%sm_e : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.divf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x16xf32>

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x8x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x8x32xf32>) -> tensor<8x8x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x8x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x8x32xf32>) -> tensor<8x8x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 32] : tensor<8x8x32xf32> into tensor<2x4x8x32xf32>
  return %o : tensor<2x4x8x32xf32>
}

// -----

// The same with finfo(float32).min for -inf: accepted (<= -1e30), no row is fully masked.
// CHECK-LABEL: func.func @torch_causal_lowest(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_causal_lowest(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
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
    %ninf = arith.constant -3.40282347E+38 : f32
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

// attn_mask [B, 1, Nq, Nk] added after the scale, broadcast over heads.
// CHECK-LABEL: func.func @torch_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[M:[a-z0-9]+]]: tensor<2x1x16x16xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<2x1x16x16xf32>) {scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_mask(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %mask: tensor<2x1x16x16xf32>) -> tensor<2x4x16x32xf32> {
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

  %sm_in_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %mask : tensor<2x4x16x16xf32>, tensor<2x1x16x16xf32>) outs(%sm_in_e : tensor<2x4x16x16xf32>) {
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

// attn_mask [Nq, Nk]: expanded to [1, 1, Nq, Nk].
// CHECK-LABEL: func.func @torch_mask_2d(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[M:[a-z0-9]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[M4:.+]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 16]
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] mask(%[[M4]] : tensor<1x1x16x16xf32>) {scale = 0.176776692 : f32}
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_mask_2d(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x32xf32> {
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

  %sm_in_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %mask : tensor<2x4x16x16xf32>, tensor<16x16xf32>) outs(%sm_in_e : tensor<2x4x16x16xf32>) {
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

// GQA: k, v [B, 2, N, D] through repeat_interleave(2, dim=1) (unsqueeze, expand as
// a broadcasting generic, flatten): fa.attention reads the 2 K/V heads.
// CHECK-LABEL: func.func @torch_gqa(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_gqa(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %kx = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 32] : tensor<2x2x16x32xf32> into tensor<2x2x1x16x32xf32>
  %kb_e = tensor.empty() : tensor<2x2x2x16x32xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kx : tensor<2x2x1x16x32xf32>) outs(%kb_e : tensor<2x2x2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x32xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<2x4x16x32xf32>
  %vx = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 32] : tensor<2x2x16x32xf32> into tensor<2x2x1x16x32xf32>
  %vb_e = tensor.empty() : tensor<2x2x2x16x32xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vx : tensor<2x2x1x16x32xf32>) outs(%vb_e : tensor<2x2x2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x32xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<2x4x16x32xf32>
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kr : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
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

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %vc = tensor.collapse_shape %vr [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x16x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// No scale: scale = 1.0, stated (fa.attention's default is 1/sqrt(D)).
// CHECK-LABEL: func.func @torch_noscale(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f32} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_noscale(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
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
  %sm_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_r = tensor.empty() : tensor<2x4x16x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : tensor<2x4x16x16xf32>) outs(%sm_mi : tensor<2x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %sm_max : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%sm_e : tensor<2x4x16x16xf32>) {
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

// K/V heads tiled (repeat, head h reads K/V head h % 2) rather than interleaved:
// not fa's grouping, so fa.attention reads the repeated K and V.
// CHECK-LABEL: func.func @torch_gqa_tile(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x16x32xf32>
// CHECK: %[[KR:.+]] = tensor.collapse_shape {{.*}} into tensor<2x4x16x32xf32>
// CHECK: %[[VR:.+]] = tensor.collapse_shape {{.*}} into tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[KR]], %[[VR]] {scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_gqa_tile(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %kx = tensor.expand_shape %k [[0, 1], [2], [3], [4]] output_shape [2, 1, 2, 16, 32] : tensor<2x2x16x32xf32> into tensor<2x1x2x16x32xf32>
  %kb_e = tensor.empty() : tensor<2x2x2x16x32xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kx : tensor<2x1x2x16x32xf32>) outs(%kb_e : tensor<2x2x2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x32xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<2x4x16x32xf32>
  %vx = tensor.expand_shape %v [[0, 1], [2], [3], [4]] output_shape [2, 1, 2, 16, 32] : tensor<2x2x16x32xf32> into tensor<2x1x2x16x32xf32>
  %vb_e = tensor.empty() : tensor<2x2x2x16x32xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vx : tensor<2x1x2x16x32xf32>) outs(%vb_e : tensor<2x2x2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x32xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<2x4x16x32xf32>
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kr : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
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

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %vc = tensor.collapse_shape %vr [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x16x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// A key padding mask [B, 1, 1, Nk] (broadcast over heads and query rows):
// fa's mask operand as it is (a unit query dim broadcasts over the rows).
// CHECK-LABEL: func.func @torch_padding_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[M:[a-z0-9]+]]: tensor<2x1x1x16xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<2x1x1x16xf32>) {scale = 0.176776692 : f32}
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_padding_mask(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x4x16x32xf32> {
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

  %sm_in_e = tensor.empty() : tensor<2x4x16x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %mask : tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) outs(%sm_in_e : tensor<2x4x16x16xf32>) {
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

// GQA with the repeated V collapsed straight into [B*H, N, D] (the two
// collapse_shapes merged, as canonicalization leaves them).
// CHECK-LABEL: func.func @torch_gqa_merged(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 0.176776692 : f32} : tensor<2x4x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @torch_gqa_merged(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %kx = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 32] : tensor<2x2x16x32xf32> into tensor<2x2x1x16x32xf32>
  %kb_e = tensor.empty() : tensor<2x2x2x16x32xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kx : tensor<2x2x1x16x32xf32>) outs(%kb_e : tensor<2x2x2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x32xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<2x4x16x32xf32>
  %vx = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 32] : tensor<2x2x16x32xf32> into tensor<2x2x1x16x32xf32>
  %vb_e = tensor.empty() : tensor<2x2x2x16x32xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vx : tensor<2x2x1x16x32xf32>) outs(%vb_e : tensor<2x2x2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x32xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<2x4x16x32xf32>
  %kt_e = tensor.empty() : tensor<2x4x32x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kr : tensor<2x4x16x32xf32>) outs(%kt_e : tensor<2x4x32x16xf32>) {
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

  %pc = tensor.collapse_shape %sm_p [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %vc = tensor.collapse_shape %vb [[0, 1, 2], [3], [4]] : tensor<2x2x2x16x32xf32> into tensor<8x16x32xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x16x32xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%pv_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// stablehlo-to-linalg: dot_general with batch dims (0, 1) as linalg.generic
// contractions (K^T in the maps), a splat-constant multiply as linalg.map, the
// softmax from stablehlo.reduce (linalg.reduce, no keepdim) and broadcast_in_dim
// (linalg.broadcast); Q arrives [B, N, H, D] and is transposed.
// CHECK-LABEL: func.func @stablehlo_f32(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x16x4x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>)
// CHECK: %[[QT:.+]] = linalg.transpose ins(%[[Q]] : tensor<2x16x4x32xf32>) outs(%{{.+}} : tensor<2x4x16x32xf32>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[QT]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @stablehlo_f32(%q: tensor<2x16x4x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant dense<1.250000e-01> : tensor<2x4x16x16xf32>
  %qt_e = tensor.empty() : tensor<2x4x16x32xf32>
  %qt = linalg.transpose ins(%q : tensor<2x16x4x32xf32>) outs(%qt_e : tensor<2x4x16x32xf32>) permutation = [0, 2, 1, 3]
  %s_e = tensor.empty() : tensor<2x4x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %k : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) outs(%s_f : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x16xf32>
  %ss = linalg.map { arith.mulf } ins(%s, %c : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %r_e = tensor.empty() : tensor<2x4x16xf32>
  %mx_i = linalg.fill ins(%ninf : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%ss : tensor<2x4x16x16xf32>) outs(%mx_i : tensor<2x4x16xf32>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%ss, %mxb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<2x4x16x16xf32>) outs(%sm_i : tensor<2x4x16xf32>) dimensions = [3]
  %smb = linalg.broadcast ins(%sm : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %o_e = tensor.empty() : tensor<2x4x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x32xf32>) outs(%o_f : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// stablehlo-to-linalg, bf16 with preferred_element_type = f32: the contractions
// extend their operands in the body and accumulate in f32; the causal mask is
// compare(iota 0 >= iota 1) (generics over linalg.index, broadcast_in_dim),
// applied with select(-inf); P is converted to bf16 for P V; the f32 result is
// converted back. Raised with f32 output (the convert stays).
// CHECK-LABEL: func.func @stablehlo_bf16_causal(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xbf16>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xbf16>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xbf16>)
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 1.767580e-01 : f32} : tensor<2x4x16x32xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x32xbf16> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<2x4x16x32xbf16>
// CHECK-NEXT: %[[R:.+]] = linalg.map { arith.truncf } ins(%[[O]] : tensor<2x4x16x32xf32>) outs(%[[E]] : tensor<2x4x16x32xbf16>)
// CHECK-NEXT: return %[[R]]
func.func @stablehlo_bf16_causal(%q: tensor<2x4x16x32xbf16>, %k: tensor<2x4x16x32xbf16>, %v: tensor<2x4x16x32xbf16>) -> tensor<2x4x16x32xbf16> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant dense<1.767580e-01> : tensor<2x4x16x16xf32>
  %ninf_t = arith.constant dense<0xFF800000> : tensor<2x4x16x16xf32>
  %s_e = tensor.empty() : tensor<2x4x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x32xbf16>, tensor<2x4x16x32xbf16>) outs(%s_f : tensor<2x4x16x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %0 = arith.mulf %a32, %b32 : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x16xf32>
  %ss = linalg.map { arith.mulf } ins(%s, %c : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %iota_e = tensor.empty() : tensor<16x16xi32>
  %iq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%iota_e : tensor<16x16xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %0 = arith.index_cast %i : index to i32
    linalg.yield %0 : i32
  } -> tensor<16x16xi32>
  %ik = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%iota_e : tensor<16x16xi32>) {
  ^bb0(%out: i32):
    %j = linalg.index 1 : index
    %0 = arith.index_cast %j : index to i32
    linalg.yield %0 : i32
  } -> tensor<16x16xi32>
  %cmp_e = tensor.empty() : tensor<16x16xi1>
  %cmp = linalg.map ins(%iq, %ik : tensor<16x16xi32>, tensor<16x16xi32>) outs(%cmp_e : tensor<16x16xi1>)
    (%a: i32, %b: i32, %init: i1) {
      %0 = arith.cmpi sge, %a, %b : i32
      linalg.yield %0 : i1
    }
  %cmpb_e = tensor.empty() : tensor<2x4x16x16xi1>
  %cmpb = linalg.broadcast ins(%cmp : tensor<16x16xi1>) outs(%cmpb_e : tensor<2x4x16x16xi1>) dimensions = [0, 1]
  %masked = linalg.map ins(%cmpb, %ss, %ninf_t : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
    (%keep: i1, %x: f32, %n: f32, %init: f32) {
      %0 = arith.select %keep, %x, %n : f32
      linalg.yield %0 : f32
    }
  %r_e = tensor.empty() : tensor<2x4x16xf32>
  %mx_i = linalg.fill ins(%ninf : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%masked : tensor<2x4x16x16xf32>) outs(%mx_i : tensor<2x4x16xf32>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%masked, %mxb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<2x4x16x16xf32>) outs(%sm_i : tensor<2x4x16xf32>) dimensions = [3]
  %smb = linalg.broadcast ins(%sm : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %pb_e = tensor.empty() : tensor<2x4x16x16xbf16>
  %pb = linalg.map ins(%p : tensor<2x4x16x16xf32>) outs(%pb_e : tensor<2x4x16x16xbf16>)
    (%x: f32, %init: bf16) {
      %0 = arith.truncf %x : f32 to bf16
      linalg.yield %0 : bf16
    }
  %o_e = tensor.empty() : tensor<2x4x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%pb, %v : tensor<2x4x16x16xbf16>, tensor<2x4x16x32xbf16>) outs(%o_f : tensor<2x4x16x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %0 = arith.mulf %a32, %b32 : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x32xf32>
  %ob_e = tensor.empty() : tensor<2x4x16x32xbf16>
  %ob = linalg.map ins(%o : tensor<2x4x16x32xf32>) outs(%ob_e : tensor<2x4x16x32xbf16>)
    (%x: f32, %init: bf16) {
      %0 = arith.truncf %x : f32 to bf16
      linalg.yield %0 : bf16
    }
  return %ob : tensor<2x4x16x32xbf16>
}

// -----

// 3-D [B*H, N, D] operands with no 4-D form: Q scaled before the contraction
// (q * 0.125), K^T in linalg.batch_matmul's indexing_maps (transpose_b),
// linalg.softmax on the last dim. Raised as [B*H, 1, N, D].
// CHECK-LABEL: func.func @bmm_transpose_b_softmax_op(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<8x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<8x24x32xf32>, %[[V:[a-z0-9]+]]: tensor<8x24x32xf32>)
// CHECK-DAG: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] output_shape [8, 1, 16, 32]
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[\[}}0, 1], [2], [3]] output_shape [8, 1, 24, 32]
// CHECK-DAG: %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1], [2], [3]] output_shape [8, 1, 24, 32]
// CHECK: %[[O:.+]] = fa.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 1.250000e-01 : f32} : tensor<8x1x16x32xf32>, tensor<8x1x24x32xf32>, tensor<8x1x24x32xf32> -> tensor<8x1x16x32xf32>
// CHECK-NEXT: %[[O3:.+]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<8x1x16x32xf32> into tensor<8x16x32xf32>
// CHECK-NEXT: return %[[O3]]
func.func @bmm_transpose_b_softmax_op(%q: tensor<8x16x32xf32>, %k: tensor<8x24x32xf32>, %v: tensor<8x24x32xf32>) -> tensor<8x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c = arith.constant 1.250000e-01 : f32
  %qs_e = tensor.empty() : tensor<8x16x32xf32>
  %qs = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<8x16x32xf32>) outs(%qs_e : tensor<8x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %c : f32
    linalg.yield %0 : f32
  } -> tensor<8x16x32xf32>
  %s_e = tensor.empty() : tensor<8x16x24xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x24xf32>) -> tensor<8x16x24xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%qs, %k : tensor<8x16x32xf32>, tensor<8x24x32xf32>) outs(%s_f : tensor<8x16x24xf32>) -> tensor<8x16x24xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x16x24xf32>) outs(%s_e : tensor<8x16x24xf32>) -> tensor<8x16x24xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x24xf32>, tensor<8x24x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// Dynamic batch and sequence lengths (torch-mlir with dynamic dims): batch and
// heads collapsed around linalg.batch_matmul, K^T in its maps, linalg.softmax.
// CHECK-LABEL: func.func @torch_dynamic(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<?x4x?x32xf32>, %[[K:[a-z0-9]+]]: tensor<?x4x?x32xf32>, %[[V:[a-z0-9]+]]: tensor<?x4x?x32xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f32} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @torch_dynamic(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x32xf32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<?x4x?x32xf32> into tensor<?x?x32xf32>
  %kc = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<?x4x?x32xf32> into tensor<?x?x32xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<?x4x?x32xf32> into tensor<?x?x32xf32>
  %bh = tensor.dim %qc, %c0 : tensor<?x?x32xf32>
  %n = tensor.dim %qc, %c1 : tensor<?x?x32xf32>
  %m = tensor.dim %kc, %c1 : tensor<?x?x32xf32>
  %s_e = tensor.empty(%bh, %n, %m) : tensor<?x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%qc, %kc : tensor<?x?x32xf32>, tensor<?x?x32xf32>) outs(%s_f : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o_e = tensor.empty(%bh, %n) : tensor<?x?x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %o = linalg.batch_matmul ins(%p, %vc : tensor<?x?x?xf32>, tensor<?x?x32xf32>) outs(%o_f : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %n4 = tensor.dim %q, %c2 : tensor<?x4x?x32xf32>
  %oe = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%b, 4, %n4, 32] : tensor<?x?x32xf32> into tensor<?x4x?x32xf32>
  return %oe : tensor<?x4x?x32xf32>
}

// -----

// The next nine cases are [B*H, N, D] batch_matmuls with the score modifications in
// one generic and linalg.softmax.

// A band on both sides of the diagonal (i - 2 <= j <= i + 3): window [2, 3], no causal.
// CHECK-LABEL: func.func @window_right(
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.176776692 : f32, window = array<i64: 2, 3>} : tensor<8x1x16x32xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @window_right(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
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
    %c0 = arith.constant -2 : i64
    %k0 = arith.cmpi sge, %d, %c0 : i64
    %c1 = arith.constant 3 : i64
    %k1 = arith.cmpi sle, %d, %c1 : i64
    %a0 = arith.andi %k0, %k1 : i1
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %a0, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// Only a left edge (j >= i - 4): window [4, -1].
// CHECK-LABEL: func.func @window_lower(
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.176776692 : f32, window = array<i64: 4, -1>} : tensor<8x1x16x32xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @window_lower(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
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
    %c0 = arith.constant -4 : i64
    %k0 = arith.cmpi sge, %d, %c0 : i64
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

// A top-left window (i - 2 <= j <= i) with Nq = 8 < Nk = 16: diagonal(0), causal,
// window [2, 0].
// CHECK-LABEL: func.func @window_topleft(
// CHECK: %[[D:.+]] = arith.constant 0 : index
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} diagonal(%[[D]]) {causal, scale = 0.176776692 : f32, window = array<i64: 2, 0>} : tensor<8x1x8x32xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @window_topleft(%q: tensor<8x8x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x8x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x8x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x8x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x8x16xf32>) outs(%s_e : tensor<8x8x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %c0 = arith.constant -2 : i64
    %k0 = arith.cmpi sge, %d, %c0 : i64
    %c1 = arith.constant 0 : i64
    %k1 = arith.cmpi sle, %d, %c1 : i64
    %a0 = arith.andi %k0, %k1 : i1
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %a0, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x8x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x8x16xf32>) outs(%s_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o_e = tensor.empty() : tensor<8x8x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x8x32xf32>) -> tensor<8x8x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x8x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x8x32xf32>) -> tensor<8x8x32xf32>
  return %o : tensor<8x8x32xf32>
}

// -----

// Gemma 2's cap: scores * scale / 50, tanh, * 50, then causal: softcap = 50 (the
// scale is the product of the factors inside and outside tanh).
// CHECK-LABEL: func.func @softcap_causal(
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 0.176776692 : f32, softcap = 5.000000e+01 : f32}
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @softcap_causal(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
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
    %u = arith.divf %y, %cap : f32
    %th = math.tanh %u : f32
    %c = arith.mulf %th, %cap : f32
    %r = arith.select %le, %c, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// masked_fill(~mask, -inf) with a boolean [Nq, Nk] mask: the i1 mask operand.
// CHECK-LABEL: func.func @bool_select(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<16x16xi1>
// CHECK: %[[M4:.+]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 16]
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M4]] : tensor<1x1x16x16xi1>) {scale = 0.176776692 : f32}
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @bool_select(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>, %mask: tensor<16x16xi1>) -> tensor<8x16x32xf32> {
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
    %ninf = arith.constant 0xFF800000 : f32
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

// masked_fill(mask, -inf): hidden where true, so fa's operand is the negation.
// CHECK-LABEL: func.func @bool_hides(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<16x16xi1>
// CHECK: %[[T:.+]] = arith.constant true
// CHECK: %[[N:.+]] = linalg.generic {{.*}} ins(%[[M]] : tensor<16x16xi1>)
// CHECK: arith.xori %{{.+}}, %[[T]] : i1
// CHECK: %[[M4:.+]] = tensor.expand_shape %[[N]]
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M4]] : tensor<1x1x16x16xi1>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @bool_hides(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>, %mask: tensor<16x16xi1>) -> tensor<8x16x32xf32> {
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
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %m, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// scores + where(mask, 0, -inf): the boolean mask operand as it is.
// CHECK-LABEL: func.func @bool_where(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<16x16xi1>
// CHECK: %[[M4:.+]] = tensor.expand_shape %[[M]]
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M4]] : tensor<1x1x16x16xi1>) {scale = 0.176776692 : f32}
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @bool_where(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>, %mask: tensor<16x16xi1>) -> tensor<8x16x32xf32> {
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
    %ninf = arith.constant 0xFF800000 : f32
    %fz = arith.constant 0.000000e+00 : f32
    %w = arith.select %m, %fz, %ninf : f32
    %r = arith.addf %y, %w : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}

// -----

// tril() on dynamic sizes (j - i <= 0 in index arithmetic): derived for any size,
// causal with diagonal(0) since Nk - Nq is unknown.
// CHECK-LABEL: func.func @dynamic_causal(
// CHECK: %[[D:.+]] = arith.constant 0 : index
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} diagonal(%[[D]]) {causal, scale = 0.176776692 : f32} : tensor<?x1x?x32xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @dynamic_causal(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
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
    %d = arith.subi %j, %i : index
    %c0 = arith.constant 0 : index
    %k0 = arith.cmpi sle, %d, %c0 : index
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

// A window on dynamic sizes (-4 <= j - i <= 0 in i64): diagonal(0), causal, window [4, 0].
// CHECK-LABEL: func.func @dynamic_window(
// CHECK: %[[D:.+]] = arith.constant 0 : index
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} diagonal(%[[D]]) {causal, scale = 0.176776692 : f32, window = array<i64: 4, 0>} : tensor<?x1x?x32xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @dynamic_window(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
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
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %c0 = arith.constant -4 : i64
    %k0 = arith.cmpi sge, %d, %c0 : i64
    %c1 = arith.constant 0 : i64
    %k1 = arith.cmpi sle, %d, %c1 : i64
    %a0 = arith.andi %k0, %k1 : i1
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %a0, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<?x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o_e = tensor.empty(%b, %nq) : tensor<?x?x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x32xf32>) outs(%o_f : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %o : tensor<?x?x32xf32>
}

// -----

// A sliding window, torch style: (j - i <= 0) and (j - i >= -4) in a tril-like
// generic, inverted and made additive: causal with window [4, 0].
// CHECK-LABEL: func.func @mask_window(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 0.176776692 : f32, window = array<i64: 4, 0>} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: return %[[O]]

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @mask_window(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
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
    %cw = arith.constant -4 : i64
    %ge = arith.cmpi sge, %d, %cw : i64
    %band = arith.andi %le, %ge : i1
    %0 = arith.select %band, %in, %false : i1
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

// The scale is a function argument, not a constant: fa's scale 1 and a score_mod
// multiplying the score by it (exact; the kernels' scale folding is lost).
// CHECK-LABEL: func.func @scale_runtime(
// CHECK-SAME: %[[S:[a-z0-9]+]]: f32
// CHECK: fa.attention {{.*}} {scale = 1.000000e+00 : f32} score_mod {
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index):
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT: fa.yield %[[Y]] : f32
// CHECK-NOT: linalg.batch_matmul
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

// masked_fill with -1e9: a finite bias above -1e30 is not taken for -inf (a row
// whose keys are all masked averages them, as written): a score_mod adding
// select(hidden, -1e9, 0) to the score.
// CHECK-LABEL: func.func @mask_finite_small(
// CHECK-DAG: %[[BIG:.+]] = arith.constant -1.000000e+09 : f32
// CHECK: fa.attention {{.*}} {scale = 0.176776692 : f32} score_mod {
// CHECK: %[[B:.+]] = arith.select %{{.+}}, %[[BIG]], %{{.+}} : f32
// CHECK: %[[T:.+]] = arith.addf %{{.+}}, %[[B]] : f32
// CHECK-NEXT: fa.yield %[[T]] : f32
// CHECK-NOT: linalg.batch_matmul
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

// (s + mask) * scale: the mask is scaled too, fa adds its mask operand after the
// scale. A score_mod with scale 1: (s + mask[b, 0, i, j]) * scale.
// CHECK-LABEL: func.func @mask_before_scale(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x1x16x16xf32>
// CHECK: fa.attention {{.*}} {scale = 1.000000e+00 : f32} score_mod {
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[B:.+]]: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[E:.+]] = tensor.extract %[[M]][%[[B]], %{{.+}}, %[[I]], %[[J]]] : tensor<2x1x16x16xf32>
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[X]], %[[E]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[A]], %{{.+}} : f32
// CHECK-NEXT: fa.yield %[[Y]] : f32
// CHECK-NOT: linalg.batch_matmul
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

// j != i: the visible keys of a row are not one interval around the diagonal: a
// mask_mod (the comparison, on the region's positions).
// CHECK-LABEL: func.func @not_band(
// CHECK: fa.attention {{.*}} {scale = 0.176776692 : f32} mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: arith.cmpi ne
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NOT: linalg.batch_matmul
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

// A boolean and an additive mask: fa.attention has one mask operand, the additive
// one; the boolean mask is read in a mask_mod.
// CHECK-LABEL: func.func @bool_and_additive(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<16x16xi1>, %[[A:[a-z0-9]+]]: tensor<16x16xf32>
// CHECK: %[[A4:.+]] = tensor.expand_shape %[[A]]
// CHECK: fa.attention {{.*}} mask(%[[A4]] : tensor<1x1x16x16xf32>) {scale = 0.176776692 : f32} mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[K:.+]] = tensor.extract %[[M]][%[[I]], %[[J]]] : tensor<16x16xi1>
// CHECK-NEXT: fa.yield %[[K]] : i1
// CHECK-NOT: linalg.batch_matmul
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

// The causal -inf inside the cap (tanh of the masked scores; masked keys score
// -50, they are not hidden): fa caps, then masks, so all of it is a score_mod.
// CHECK-LABEL: func.func @mask_inside_cap(
// CHECK: fa.attention {{.*}} {scale = 0.176776692 : f32} score_mod {
// CHECK: arith.select
// CHECK: math.tanh
// CHECK: fa.yield
// CHECK-NOT: linalg.batch_matmul
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

// Positions cast to i32 on dynamic sizes: no band is derived without the sizes
// (the cast wraps past 2^31), so the comparison is a mask_mod, casts included.
// CHECK-LABEL: func.func @dynamic_i32(
// CHECK: fa.attention {{.*}} {scale = 0.176776692 : f32} mask_mod {
// CHECK: arith.index_cast %{{.+}} : index to i32
// CHECK: arith.cmpi sle
// CHECK-NOT: linalg.batch_matmul
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
// The band proof refuses it (bounded work); it becomes a mask_mod, each node
// written once.
// CHECK-LABEL: func.func @condition_dag(
// CHECK: fa.attention {{.*}} {scale = 0.176776692 : f32} mask_mod {
// CHECK-COUNT-59: arith.andi
// CHECK-NOT: arith.andi
// CHECK: fa.yield
// CHECK-NOT: linalg.batch_matmul
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

// -----

// A constant boolean mask tensor (an export's baked-in mask) that is a band
// (i - 1 <= j <= i + 2): read, the band found, no mask operand.
// CHECK-LABEL: func.func @const_window(
// CHECK-NOT: mask(
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.176776692 : f32, window = array<i64: 1, 2>}
// CHECK-NOT: linalg.batch_matmul
func.func @const_window(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %mask = arith.constant dense<[[true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false], [true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false], [false, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false], [false, false, true, true, true, true, false, false, false, false, false, false, false, false, false, false], [false, false, false, true, true, true, true, false, false, false, false, false, false, false, false, false], [false, false, false, false, true, true, true, true, false, false, false, false, false, false, false, false], [false, false, false, false, false, true, true, true, true, false, false, false, false, false, false, false], [false, false, false, false, false, false, true, true, true, true, false, false, false, false, false, false], [false, false, false, false, false, false, false, true, true, true, true, false, false, false, false, false], [false, false, false, false, false, false, false, false, true, true, true, true, false, false, false, false], [false, false, false, false, false, false, false, false, false, true, true, true, true, false, false, false], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, false, false], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, false], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true]]> : tensor<16x16xi1>
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
    %ninf = arith.constant 0xFF800000 : f32
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

// A constant boolean mask that is no band: kept as the mask operand (the expand_shape
// folded into the constant).
// CHECK-LABEL: func.func @const_scattered(
// CHECK: %[[M:.+]] = arith.constant dense<{{.*}}> : tensor<1x1x16x16xi1>
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x16x16xi1>) {scale = 0.176776692 : f32}
func.func @const_scattered(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %mask = arith.constant dense<[[true, false, true, false, true, true, false, true, true, true, false, true, true, false, true, true], [true, true, true, true, false, true, true, false, false, false, true, true, true, false, true, true], [true, false, true, false, true, true, true, true, true, false, true, true, false, true, true, false], [true, false, true, true, true, false, true, true, false, false, false, true, true, true, true, false], [false, true, true, true, true, false, true, true, false, true, true, true, true, false, false, false], [true, true, false, true, false, true, false, true, true, true, true, true, true, true, true, true], [true, true, true, false, true, true, true, true, false, true, true, true, false, true, true, true], [true, false, true, true, true, true, true, true, true, false, false, true, true, true, true, true], [true, true, true, true, false, false, false, false, true, false, true, true, true, true, true, true], [true, false, true, false, true, true, false, true, true, true, true, false, true, true, true, false], [true, false, true, true, true, true, true, false, true, false, true, true, true, true, true, true], [true, true, false, true, false, true, true, false, true, true, false, true, false, true, false, true], [true, false, true, true, true, true, true, true, true, true, false, true, true, false, true, true], [false, true, true, false, true, false, true, true, true, true, true, true, true, true, true, true], [true, false, true, true, true, true, true, true, true, false, false, false, true, false, true, true], [true, true, true, true, true, true, true, true, false, true, true, true, true, true, true, true]]> : tensor<16x16xi1>
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
    %ninf = arith.constant 0xFF800000 : f32
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

// tril(diagonal=len) with len a runtime tensor read by tensor.extract inside the
// generic: a leaf read at no position; the condition j - i <= len becomes a mask_mod
// reading it.
// CHECK-LABEL: func.func @mask_runtime(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<i64>
// CHECK: fa.attention {{.*}} {scale = 0.176776692 : f32} mask_mod {
// CHECK: %[[L:.+]] = tensor.extract %[[LEN]][] : tensor<i64>
// CHECK: arith.cmpi sle, %{{.+}}, %[[L]] : i64
// CHECK-NOT: linalg.batch_matmul
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
