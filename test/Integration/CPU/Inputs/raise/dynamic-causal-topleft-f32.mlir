// tril() causal (j <= i, index arithmetic) on dynamic [B*H, N, D] tensors (@attn_dynamic),
// called by @attn with Nq = 16 < Nk = 24: raised to causal with diagonal(0) without
// knowing the sizes; raise-numerics.test runs it raised and as written.
func.func @attn_dynamic(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
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
  %ninf_c = arith.constant 0xFF800000 : f32
  %r_e = tensor.empty(%b, %nq) : tensor<?x?xf32>
  %mx_i = linalg.fill ins(%ninf_c : f32) outs(%r_e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%t : tensor<?x?x?xf32>) outs(%mx_i : tensor<?x?xf32>) dimensions = [2]
  %mxb = linalg.broadcast ins(%mx : tensor<?x?xf32>) outs(%s_e : tensor<?x?x?xf32>) dimensions = [2]
  %sub = linalg.map { arith.subf } ins(%t, %mxb : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>)
  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<?x?x?xf32>) outs(%sm_i : tensor<?x?xf32>) dimensions = [2]
  %smb = linalg.broadcast ins(%sm : tensor<?x?xf32>) outs(%s_e : tensor<?x?x?xf32>) dimensions = [2]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%s_e : tensor<?x?x?xf32>)
  %o_e = tensor.empty(%b, %nq) : tensor<?x?x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x32xf32>) outs(%o_f : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %o : tensor<?x?x32xf32>
}

func.func @attn(%q: tensor<8x16x32xf32>, %k: tensor<8x24x32xf32>, %v: tensor<8x24x32xf32>) -> tensor<8x16x32xf32> {
  %qd = tensor.cast %q : tensor<8x16x32xf32> to tensor<?x?x32xf32>
  %kd = tensor.cast %k : tensor<8x24x32xf32> to tensor<?x?x32xf32>
  %vd = tensor.cast %v : tensor<8x24x32xf32> to tensor<?x?x32xf32>
  %od = call @attn_dynamic(%qd, %kd, %vd) : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %o = tensor.cast %od : tensor<?x?x32xf32> to tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}
