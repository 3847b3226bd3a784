// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Without -verify-diagnostics the errors make fa-opt fail, not crash.
// RUN: not fa-opt %s -split-input-file > /dev/null 2>&1

// One case per verifier message of fa.attention_grad (AttentionGradVerifier::verify),
// then the generic form with a wrong number of operands.

// A misspelled attribute is an error, not ignored.
func.func @unknown_attr(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{unknown attribute 'casual'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {casual} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Query rank.
func.func @query_rank(%q: tensor<4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{query must be a rank-4 tensor [B, Hq, Nq, D], got 'tensor<4x16x32xf16>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Key rank.
func.func @key_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{key must be a rank-4 tensor [B, Hkv, Nk, D], got 'tensor<2x16x32xf16>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Value rank.
func.func @value_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{value must be a rank-4 tensor [B, Hkv, Nk, Dv], got 'tensor<2x16x32xf16>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<2x16x32xf16>
  return
}

// -----

// Out rank.
func.func @out_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{out must be a rank-4 tensor [B, Hq, Nq, Dv], got 'tensor<4x16x32xf16>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// lse rank.
func.func @lse_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16x1xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{lse must be a rank-3 tensor [B, Hq, Nq], got 'tensor<1x4x16x1xf32>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x1xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// grad_out rank.
func.func @grad_out_rank(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<4x16x32xf16>) {
  // expected-error @+1 {{grad_out must be a rank-4 tensor [B, Hq, Nq, Dv], got 'tensor<4x16x32xf16>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// FP8 has no backward: the element types are f16, bf16, f32.
func.func @fp8_query(%q: tensor<1x4x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>, %v: tensor<1x2x16x32xf8E4M3FN>, %o: tensor<1x4x16x32xf8E4M3FN>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf8E4M3FN>) {
  // expected-error @+1 {{query element type must be f16, bf16 or f32, got 'f8E4M3FN'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16xf32>, tensor<1x4x16x32xf8E4M3FN> -> tensor<1x4x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
  return
}

// -----

// Key element type.
func.func @key_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xbf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{key element type must match the query's ('f16'), got 'bf16'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Value element type.
func.func @value_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf32>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{value element type must match the query's ('f16'), got 'f32'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf32>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf32>
  return
}

// -----

// Out element type (the forward's out in another type must be cast first).
func.func @out_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf32>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{out element type must match the query's ('f16'), got 'f32'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf32>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// grad_out element type.
func.func @grad_out_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xbf16>) {
  // expected-error @+1 {{grad_out element type must match the query's ('f16'), got 'bf16'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xbf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// lse element type.
func.func @lse_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf16>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{lse element type must be f32, got 'f16'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Dynamic head dim D.
func.func @dynamic_head_dim(%q: tensor<1x4x16x?xf16>, %k: tensor<1x2x16x?xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head dim D of query and key must be static}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x?xf16>, tensor<1x2x16x?xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x?xf16>, tensor<1x2x16x?xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Dynamic head dim Dv.
func.func @dynamic_head_dim_v(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x?xf16>, %o: tensor<1x4x16x?xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x?xf16>) {
  // expected-error @+1 {{head dim Dv of value must be static}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x?xf16>, tensor<1x4x16x?xf16>, tensor<1x4x16xf32>, tensor<1x4x16x?xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x?xf16>
  return
}

// -----

// Key batch size.
func.func @key_batch(%q: tensor<1x4x16x32xf16>, %k: tensor<2x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{batch size of key (2) does not match query (1)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<2x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<2x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Key head dim.
func.func @key_head_dim(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x16xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head dim of key (16) does not match query (32)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x16xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x16xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Value head count.
func.func @value_heads(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x4x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head count of value (4) does not match key (2)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

// Value sequence length.
func.func @value_length(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x8x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{sequence length of value (8) does not match key (16)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x8x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x8x32xf16>
  return
}

// -----

// Out sequence length.
func.func @out_length(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x8x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{sequence length of out (8) does not match query (16)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x8x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Out head dim is value's.
func.func @out_head_dim(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x16xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{head dim of out (16) does not match value (32)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x16xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// grad_out head count.
func.func @grad_out_heads(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x2x16x32xf16>) {
  // expected-error @+1 {{head count of grad_out (2) does not match query (4)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x2x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// lse sequence length.
func.func @lse_length(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x8xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{sequence length of lse (8) does not match query (16)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x8xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// lse batch size.
func.func @lse_batch(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<2x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{batch size of lse (2) does not match query (1)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<2x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// No key/value heads.
func.func @zero_kv_heads(%q: tensor<1x0x16x32xf16>, %k: tensor<1x0x16x32xf16>, %v: tensor<1x0x16x32xf16>, %o: tensor<1x0x16x32xf16>, %l: tensor<1x0x16xf32>, %do: tensor<1x0x16x32xf16>) {
  // expected-error @+1 {{key/value head count must be positive}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x0x16x32xf16>, tensor<1x0x16x32xf16>, tensor<1x0x16x32xf16>, tensor<1x0x16x32xf16>, tensor<1x0x16xf32>, tensor<1x0x16x32xf16> -> tensor<1x0x16x32xf16>, tensor<1x0x16x32xf16>, tensor<1x0x16x32xf16>
  return
}

// -----

// Hq not a multiple of Hkv.
func.func @gqa_ratio(%q: tensor<1x4x16x32xf16>, %k: tensor<1x3x16x32xf16>, %v: tensor<1x3x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{query head count (4) must be a multiple of the key/value head count (3)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x3x16x32xf16>, tensor<1x3x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x3x16x32xf16>, tensor<1x3x16x32xf16>
  return
}

// -----

// dq must have q's type.
func.func @grad_query_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{grad_query type 'tensor<1x4x16x32xf32>' must be the type of query ('tensor<1x4x16x32xf16>')}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf32>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// dk must have k's type.
func.func @grad_key_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{grad_key type 'tensor<1x2x8x32xf16>' must be the type of key ('tensor<1x2x16x32xf16>')}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x8x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// dv must have v's type (dynamic is not the same type).
func.func @grad_value_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{grad_value type 'tensor<1x2x?x32xf16>' must be the type of value ('tensor<1x2x16x32xf16>')}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x?x32xf16>
  return
}

// -----

// Scale must be finite.
func.func @scale_inf(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{scale must be finite}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {scale = 0x7F800000 : f32} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Softcap must be > 0.
func.func @softcap_zero(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{softcap must be a finite value > 0, got 0.000000e+00}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {softcap = 0.0 : f32} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Window with three values.
func.func @window_size(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window must hold two values [left, right], got 3}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {window = array<i64: 1, 2, 3>} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Window bound below -1.
func.func @window_bound(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window bounds must be >= 0, or -1 for unbounded, got -2}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {window = array<i64: -2, 0>} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Causal with a right bound.
func.func @window_causal(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{window right bound must be 0 or -1 with causal (causal sees no key after the diagonal), got 3}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal, window = array<i64: 4, 3>} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

// Five operands: the generic form reaches the op's own operand count check.
func.func @five_operands(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op expected 6 or more operands, but found 5}}
  %r:3 = "fa.attention_grad"(%q, %q, %q, %q, %l) : (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>) -> (tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>)
  return
}

// -----

// varlen takes both offset tensors.
func.func @varlen_one(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{varlen needs both offset tensors, varlen(%cu_seqlens_q, %cu_seqlens_k : ...)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q varlen(%c : tensor<3xi32>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @varlen_i64(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %c: tensor<3xi64>) {
  // expected-error @+1 {{cu_seqlens_q element type must be i32, got 'i64'}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q varlen(%c, %c : tensor<3xi64>, tensor<3xi64>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @varlen_counts(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %c: tensor<3xi32>, %d: tensor<4xi32>) {
  // expected-error @+1 {{offset count of cu_seqlens_k (4) does not match cu_seqlens_q (3)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q varlen(%c, %d : tensor<3xi32>, tensor<4xi32>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @varlen_batch(%q: tensor<2x4x16x32xf16>, %l: tensor<2x4x16xf32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{with varlen the query holds the packed sequences in batch 1: its batch size must be 1, got 2}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16xf32>, tensor<2x4x16x32xf16> -> tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>
  return
}

// -----

func.func @varlen_three(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{varlen needs both offset tensors}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q varlen(%c, %c, %c : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @mask_rows(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %m: tensor<1x1x3x16xi1>) {
  // expected-error @+1 {{mask dim 2 (3) must be 1 or the query length (16)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask(%m : tensor<1x1x3x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @mask_keys(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %m: tensor<1x4x16x15xf32>) {
  // expected-error @+1 {{key length of mask (15) does not match key (16)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask(%m : tensor<1x4x16x15xf32>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @mask_type(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %m: tensor<1x4x16x16xi8>) {
  // expected-error @+1 {{mask element type must be i1 (keep where true) or f16, bf16, f32 (added), got 'i8'}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask(%m : tensor<1x4x16x16xi8>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

func.func @mask_varlen(%q: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %m: tensor<1x1x1x16xi1>, %c: tensor<3xi32>) {
  // expected-error @+1 {{varlen with a mask operand is not supported}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask(%m : tensor<1x1x1x16xi1>) varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}
