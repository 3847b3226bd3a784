// RUN: fa-opt %s --split-input-file --verify-diagnostics

// The rules of varlen(...) on fa.attention, one case each.

func.func @element_type(%q: tensor<1x4x64x32xf16>, %cq: tensor<3xi64>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op cu_seqlens_q element type must be i32, got 'i64'}}
  %o = fa.attention %q, %q, %q varlen(%cq, %ck : tensor<3xi64>, tensor<3xi32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @rank(%q: tensor<1x4x64x32xf16>, %cq: tensor<3xi32>, %ck: tensor<3x1xi32>) {
  // expected-error @+1 {{'fa.attention' op cu_seqlens_k must be a rank-1 tensor [B + 1], got 'tensor<3x1xi32>'}}
  %o = fa.attention %q, %q, %q varlen(%cq, %ck : tensor<3xi32>, tensor<3x1xi32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @offset_counts(%q: tensor<1x4x64x32xf16>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) {
  // expected-error @+1 {{'fa.attention' op offset count of cu_seqlens_k (4) does not match cu_seqlens_q (3)}}
  %o = fa.attention %q, %q, %q varlen(%cq, %ck : tensor<3xi32>, tensor<4xi32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @no_offsets(%q: tensor<1x4x64x32xf16>, %cq: tensor<0xi32>) {
  // expected-error @+1 {{'fa.attention' op cu_seqlens_q must hold at least one offset ([B + 1], B >= 0)}}
  %o = fa.attention %q, %q, %q varlen(%cq, %cq : tensor<0xi32>, tensor<0xi32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @batch(%q: tensor<2x4x64x32xf16>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op with varlen the query holds the packed sequences in batch 1: its batch size must be 1, got 2}}
  %o = fa.attention %q, %q, %q varlen(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16> -> tensor<2x4x64x32xf16>
  return
}

// -----

func.func @dynamic_batch(%q: tensor<1x4x64x32xf16>, %k: tensor<?x4x64x32xf16>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op with varlen the key holds the packed sequences in batch 1: its batch size must be 1, got ?}}
  %o = fa.attention %q, %k, %k varlen(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x4x64x32xf16>, tensor<?x4x64x32xf16>, tensor<?x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @with_mask(%q: tensor<1x4x64x32xf16>, %m: tensor<1x1x64x64xi1>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen with a mask operand is not supported}}
  %o = fa.attention %q, %q, %q mask(%m : tensor<1x1x64x64xi1>) varlen(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @with_diagonal(%q: tensor<1x4x64x32xf16>, %d: index, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen with diagonal(...) is not supported}}
  %o = fa.attention %q, %q, %q diagonal(%d) varlen(%cq, %cq : tensor<3xi32>, tensor<3xi32>) {causal}
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @with_kv_lens(%q: tensor<1x4x64x32xf16>, %l: tensor<1xi32>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen with kv_lens(...) is not supported}}
  %o = fa.attention %q, %q, %q kv_lens(%l : tensor<1xi32>) varlen(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @with_fp8(%q: tensor<1x4x64x32xf8E4M3FN>, %s: f32, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen with fp8 inputs is not supported}}
  %o = fa.attention %q, %q, %q descale(%s, %s, %s) varlen(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x4x64x32xf8E4M3FN>, tensor<1x4x64x32xf8E4M3FN>, tensor<1x4x64x32xf8E4M3FN> -> tensor<1x4x64x32xf16>
  return
}

// -----

// Only one offset tensor (the generic form can say so; the custom form cannot).
func.func @one_offset_tensor(%q: tensor<1x4x64x32xf16>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen needs both offset tensors, varlen(%cu_seqlens_q, %cu_seqlens_k : ...)}}
  %o = "fa.attention"(%q, %q, %q, %cq) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> ({}, {})
      : (tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<3xi32>) -> tensor<1x4x64x32xf16>
  return
}
