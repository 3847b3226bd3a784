// torch-mlir-style attention with a key padding mask [B, 1, 1, Nk] added after the scale
// (broadcast over heads and query rows); raise-numerics.test runs it raised and as written.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @attn(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x4x8x16xf32> {
  %kt_e = tensor.empty() : tensor<2x4x16x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x16x16xf32>) outs(%kt_e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x16x16xf32>

  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %qk_zero = arith.constant 0.000000e+00 : f32
  %qk_e = tensor.empty() : tensor<8x8x16xf32>
  %qk_f = linalg.fill ins(%qk_zero : f32) outs(%qk_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<8x8x16xf32>, tensor<8x16x16xf32>) outs(%qk_f : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>

  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  %scale = arith.constant 0.176776695 : f32
  %ss_e = tensor.empty() : tensor<2x4x8x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x8x16xf32>) outs(%ss_e : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8x16xf32>

  %sm_in_e = tensor.empty() : tensor<2x4x8x16xf32>
  %sm_in = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %mask : tensor<2x4x8x16xf32>, tensor<2x1x1x16xf32>) outs(%sm_in_e : tensor<2x4x8x16xf32>) {
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
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x8x16xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x8x16xf32>, tensor<8x16x16xf32>) outs(%pv_f : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}
