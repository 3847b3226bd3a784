// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Without -verify-diagnostics the errors make fa-opt fail, not crash.
// RUN: not fa-opt %s -split-input-file > /dev/null 2>&1

// One case per verifier message of the tile ops: OnlineAttentionOp::verify
// (ranks, element types, f32 state, each dim disagreement, mask, descale,
// scale, softcap, positions and window) and KVBlockRangeOp::verify.

// Query rank.
func.func @query_rank(%q: tensor<1x16x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{query must be a rank-2 tensor, got 'tensor<1x16x64xf16>'}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<1x16x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Key rank.
func.func @key_rank(%q: tensor<?x64xf16>, %k: tensor<64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{key must be a rank-2 tensor, got 'tensor<64xf16>'}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Value rank.
func.func @value_rank(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<1x16x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{value must be a rank-2 tensor, got 'tensor<1x16x64xf16>'}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<1x16x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Running max rank (the sum has the same type).
func.func @max_rank(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?x1xf32>, %l: tensor<?x1xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{max must be a rank-1 tensor, got 'tensor<?x1xf32>'}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x1xf32>, tensor<?x64xf32>
  return
}

// -----

// Accumulator rank.
func.func @acc_rank(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?xf32>) {
  // expected-error @+1 {{acc must be a rank-2 tensor, got 'tensor<?xf32>'}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

// Mask rank: the tile, not the [B, H, Nq, Nk] mask.
func.func @mask_rank(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %mask: tensor<1x1x?x?xi1>) {
  // expected-error @+1 {{mask must be a rank-2 tensor, got 'tensor<1x1x?x?xi1>'}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<1x1x?x?xi1>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Input element type outside f16, bf16, f32, f8E4M3FN.
func.func @query_element_type(%q: tensor<?x64xi8>, %k: tensor<?x64xi8>, %v: tensor<?x64xi8>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{query, key and value must share one element type among f16, bf16, f32, f8E4M3FN}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xi8>, tensor<?x64xi8>, tensor<?x64xi8>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Key element type differs from the query's.
func.func @key_element_type(%q: tensor<?x64xf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{query, key and value must share one element type among f16, bf16, f32, f8E4M3FN}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xbf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Value element type differs from the query's.
func.func @value_element_type(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{query, key and value must share one element type among f16, bf16, f32, f8E4M3FN}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf32>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// The running max and sum are f32.
func.func @max_not_f32(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf16>, %l: tensor<?xf16>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{the running max, sum and acc must be f32}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf16>, tensor<?x64xf32>
  return
}

// -----

// The accumulator is f32, whatever the output type.
func.func @acc_not_f32(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf16>) {
  // expected-error @+1 {{the running max, sum and acc must be f32}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf16>
  return
}

// -----

// The sum has the type of the max (ODS trait); the custom form cannot say otherwise.
func.func @sum_type(%q: tensor<16x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<16xf32>, %l: tensor<?xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{failed to verify that all of {max, sum, new_max, new_sum} have same type}}
  %r:3 = "fa.online_attention"(%q, %k, %v, %m, %l, %a) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}> : (tensor<16x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<16xf32>, tensor<?xf32>, tensor<16x64xf32>) -> (tensor<16xf32>, tensor<?xf32>, tensor<16x64xf32>)
  return
}

// The accumulator result has the accumulator's type (ODS trait).
func.func @acc_result_type(%q: tensor<16x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<16xf32>, %l: tensor<16xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{failed to verify that all of {acc, new_acc} have same type}}
  %r:3 = "fa.online_attention"(%q, %k, %v, %m, %l, %a) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}> : (tensor<16x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<?x64xf32>)
  return
}

// -----

// Query and key head dims.
func.func @head_dim(%q: tensor<?x64xf16>, %k: tensor<?x32xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{query and key head dims disagree (64 vs 32)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x32xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Key and value block lengths.
func.func @block_length(%q: tensor<?x64xf16>, %k: tensor<16x64xf16>, %v: tensor<8x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{key and value block lengths disagree (16 vs 8)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<16x64xf16>, tensor<8x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Query rows and the running max.
func.func @max_rows(%q: tensor<32x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<16xf32>, %l: tensor<16xf32>, %a: tensor<32x64xf32>) {
  // expected-error @+1 {{query rows and max rows disagree (32 vs 16)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<32x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<16xf32>, tensor<32x64xf32>
  return
}

// -----

// Query rows and the accumulator.
func.func @acc_rows(%q: tensor<32x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<32xf32>, %l: tensor<32xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{query rows and acc rows disagree (32 vs 16)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<32x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<32xf32>, tensor<16x64xf32>
  return
}

// -----

// Value and accumulator head dims.
func.func @acc_head_dim(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x128xf32>) {
  // expected-error @+1 {{value and acc head dims disagree (64 vs 128)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x128xf32>
  return
}

// -----

// Dynamic query rows: the max and the accumulator still agree.
func.func @max_acc_rows(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<16xf32>, %l: tensor<16xf32>, %a: tensor<32x64xf32>) {
  // expected-error @+1 {{max rows and acc rows disagree (16 vs 32)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<16xf32>, tensor<32x64xf32>
  return
}

// -----

// Mask element type.
func.func @mask_element_type(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %mask: tensor<?x?xi8>) {
  // expected-error @+1 {{mask element type must be i1, f16, bf16 or f32}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x?xi8>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Mask rows and query rows.
func.func @mask_rows(%q: tensor<32x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %mask: tensor<16x?xi1>) {
  // expected-error @+1 {{mask rows and query rows disagree (16 vs 32)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<16x?xi1>) {scale = 0.125 : f32}
      : tensor<32x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Mask columns and key rows.
func.func @mask_columns(%q: tensor<?x64xf16>, %k: tensor<16x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %mask: tensor<?x32xi1>) {
  // expected-error @+1 {{mask columns and key rows disagree (32 vs 16)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x32xi1>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<16x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Dynamic query rows: mask rows and the running max.
func.func @mask_rows_max(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<32xf32>, %l: tensor<32xf32>, %a: tensor<?x64xf32>, %mask: tensor<16x?xf32>) {
  // expected-error @+1 {{mask rows and max rows disagree (16 vs 32)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<16x?xf32>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<32xf32>, tensor<?x64xf32>
  return
}

// -----

// Dynamic query rows and max: mask rows and the accumulator.
func.func @mask_rows_acc(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<32x64xf32>, %mask: tensor<16x?xf32>) {
  // expected-error @+1 {{mask rows and acc rows disagree (16 vs 32)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<16x?xf32>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<32x64xf32>
  return
}

// -----

// Dynamic key rows: mask columns and value rows.
func.func @mask_columns_value(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<16x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %mask: tensor<?x32xbf16>) {
  // expected-error @+1 {{mask columns and value rows disagree (32 vs 16)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x32xbf16>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<16x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// f8E4M3FN needs its descale factor.
func.func @fp8_without_descale(%q: tensor<?x64xf8E4M3FN>, %k: tensor<?x64xf8E4M3FN>, %v: tensor<?x64xf8E4M3FN>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{a descale factor is required with, and only with, f8E4M3FN inputs}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// A descale factor without f8E4M3FN.
func.func @descale_without_fp8(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %d: f32) {
  // expected-error @+1 {{a descale factor is required with, and only with, f8E4M3FN inputs}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a descale(%d) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Scale.
func.func @scale_inf(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{scale must be finite}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0x7F800000 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Scale NaN.
func.func @scale_nan(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{scale must be finite}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0x7FC00000 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Softcap zero.
func.func @softcap_zero(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{softcap must be a finite value > 0}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32, softcap = 0.0 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Softcap negative.
func.func @softcap_negative(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{softcap must be a finite value > 0}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32, softcap = -30.0 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Softcap infinite.
func.func @softcap_inf(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{softcap must be a finite value > 0}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32, softcap = 0x7F800000 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Partial positions: only the generic form can omit col0 and diagonal.
func.func @partial_positions(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %r0: index) {
  // expected-error @+1 {{positions need all of row0, col0 and diagonal}}
  %r:3 = "fa.online_attention"(%q, %k, %v, %m, %l, %a, %r0) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32, window = array<i64: -1, 0>}> : (tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, index) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
  return
}

// -----

// Two of three positions.
func.func @two_positions(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %c0: index, %diag: index) {
  // expected-error @+1 {{positions need all of row0, col0 and diagonal}}
  %r:3 = "fa.online_attention"(%q, %k, %v, %m, %l, %a, %c0, %diag) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0>, scale = 1.250000e-01 : f32, window = array<i64: -1, 0>}> : (tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, index, index) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
  return
}

// -----

// A window without positions cannot be applied.
func.func @window_without_positions(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>) {
  // expected-error @+1 {{a window needs positions(%row0, %col0, %diagonal)}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32, window = array<i64: -1, 0>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Positions without a window mean nothing.
func.func @positions_without_window(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %r0: index, %c0: index, %diag: index) {
  // expected-error @+1 {{positions are only meaningful with a window}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%r0, %c0, %diag) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Window of three values.
func.func @window_size(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %r0: index, %c0: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%r0, %c0, %diag) {scale = 0.125 : f32, window = array<i64: 1, 2, 3>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Empty window.
func.func @window_empty(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %r0: index, %c0: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%r0, %c0, %diag) {scale = 0.125 : f32, window = array<i64>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Window left bound below -1.
func.func @window_left(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %r0: index, %c0: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%r0, %c0, %diag) {scale = 0.125 : f32, window = array<i64: -2, 0>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// Window right bound below -1.
func.func @window_right(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>, %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %r0: index, %c0: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%r0, %c0, %diag) {scale = 0.125 : f32, window = array<i64: 8, -5>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return
}

// -----

// fa.kv_block_range: block_kv zero.
func.func @block_kv_zero(%r0: index, %r1: index, %n: index, %diag: index) {
  // expected-error @+1 {{block_kv must be positive, got 0}}
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag {block_kv = 0 : i64, window = array<i64: -1, 0>}
  return
}

// -----

// fa.kv_block_range: block_kv negative.
func.func @block_kv_negative(%r0: index, %r1: index, %n: index, %diag: index) {
  // expected-error @+1 {{block_kv must be positive, got -64}}
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag {block_kv = -64 : i64, window = array<i64: -1, 0>}
  return
}

// -----

// fa.kv_block_range: window of one value.
func.func @range_window_size(%r0: index, %r1: index, %n: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag {block_kv = 64 : i64, window = array<i64: 0>}
  return
}

// -----

// fa.kv_block_range: window left bound below -1.
func.func @range_window_left(%r0: index, %r1: index, %n: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag {block_kv = 64 : i64, window = array<i64: -3, 0>}
  return
}

// -----

// fa.kv_block_range: window right bound below -1.
func.func @range_window_right(%r0: index, %r1: index, %n: index, %diag: index) {
  // expected-error @+1 {{window must be [left, right], each >= -1}}
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag {block_kv = 64 : i64, window = array<i64: 16, -2>}
  return
}
