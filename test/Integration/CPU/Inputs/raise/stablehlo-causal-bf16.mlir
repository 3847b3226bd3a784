// stablehlo-to-linalg-style attention, bf16 inputs with f32 accumulation (extf in the
// dot_general bodies), an iota/compare/select causal mask, linalg.map/reduce/broadcast;
// raise-numerics.test runs it raised and as written.
func.func @attn(%q: tensor<2x4x16x32xbf16>, %k: tensor<2x4x16x32xbf16>, %v: tensor<2x4x16x32xbf16>) -> tensor<2x4x16x32xbf16> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant dense<1.767580e-01> : tensor<2x4x16x16xf32>
  %ninf_t = arith.constant dense<0xFF800000> : tensor<2x4x16x16xf32>
  %s_e = tensor.empty() : tensor<2x4x16x16xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x32xbf16>, tensor<2x4x16x32xbf16>) outs(%s_f : tensor<2x4x16x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %0 = arith.mulf %a32, %b32 : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x16xf32>
  %ss = linalg.map { arith.mulf } ins(%s, %c : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %iota_e = tensor.empty() : tensor<16x16xi32>
  %iq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%iota_e : tensor<16x16xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %0 = arith.index_cast %i : index to i32
    linalg.yield %0 : i32
  } -> tensor<16x16xi32>
  %ik = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%iota_e : tensor<16x16xi32>) {
  ^bb0(%out: i32):
    %j = linalg.index 1 : index
    %0 = arith.index_cast %j : index to i32
    linalg.yield %0 : i32
  } -> tensor<16x16xi32>
  %cmp_e = tensor.empty() : tensor<16x16xi1>
  %cmp = linalg.map ins(%iq, %ik : tensor<16x16xi32>, tensor<16x16xi32>) outs(%cmp_e : tensor<16x16xi1>)
    (%a: i32, %b: i32, %init: i1) {
      %0 = arith.cmpi sge, %a, %b : i32
      linalg.yield %0 : i1
    }
  %cmpb_e = tensor.empty() : tensor<2x4x16x16xi1>
  %cmpb = linalg.broadcast ins(%cmp : tensor<16x16xi1>) outs(%cmpb_e : tensor<2x4x16x16xi1>) dimensions = [0, 1]
  %masked = linalg.map ins(%cmpb, %ss, %ninf_t : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
    (%keep: i1, %x: f32, %n: f32, %init: f32) {
      %0 = arith.select %keep, %x, %n : f32
      linalg.yield %0 : f32
    }
  %r_e = tensor.empty() : tensor<2x4x16xf32>
  %mx_i = linalg.fill ins(%ninf : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%masked : tensor<2x4x16x16xf32>) outs(%mx_i : tensor<2x4x16xf32>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%masked, %mxb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<2x4x16x16xf32>) outs(%sm_i : tensor<2x4x16xf32>) dimensions = [3]
  %smb = linalg.broadcast ins(%sm : tensor<2x4x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>) dimensions = [3]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%s_e : tensor<2x4x16x16xf32>)
  %pb_e = tensor.empty() : tensor<2x4x16x16xbf16>
  %pb = linalg.map ins(%p : tensor<2x4x16x16xf32>) outs(%pb_e : tensor<2x4x16x16xbf16>)
    (%x: f32, %init: bf16) {
      %0 = arith.truncf %x : f32 to bf16
      linalg.yield %0 : bf16
    }
  %o_e = tensor.empty() : tensor<2x4x16x32xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%pb, %v : tensor<2x4x16x16xbf16>, tensor<2x4x16x32xbf16>) outs(%o_f : tensor<2x4x16x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %0 = arith.mulf %a32, %b32 : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x16x32xf32>
  %ob_e = tensor.empty() : tensor<2x4x16x32xbf16>
  %ob = linalg.map ins(%o : tensor<2x4x16x32xf32>) outs(%ob_e : tensor<2x4x16x32xbf16>)
    (%x: f32, %init: bf16) {
      %0 = arith.truncf %x : f32 to bf16
      linalg.yield %0 : bf16
    }
  return %ob : tensor<2x4x16x32xbf16>
}
