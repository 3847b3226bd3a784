// RUN: fa-opt %s --split-input-file --verify-diagnostics

// fa.attention's descale operands: f32 scalars (per tensor), [B, H] tensors (per head)
// or [B, H, NB] tensors with descale_block (per block of rows). One case per message.
// Q: B=2, Hq=4, Nq=100; K/V: Hkv=2, Nk=70; blocks 64 x 32 give NB = 2 (q), 3 (k, v).

func.func @rank1(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2xf32>, %kd: tensor<2xf32>, %vd: tensor<2xf32>) {
  // expected-error @+1 {{q_descale must be rank 2 (per head: [B, H]) or rank 3 (per block of rows: [B, H, NB]), got 'tensor<2xf32>'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @f16_tensor(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4xf16>, %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @+1 {{q_descale must be an f32 scalar or a ranked tensor of f32, got 'tensor<2x4xf16>'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4xf16>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @i32_scalar(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: f32, %kd: i32, %vd: f32) {
  // expected-error @+1 {{k_descale must be an f32 scalar or a ranked tensor of f32, got 'i32'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : f32, i32, f32)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @mixed_scalar_head(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: f32, %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @+1 {{the three descales must have one granularity (all f32 scalars, all rank 2 or all rank 3), got 'f32', 'tensor<2x2xf32>' and 'tensor<2x2xf32>'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : f32, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @mixed_head_block(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x3xf32>) {
  // expected-error @+1 {{the three descales must have one granularity (all f32 scalars, all rank 2 or all rank 3), got 'tensor<2x4xf32>', 'tensor<2x2x3xf32>' and 'tensor<2x2x3xf32>'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {descale_block = array<i64: 64, 32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @wrong_batch(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<3x4xf32>, %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @+1 {{batch size of q_descale (3) does not match query (2)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<3x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @q_heads_of_kv(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x2xf32>, %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @+1 {{head count of q_descale (2) does not match query (4)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @k_heads_of_q(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4xf32>, %kd: tensor<2x4xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @+1 {{head count of k_descale (4) does not match key (2)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @v_heads(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4xf32>, %kd: tensor<2x2xf32>, %vd: tensor<2x1xf32>) {
  // expected-error @+1 {{head count of v_descale (1) does not match key (2)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x1xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @wrong_q_blocks(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4x1xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x3xf32>) {
  // expected-error @+1 {{block count of q_descale (1) does not match ceil(query length 100 / 64) = 2}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4x1xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {descale_block = array<i64: 64, 32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @wrong_v_blocks(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4x2xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x2xf32>) {
  // expected-error @+1 {{block count of v_descale (2) does not match ceil(key length 70 / 32) = 3}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4x2xf32>, tensor<2x2x3xf32>, tensor<2x2x2xf32>) {descale_block = array<i64: 64, 32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_missing(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4x2xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x3xf32>) {
  // expected-error @+1 {{per-block descales need descale_block = array<i64: block_q, block_kv>}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4x2xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>)
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_zero(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4x2xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x3xf32>) {
  // expected-error @+1 {{descale_block values must be positive, got [0, 32]}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4x2xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {descale_block = array<i64: 0, 32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_negative(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4x2xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x3xf32>) {
  // expected-error @+1 {{descale_block values must be positive, got [64, -32]}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4x2xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {descale_block = array<i64: 64, -32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_one_value(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4x2xf32>, %kd: tensor<2x2x3xf32>, %vd: tensor<2x2x3xf32>) {
  // expected-error @+1 {{descale_block must hold two values [block_q, block_kv], got 1}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4x2xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {descale_block = array<i64: 64>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_with_head(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: tensor<2x4xf32>, %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @+1 {{descale_block is only allowed with per-block (rank-3) descales}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {descale_block = array<i64: 64, 32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_with_scalars(%q: tensor<2x4x100x32xf8E4M3FN>, %k: tensor<2x2x70x32xf8E4M3FN>, %v: tensor<2x2x70x32xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) {
  // expected-error @+1 {{descale_block is only allowed with per-block (rank-3) descales}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : f32, f32, f32) {descale_block = array<i64: 64, 32>}
      : tensor<2x4x100x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN>, tensor<2x2x70x32xf8E4M3FN> -> tensor<2x4x100x32xf16>
  return
}

// -----

func.func @block_without_fp8(%q: tensor<1x4x16x32xf16>) {
  // expected-error @+1 {{descale_block is only allowed with per-block (rank-3) descales}}
  %o = fa.attention %q, %q, %q {descale_block = array<i64: 16, 16>}
      : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Unranked descales are neither scalars nor ranked tensors.
func.func @unranked(%q: tensor<1x4x16x32xf8E4M3FN>, %d: tensor<*xf32>) {
  // expected-error @+1 {{q_descale must be an f32 scalar or a ranked tensor of f32, got 'tensor<*xf32>'}}
  %o = fa.attention %q, %q, %q descale(%d, %d, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
      : tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN> -> tensor<1x4x16x32xf16>
  return
}

// -----

// fa.online_attention: descale(%score, %value) at most.
func.func @online_three_descales(%q: tensor<16x32xf8E4M3FN>, %m: tensor<16xf32>, %acc: tensor<16x32xf32>, %d: f32) {
  // expected-error @+1 {{descale takes the score descale and an optional value descale, got 3 values}}
  %r:3 = fa.online_attention %q, %q, %q into %m, %m, %acc descale(%d, %d, %d) {scale = 0.125 : f32}
      : tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16xf32>, tensor<16x32xf32>
  return
}

// -----

func.func @online_value_descale_f16(%q: tensor<16x32xf16>, %m: tensor<16xf32>, %acc: tensor<16x32xf32>, %d: f32) {
  // expected-error @+1 {{a descale factor is required with, and only with, f8E4M3FN inputs}}
  %r:3 = fa.online_attention %q, %q, %q into %m, %m, %acc descale(%d, %d) {scale = 0.125 : f32}
      : tensor<16x32xf16>, tensor<16x32xf16>, tensor<16x32xf16>, tensor<16xf32>, tensor<16x32xf32>
  return
}
