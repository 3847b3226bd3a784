// Causal with a runtime diagonal offset (chunked prefill: j - i <= offset, the offset a
// tensor<i64> read by tensor.extract inside the generic), Nq = 8 < Nk = 16: raised to a
// mask_mod that reads the offset; raise-numerics.test runs it raised and as written.
func.func @attn(%q: tensor<8x8x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>, %offset: tensor<i64>) -> tensor<8x8x32xf32> {
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
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %jj, %ii : i64
    %len = tensor.extract %offset[] : tensor<i64>
    %keep = arith.cmpi sle, %d, %len : i64
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x8x16xf32>
  %ninf_c = arith.constant 0xFF800000 : f32
  %r_e = tensor.empty() : tensor<8x8xf32>
  %mx_i = linalg.fill ins(%ninf_c : f32) outs(%r_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%t : tensor<8x8x16xf32>) outs(%mx_i : tensor<8x8xf32>) dimensions = [2]
  %mxb = linalg.broadcast ins(%mx : tensor<8x8xf32>) outs(%s_e : tensor<8x8x16xf32>) dimensions = [2]
  %sub = linalg.map { arith.subf } ins(%t, %mxb : tensor<8x8x16xf32>, tensor<8x8x16xf32>) outs(%s_e : tensor<8x8x16xf32>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<8x8x16xf32>) outs(%s_e : tensor<8x8x16xf32>)
  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<8x8x16xf32>) outs(%sm_i : tensor<8x8xf32>) dimensions = [2]
  %smb = linalg.broadcast ins(%sm : tensor<8x8xf32>) outs(%s_e : tensor<8x8x16xf32>) dimensions = [2]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<8x8x16xf32>, tensor<8x8x16xf32>) outs(%s_e : tensor<8x8x16xf32>)
  %o_e = tensor.empty() : tensor<8x8x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<8x8x32xf32>) -> tensor<8x8x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x8x16xf32>, tensor<8x16x32xf32>) outs(%o_f : tensor<8x8x32xf32>) -> tensor<8x8x32xf32>
  return %o : tensor<8x8x32xf32>
}
