// A band on both sides of the diagonal (i - 2 <= j <= i + 3), [B*H, N, D] batch_matmuls
// and linalg.softmax (decomposed by fa-to-cpu when run as written): raised to
// window [2, 3]; raise-numerics.test runs it raised and as written.
func.func @attn(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
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
