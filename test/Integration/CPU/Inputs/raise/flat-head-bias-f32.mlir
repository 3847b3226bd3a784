// A per-(batch, head) bias slope hb[b * H + h] * (j - i) on [B*H, N, N] scores whose Q, K, V
// arrive [B, H, N, D] and are collapsed (torch-mlir's aten.matmul): raised to fa's [B, H, ...]
// layout with a score_mod that reads hb at b * 4 + h; raise-numerics.test runs it raised and
// as written.
func.func @attn(%q4: tensor<2x4x16x32xf32>, %k4: tensor<2x4x16x32xf32>, %v4: tensor<2x4x16x32xf32>, %hb: tensor<8xf32>) -> tensor<8x16x32xf32> {
  %q = tensor.collapse_shape %q4 [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %k = tensor.collapse_shape %k4 [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %v = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %kt_e = tensor.empty() : tensor<8x32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x32xf32>) outs(%kt_e : tensor<8x32x16xf32>) permutation = [0, 2, 1]
  %s_e = tensor.empty() : tensor<8x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%s_f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %hb : tensor<8x16x16xf32>, tensor<8xf32>) outs(%s_e : tensor<8x16x16xf32>) {
  ^bb0(%x: f32, %bias: f32, %out: f32):
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %jj, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %b = arith.mulf %bias, %df : f32
    %r = arith.addf %y, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%t : tensor<8x16x16xf32>) outs(%s_e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %o_e = tensor.empty() : tensor<8x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}
