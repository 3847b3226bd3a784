// alibi-f16.mlir with every type f32 (the reference of raise-numerics.test's f16 case).


func.func @attn(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x128x64xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf_c = arith.constant 0xFF800000 : f32
  %s_e = tensor.empty() : tensor<1x4x128x128xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<1x4x128x128xf32>) -> tensor<1x4x128x128xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>) outs(%s_f : tensor<1x4x128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x128x128xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %slopes : tensor<1x4x128x128xf32>, tensor<4xf32>) outs(%s_e : tensor<1x4x128x128xf32>) {
  ^bb0(%x: f32, %slope: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %zf = arith.constant 0.0 : f32
    %x32 = arith.addf %x, %zf : f32
    %scale = arith.constant 1.250000e-01 : f32
    %y = arith.mulf %x32, %scale : f32
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %jj, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %z = arith.addf %y, %bias : f32
    %keep = arith.cmpi sle, %jj, %ii : i64
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %z, %ninf : f32
    %r16 = arith.addf %r, %zf : f32
    linalg.yield %r16 : f32
  } -> tensor<1x4x128x128xf32>
  %r_e = tensor.empty() : tensor<1x4x128xf32>
  %mx_i = linalg.fill ins(%ninf_c : f32) outs(%r_e : tensor<1x4x128xf32>) -> tensor<1x4x128xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%t : tensor<1x4x128x128xf32>) outs(%mx_i : tensor<1x4x128xf32>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<1x4x128xf32>) outs(%s_e : tensor<1x4x128x128xf32>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%t, %mxb : tensor<1x4x128x128xf32>, tensor<1x4x128x128xf32>) outs(%s_e : tensor<1x4x128x128xf32>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<1x4x128x128xf32>) outs(%s_e : tensor<1x4x128x128xf32>)
  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : tensor<1x4x128xf32>) -> tensor<1x4x128xf32>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<1x4x128x128xf32>) outs(%sm_i : tensor<1x4x128xf32>) dimensions = [3]
  %smb = linalg.broadcast ins(%sm : tensor<1x4x128xf32>) outs(%s_e : tensor<1x4x128x128xf32>) dimensions = [3]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<1x4x128x128xf32>, tensor<1x4x128x128xf32>) outs(%s_e : tensor<1x4x128x128xf32>)
  %o_e = tensor.empty() : tensor<1x4x128x64xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x4x128x128xf32>, tensor<1x4x128x64xf32>) outs(%o_f : tensor<1x4x128x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}
