// torch-mlir-style attention (GQA 4 / 2 heads, tril() causal mask with Nq = 8 < Nk = 16,
// top-left aligned: diagonal(0)); raise-numerics.test runs it raised and as written.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @attn(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x16x16xf32>, %v: tensor<2x2x16x16xf32>) -> tensor<2x4x8x16xf32> {
  %kx = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 16] : tensor<2x2x16x16xf32> into tensor<2x2x1x16x16xf32>
  %kb_e = tensor.empty() : tensor<2x2x2x16x16xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kx : tensor<2x2x1x16x16xf32>) outs(%kb_e : tensor<2x2x2x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x16xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x16xf32> into tensor<2x4x16x16xf32>
  %vx = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 16] : tensor<2x2x16x16xf32> into tensor<2x2x1x16x16xf32>
  %vb_e = tensor.empty() : tensor<2x2x2x16x16xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vx : tensor<2x2x1x16x16xf32>) outs(%vb_e : tensor<2x2x2x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x16xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x16xf32> into tensor<2x4x16x16xf32>
  %kt_e = tensor.empty() : tensor<2x4x16x16xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kr : tensor<2x4x16x16xf32>) outs(%kt_e : tensor<2x4x16x16xf32>) {
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
  %vc = tensor.collapse_shape %vr [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %pv_zero = arith.constant 0.000000e+00 : f32
  %pv_e = tensor.empty() : tensor<8x8x16xf32>
  %pv_f = linalg.fill ins(%pv_zero : f32) outs(%pv_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<8x8x16xf32>, tensor<8x16x16xf32>) outs(%pv_f : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>

  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}
