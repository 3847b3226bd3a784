// The README's GPU example: causal grouped-query attention with a
// log-sum-exp result, f16, head dim 128, batch, heads and lengths decided at
// run time. `fa-to-ptx{chip=sm_80}` compiles it to one PTX kernel and
// `fa-dump-kernel{dir=...}` writes the PTX and its launch manifest.
func.func @attention(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>,
                     %v: tensor<?x?x?x128xf16>)
    -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal}
      : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
      -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}
