// ALiBi and causal in linalg with f16 matmuls that accumulate in f16 (torch-mlir's f16
// aten.matmul), the bias in f32, the softmax in f16; Nq = Nk = 128, D = 64.
// raise-numerics.test compares it raised, and as written, with its f32 twin
// (alibi-f16-as-f32.mlir) on the same values.


func.func @attn(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>, %v: tensor<1x4x128x64xf16>, %slopes: tensor<4xf32>) -> tensor<1x4x128x64xf16> {
  %zero = arith.constant 0.000000e+00 : f16
  %ninf_c = arith.constant 0xFC00 : f16
  %s_e = tensor.empty() : tensor<1x4x128x128xf16>
  %s_f = linalg.fill ins(%zero : f16) outs(%s_e : tensor<1x4x128x128xf16>) -> tensor<1x4x128x128xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) outs(%s_f : tensor<1x4x128x128xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %acc, %0 : f16
    linalg.yield %1 : f16
  } -> tensor<1x4x128x128xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %slopes : tensor<1x4x128x128xf16>, tensor<4xf32>) outs(%s_e : tensor<1x4x128x128xf16>) {
  ^bb0(%x: f16, %slope: f32, %out: f16):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %x32 = arith.extf %x : f16 to f32
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
    %r16 = arith.truncf %r : f32 to f16
    linalg.yield %r16 : f16
  } -> tensor<1x4x128x128xf16>
  %r_e = tensor.empty() : tensor<1x4x128xf16>
  %mx_i = linalg.fill ins(%ninf_c : f16) outs(%r_e : tensor<1x4x128xf16>) -> tensor<1x4x128xf16>
  %mx = linalg.reduce { arith.maximumf } ins(%t : tensor<1x4x128x128xf16>) outs(%mx_i : tensor<1x4x128xf16>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<1x4x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%t, %mxb : tensor<1x4x128x128xf16>, tensor<1x4x128x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<1x4x128x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>)
  %sm_i = linalg.fill ins(%zero : f16) outs(%r_e : tensor<1x4x128xf16>) -> tensor<1x4x128xf16>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<1x4x128x128xf16>) outs(%sm_i : tensor<1x4x128xf16>) dimensions = [3]
  %smb = linalg.broadcast ins(%sm : tensor<1x4x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>) dimensions = [3]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<1x4x128x128xf16>, tensor<1x4x128x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>)
  %o_e = tensor.empty() : tensor<1x4x128x64xf16>
  %o_f = linalg.fill ins(%zero : f16) outs(%o_e : tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x4x128x128xf16>, tensor<1x4x128x64xf16>) outs(%o_f : tensor<1x4x128x64xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %acc, %0 : f16
    linalg.yield %1 : f16
  } -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}
