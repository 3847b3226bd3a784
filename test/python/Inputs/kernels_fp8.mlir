// The fp8 kernel whose manifest test/python/fa-runtime.test hands to the Python
// runtime (sm_90a only).
func.func @attn_fp8_d128_causal_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}
