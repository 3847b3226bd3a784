// Document masking: a key is visible when its document id equals the row's
// (ids [N] in i64, read at i and at j); [B, H, N, D] generic contractions. Raised
// to a mask_mod reading the ids; raise-numerics.test runs it raised and as
// written.
func.func @attn(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %docs: tensor<16xi64>) -> tensor<2x4x16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf_c = arith.constant 0xFF800000 : f32
  %s_e = tensor.empty() : tensor<2x4x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) outs(%s_f : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %docs, %docs : tensor<2x4x16x16xf32>, tensor<16xi64>, tensor<16xi64>) outs(%s_e : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %di: i64, %dj: i64, %out: f32):
    %scale = arith.constant 0.176776695 : f32
    %y = arith.mulf %x, %scale : f32
    %same = arith.cmpi eq, %di, %dj : i64
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %same, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %r_e = tensor.empty() : tensor<2x4x16xf32>
  %mx_i = linalg.fill ins(%ninf_c : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%t : tensor<2x4x16x16xf32>) outs(%mx_i : tensor<2x4x16xf32>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%t, %mxb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
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
