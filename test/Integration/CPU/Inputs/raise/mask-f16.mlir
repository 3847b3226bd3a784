// torch-mlir-style attention, f16 matmuls, the softmax in f32, an additive f16 mask
// [1, 1, Nq, Nk]; raise-numerics.test runs it raised and as written.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @attn(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %mask: tensor<1x1x8x8xf16>) -> tensor<1x2x8x16xf16> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf16>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf16>) outs(%kt_e : tensor<1x2x16x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<1x2x16x8xf16>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf16> into tensor<2x8x16xf16>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf16> into tensor<2x16x8xf16>
  %qk_zero = arith.constant 0.000000e+00 : f16
  %qk_e = tensor.empty() : tensor<2x8x8xf16>
  %qk_f = linalg.fill ins(%qk_zero : f16) outs(%qk_e : tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<2x8x16xf16>, tensor<2x16x8xf16>) outs(%qk_f : tensor<2x8x8xf16>) -> tensor<2x8x8xf16>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf16> into tensor<1x2x8x8xf16>
  %scale = arith.constant 0.176776695 : f16
  %ss_e = tensor.empty() : tensor<1x2x8x8xf16>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x8x8xf16>) outs(%ss_e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.mulf %in, %scale : f16
    linalg.yield %0 : f16
  } -> tensor<1x2x8x8xf16>

  %sm_in_e = tensor.empty() : tensor<1x2x8x8xf16>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %mask : tensor<1x2x8x8xf16>, tensor<1x1x8x8xf16>) outs(%sm_in_e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %0 = arith.addf %in, %in_0 : f16
    linalg.yield %0 : f16
  } -> tensor<1x2x8x8xf16>

  %sx_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_in : tensor<1x2x8x8xf16>) outs(%sx_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x8xf32>

  %sm_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sm_r = tensor.empty() : tensor<1x2x8x1xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %sm_zero = arith.constant 0.000000e+00 : f32
  %sm_mi = linalg.fill ins(%sm_ninf : f32) outs(%sm_r : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %sm_max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sx : tensor<1x2x8x8xf32>) outs(%sm_mi : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x1xf32>
  %sm_sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sx, %sm_max : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%sm_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.subf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x8xf32>
  %sm_exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_sub : tensor<1x2x8x8xf32>) outs(%sm_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x8xf32>
  %sm_si = linalg.fill ins(%sm_zero : f32) outs(%sm_r : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %sm_sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm_exp : tensor<1x2x8x8xf32>) outs(%sm_si : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x1xf32>
  %sm_p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_exp, %sm_sum : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%sm_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.divf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x8x8xf32>

  %pt_e = tensor.empty() : tensor<1x2x8x8xf16>
  %pt = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm_p : tensor<1x2x8x8xf32>) outs(%pt_e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<1x2x8x8xf16>

  %pc = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<1x2x8x8xf16> into tensor<2x8x8xf16>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf16> into tensor<2x8x16xf16>
  %pv_zero = arith.constant 0.000000e+00 : f16
  %pv_e = tensor.empty() : tensor<2x8x16xf16>
  %pv_f = linalg.fill ins(%pv_zero : f16) outs(%pv_e : tensor<2x8x16xf16>) -> tensor<2x8x16xf16>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<2x8x8xf16>, tensor<2x8x16xf16>) outs(%pv_f : tensor<2x8x16xf16>) -> tensor<2x8x16xf16>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf16> into tensor<1x2x8x16xf16>
  return %o : tensor<1x2x8x16xf16>
}
