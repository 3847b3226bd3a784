// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Without -verify-diagnostics the errors make fa-opt fail, not crash.
// RUN: not fa-opt %s -split-input-file > /dev/null 2>&1

// One case per verifier message of fa.attention (AttentionVerifier::verify),
// then unknown attributes, attributes of the wrong kind and the operand/result
// structures only the generic form can express.

// Query rank.
func.func @query_rank(%q: tensor<4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{query must be a rank-4 tensor [B, Hq, Nq, D], got 'tensor<4x16x32xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Key rank.
func.func @key_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{key must be a rank-4 tensor [B, Hkv, Nk, D], got 'tensor<1x1x4x16x32xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Value rank.
func.func @value_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<4x16x32xf16>) {
  // expected-error @+1 {{value must be a rank-4 tensor [B, Hkv, Nk, Dv], got 'tensor<4x16x32xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Out rank.
func.func @out_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{out must be a rank-4 tensor [B, Hq, Nq, Dv], got 'tensor<4x16x32xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<4x16x32xf16>
  return
}

// -----

// Mask rank.
func.func @mask_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<16x16xi1>) {
  // expected-error @+1 {{mask must be a rank-4 tensor [B or 1, Hq or 1, Nq or 1, Nk], got 'tensor<16x16xi1>'}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<16x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Lse rank.
func.func @lse_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{lse must be a rank-3 tensor [B, Hq, Nq], got 'tensor<1x4x16x1xf32>'}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<1x4x16x1xf32>)
  return
}

// -----

// Query element type.
func.func @query_element_type(%q: tensor<1x4x16x32xi8>, %k: tensor<1x4x16x32xi8>, %v: tensor<1x4x16x32xi8>) {
  // expected-error @+1 {{query element type must be f16, bf16, f32 or f8E4M3FN, got 'i8'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xi8>, tensor<1x4x16x32xi8>, tensor<1x4x16x32xi8> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Query element type f64.
func.func @query_element_type_f64(%q: tensor<1x4x16x32xf64>, %k: tensor<1x4x16x32xf64>, %v: tensor<1x4x16x32xf64>) {
  // expected-error @+1 {{query element type must be f16, bf16, f32 or f8E4M3FN, got 'f64'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf64>, tensor<1x4x16x32xf64>, tensor<1x4x16x32xf64> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Key element type.
func.func @key_element_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xbf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{key and value element types must match the query's ('f16'), got 'bf16' and 'f16'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xbf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Value element type.
func.func @value_element_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf32>) {
  // expected-error @+1 {{key and value element types must match the query's ('f16'), got 'f16' and 'f32'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf32> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Out element type.
func.func @out_element_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{out element type must be f16, bf16 or f32, got 'f8E4M3FN'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf8E4M3FN>
  return
}

// -----

// Mask element type.
func.func @mask_element_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi8>) {
  // expected-error @+1 {{mask element type must be i1 (keep where true) or f16, bf16, f32 (added), got 'i8'}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x16x16xi8>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Lse element type.
func.func @lse_element_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{lse element type must be f32, got 'f16'}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<1x4x16xf16>)
  return
}

// -----

// Dynamic D in query.
func.func @dynamic_d_in_query(%q: tensor<1x4x16x?xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head dim D of query and key must be static}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x?xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Dynamic D in key.
func.func @dynamic_d_in_key(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x?xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head dim D of query and key must be static}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x?xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Dynamic Dv.
func.func @dynamic_dv(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x?xf16>) {
  // expected-error @+1 {{head dim Dv of value must be static}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x?xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Key batch.
func.func @key_batch(%q: tensor<1x4x16x32xf16>, %k: tensor<2x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{batch size of key (2) does not match query (1)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Value batch.
func.func @value_batch(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<2x4x16x32xf16>) {
  // expected-error @+1 {{batch size of value (2) does not match query (1)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<2x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Value heads.
func.func @value_heads(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x2x16x32xf16>) {
  // expected-error @+1 {{head count of value (2) does not match key (4)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Value length.
func.func @value_length(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x8x32xf16>) {
  // expected-error @+1 {{sequence length of value (8) does not match key (16)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x8x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Key head dim.
func.func @key_head_dim(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x64xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head dim of key (64) does not match query (32)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Out batch.
func.func @out_batch(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{batch size of out (2) does not match query (1)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<2x4x16x32xf16>
  return
}

// -----

// Out heads.
func.func @out_heads(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head count of out (2) does not match query (4)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x2x16x32xf16>
  return
}

// -----

// Out length.
func.func @out_length(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{sequence length of out (8) does not match query (16)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x8x32xf16>
  return
}

// -----

// Out head dim: Dv, not D.
func.func @out_head_dim(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x64xf16>) {
  // expected-error @+1 {{head dim of out (32) does not match value (64)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x64xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Lse batch.
func.func @lse_batch(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{batch size of lse (2) does not match query (1)}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<2x4x16xf32>)
  return
}

// -----

// Lse heads.
func.func @lse_heads(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head count of lse (2) does not match query (4)}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<1x2x16xf32>)
  return
}

// -----

// Lse length.
func.func @lse_length(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{sequence length of lse (8) does not match query (16)}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<1x4x8xf32>)
  return
}

// -----

// Mask dim 0.
func.func @mask_dim_0(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<3x1x16x16xi1>) {
  // expected-error @+1 {{mask dim 0 (3) must be 1 or the batch size (1)}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<3x1x16x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Mask dim 0 with batch 2.
func.func @mask_dim_0_with_batch_2(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x16x32xf16>, %v: tensor<2x4x16x32xf16>, %m: tensor<3x1x16x16xf32>) {
  // expected-error @+1 {{mask dim 0 (3) must be 1 or the batch size (2)}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<3x1x16x16xf32>) : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16> -> tensor<2x4x16x32xf16>
  return
}

// -----

// Mask dim 1.
func.func @mask_dim_1(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x2x16x16xi1>) {
  // expected-error @+1 {{mask dim 1 (2) must be 1 or the query head count (4)}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x2x16x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Mask dim 2: the query length or 1 (broadcast over the rows), nothing else.
func.func @mask_dim_2(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x3x16xi1>) {
  // expected-error @+1 {{mask dim 2 (3) must be 1 or the query length (16)}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x3x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Mask dim 3: Nk, which differs from Nq here.
func.func @mask_dim_3(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x24x32xf16>, %v: tensor<1x4x24x32xf16>, %m: tensor<1x1x16x16xf16>) {
  // expected-error @+1 {{key length of mask (16) does not match key (24)}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x16x16xf16>) : tensor<1x4x16x32xf16>, tensor<1x4x24x32xf16>, tensor<1x4x24x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Head ratio.
func.func @head_ratio(%q: tensor<1x4x16x32xf16>, %k: tensor<1x3x16x32xf16>, %v: tensor<1x3x16x32xf16>) {
  // expected-error @+1 {{query head count (4) must be a multiple of the key/value head count (3)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x3x16x32xf16>, tensor<1x3x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Zero kv heads.
func.func @zero_kv_heads(%q: tensor<1x4x16x32xf16>, %k: tensor<1x0x16x32xf16>, %v: tensor<1x0x16x32xf16>) {
  // expected-error @+1 {{key/value head count must be positive}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x0x16x32xf16>, tensor<1x0x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Scale inf.
func.func @scale_inf(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{scale must be finite}}
  %o = fa.attention %q, %k, %v {scale = 0x7F800000 : f32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Scale nan.
func.func @scale_nan(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{scale must be finite}}
  %o = fa.attention %q, %k, %v {scale = 0x7FC00000 : f32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Softcap zero.
func.func @softcap_zero(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{softcap must be a finite value > 0, got 0}}
  %o = fa.attention %q, %k, %v {softcap = 0.0 : f32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Softcap negative.
func.func @softcap_negative(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{softcap must be a finite value > 0, got -3}}
  %o = fa.attention %q, %k, %v {softcap = -3.0 : f32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Softcap inf.
func.func @softcap_inf(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{softcap must be a finite value > 0, got INF}}
  %o = fa.attention %q, %k, %v {softcap = 0x7F800000 : f32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Window size.
func.func @window_size(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window must hold two values [left, right], got 1}}
  %o = fa.attention %q, %k, %v {window = array<i64: 8>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Window size 3.
func.func @window_size_3(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window must hold two values [left, right], got 3}}
  %o = fa.attention %q, %k, %v {window = array<i64: 8, 0, 0>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Window left < -1.
func.func @window_left_1(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window bounds must be >= 0, or -1 for unbounded, got -2}}
  %o = fa.attention %q, %k, %v {window = array<i64: -2, 0>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Window right < -1.
func.func @window_right_1(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window bounds must be >= 0, or -1 for unbounded, got -5}}
  %o = fa.attention %q, %k, %v {window = array<i64: 4, -5>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Window right > 0 with causal.
func.func @window_right_0_with_causal(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window right bound must be 0 or -1 with causal (causal sees no key after the diagonal), got 2}}
  %o = fa.attention %q, %k, %v {causal, window = array<i64: 4, 2>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// F8 without descale.
func.func @f8_without_descale(%q: tensor<1x4x16x32xf8E4M3FN>, %k: tensor<1x4x16x32xf8E4M3FN>, %v: tensor<1x4x16x32xf8E4M3FN>) {
  // expected-error @+1 {{f8E4M3FN inputs need the three descale factors descale(%q, %k, %v)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Descale with f16.
func.func @descale_with_f16(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %qd: f32, %kd: f32, %vd: f32) {
  // expected-error @+1 {{descale factors are only allowed with f8E4M3FN inputs, got 'f16'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Unknown attribute.
func.func @unknown_attribute(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{unknown attribute 'foo'}}
  %o = fa.attention %q, %k, %v {foo} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Misspelled causal.
func.func @misspelled_causal(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{unknown attribute 'casual'}}
  %o = fa.attention %q, %k, %v {casual} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Unknown attribute next to known ones.
func.func @unknown_attribute_next_to_known_ones(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{unknown attribute 'window_size'}}
  %o = fa.attention %q, %k, %v {causal, scale = 1.0 : f32, window_size = 3 : i64} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind: scale is an f32 attribute.
func.func @scale_i32(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %o = fa.attention %q, %k, %v {scale = 2 : i32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind: scale is f32, not f64.
func.func @scale_f64(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %o = fa.attention %q, %k, %v {scale = 0.5 : f64} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind: softcap is an f32 attribute.
func.func @softcap_string(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{attribute 'softcap' failed to satisfy constraint: 32-bit float attribute}}
  %o = fa.attention %q, %k, %v {softcap = "30"} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind: window is array<i64: ...>, not an array attribute.
func.func @window_array_attr(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint: i64 dense array attribute}}
  %o = fa.attention %q, %k, %v {window = [1, 2]} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind: window elements are i64.
func.func @window_i32(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint: i64 dense array attribute}}
  %o = fa.attention %q, %k, %v {window = array<i32: 1, 2>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind: causal is a unit attribute.
func.func @causal_integer(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{attribute 'causal' failed to satisfy constraint: unit attribute}}
  %o = fa.attention %q, %k, %v {causal = 3} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Wrong attribute kind, generic form: properties that do not convert.
func.func @generic_causal_integer(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{Invalid attribute `causal` in property conversion: 3 : i64}}
  %o = "fa.attention"(%q, %q, %q) <{causal = 3, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Unknown attribute, generic form (a discardable attribute without a dialect prefix).
func.func @generic_unknown_attribute(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{unknown attribute 'bogus'}}
  %o = "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> {bogus = 1 : i64} : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Partial descale on fp8 inputs (generic form): q and k descale without v.
func.func @generic_partial_descale_f8(%q: tensor<1x4x16x32xf8E4M3FN>, %d: f32) {
  // expected-error @+1 {{f8E4M3FN inputs need the three descale factors descale(%q, %k, %v)}}
  %o = "fa.attention"(%q, %q, %q, %d, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, f32, f32) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Partial descale on fp8 inputs (generic form): v descale only.
func.func @generic_v_descale_only_f8(%q: tensor<1x4x16x32xf8E4M3FN>, %d: f32) {
  // expected-error @+1 {{f8E4M3FN inputs need the three descale factors descale(%q, %k, %v)}}
  %o = "fa.attention"(%q, %q, %q, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, f32) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Partial descale on f16 inputs (generic form).
func.func @generic_partial_descale_f16(%q: tensor<1x4x16x32xf16>, %d: f32) {
  // expected-error @+1 {{descale factors are only allowed with f8E4M3FN inputs, got 'f16'}}
  %o = "fa.attention"(%q, %q, %q, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, f32) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Descale factors are f32.
func.func @generic_descale_f16(%q: tensor<1x4x16x32xf8E4M3FN>, %d: f16) {
  // expected-error @+1 {{q_descale must be an f32 scalar or a ranked tensor of f32, got 'f16'}}
  %o = "fa.attention"(%q, %q, %q, %d, %d, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, f16, f16, f16) -> tensor<1x4x16x32xf16>
  return
}

// -----

// The mask is a ranked tensor.
func.func @generic_mask_memref(%q: tensor<1x4x16x32xf16>, %m: memref<1x1x16x16xi1>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of any type values, but got 'memref<1x1x16x16xi1>'}}
  %o = "fa.attention"(%q, %q, %q, %m) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, memref<1x1x16x16xi1>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Operands are ranked tensors.
func.func @generic_unranked_query(%q: tensor<*xf16>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of any type values, but got 'tensor<*xf16>'}}
  %o = "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<*xf16>, tensor<*xf16>, tensor<*xf16>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Segment sizes that do not add up to the operand count.
func.func @generic_segment_sizes_mismatch(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{operand count (3) does not match with the total size (4) specified in attribute 'operandSegmentSizes'}}
  %o = "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Segment sizes of the wrong length.
func.func @generic_segment_sizes_length(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{size mismatch in attribute conversion: 6 vs 12}}
  %o = "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Segment sizes missing.
func.func @generic_segment_sizes_missing(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{operand count (3) does not match with the total size (0) specified in attribute 'operandSegmentSizes'}}
  %o = "fa.attention"(%q, %q, %q) : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> tensor<1x4x16x32xf16>
  return
}

// -----

// Segment sizes in the custom form's attribute dictionary override the parsed operands.
func.func @custom_segment_sizes(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{operand count (3) does not match with the total size (7) specified in attribute 'operandSegmentSizes'}}
  %o = fa.attention %q, %k, %v {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// No result.
func.func @generic_no_result(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{expected 1 or more results}}
  "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> ()
  return
}

// -----

// Three results.
func.func @generic_three_results(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{result group starting at #1 requires 0 or 1 element, but found 2}}
  %o:3 = "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>) -> (tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
  return
}

// -----

// The out result is a ranked tensor.
func.func @out_not_tensor(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{result #0 must be ranked tensor of any type values, but got 'f32'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> f32
  return
}

// -----

// The lse result is a ranked tensor.
func.func @lse_not_tensor(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{result #1 must be ranked tensor of any type values, but got 'f32'}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, f32)
  return
}
