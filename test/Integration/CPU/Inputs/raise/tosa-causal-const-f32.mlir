// Attention in TOSA with its causal mask a constant [1, Nq, Nk] tensor of 0 and -inf (what an
// export with static shapes carries): after tosa-to-linalg the raise reads the constant,
// finds the band and drops the tensor (causal, no mask operand); raise-numerics.test runs
// it raised and as written.
func.func @attn(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %mask = "tosa.const"() <{values = dense<[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x16x16xf32>}> : () -> tensor<1x16x16xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x16x32xf32>) -> tensor<8x32x16xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x16x32xf32>, tensor<8x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x16xf32>
  %c = "tosa.const"() <{values = dense<0.176776695> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<8x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<8x16x16xf32>
  %sm_in = tosa.add %ss, %mask : (tensor<8x16x16xf32>, tensor<1x16x16xf32>) -> tensor<8x16x16xf32>
  %mx = tosa.reduce_max %sm_in {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %sub = tosa.sub %sm_in, %mx : (tensor<8x16x16xf32>, tensor<8x16x1xf32>) -> tensor<8x16x16xf32>
  %ex = tosa.exp %sub : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %sm = tosa.reduce_sum %ex {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %rc = tosa.reciprocal %sm : (tensor<8x16x1xf32>) -> tensor<8x16x1xf32>
  %p = tosa.mul %ex, %rc, %shift : (tensor<8x16x16xf32>, tensor<8x16x1xf32>, tensor<1xi8>) -> tensor<8x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x16x16xf32>, tensor<8x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x32xf32>
  return %o : tensor<8x16x32xf32>
}
