// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_90a' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_80' -verify-diagnostics

// The backward kernels' regions: what they cannot take is diagnosed on the op.

// score_mod reaches the kernels through its derivative (fa-to-ptx runs
// fa-differentiate-score-mod; convert-fa-to-nvgpu alone does not).
func.func @no_derivative(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  // expected-error @+1 {{convert-fa-to-nvgpu: the backward kernel needs score_mod's derivative (the score_mod_grad region): run fa-differentiate-score-mod first (fa-to-ptx does)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %t = arith.mulf %s, %two : f32
    fa.yield %t : f32
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

// -----

// An argument no region reads: the kernel would have no parameter for it.
func.func @unread_argument(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %x: tensor<16xi32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  // expected-error @+1 {{convert-fa-to-nvgpu: every function argument after q, k, v, out, lse, do must be a tensor the op's regions read (the kernel takes no other)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

// -----

// A region that reads one of the op's operands (here lse).
func.func @reads_operand(%q: tensor<1x2x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>, %o: tensor<1x2x16x64xf16>, %lse: tensor<1x2x16xf32>, %do: tensor<1x2x16x64xf16>) -> (tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) {
  // expected-error @+1 {{convert-fa-to-nvgpu: the backward kernel's regions may read only the function arguments after q, k, v, out, lse, do, got argument 4}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %lse[%b, %h, %i] : tensor<1x2x16xf32>
    %zero = arith.constant 0.0 : f32
    %keep = arith.cmpf ogt, %x, %zero : f32
    fa.yield %keep : i1
  } : tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16xf32>, tensor<1x2x16x64xf16> -> tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
  return %dq, %dk, %dv : tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
}

// -----

// A tensor of dynamic shape read by a region (the kernel needs its extent).
func.func @dynamic_capture(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %ids: tensor<?xi32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  // expected-error @+1 {{convert-fa-to-nvgpu: a tensor a modifier region reads needs a static shape on the GPU, got 'tensor<?xi32>'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<?xi32>
    %dj = tensor.extract %ids[%j] : tensor<?xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

// -----

// The gradient of a captured tensor whose coefficient depends on the score
// (t = s * w[h]: dt / dw[h] = s): the kernels form the terms where dS is
// formed, without the score.
func.func @grad_captures(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %w: tensor<8xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<8xf32>) {
  // expected-error @+1 {{convert-fa-to-nvgpu: the backward kernels form the gradient of a captured tensor only where its coefficient and indices do not depend on the score (score_mod adds the captured values: s + bias[...], s + slope[h] * (j - i)); capture_grad_terms entry 0 does (fa-to-cpu forms it)}}
  %dq, %dk, %dv, %dw = fa.attention_grad %q, %k, %v, %o, %lse, %do grad_captures(%w : tensor<8xf32>) {capture_grad_terms = array<i64: 0>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %w[%h] : tensor<8xf32>
    %t = arith.mulf %s, %x : f32
    fa.yield %t : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %w[%h] : tensor<8xf32>
    %t = arith.mulf %s, %x : f32
    fa.yield %t, %x, %s, %h : f32, f32, f32, index
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<8xf32>
  return %dq, %dk, %dv, %dw : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<8xf32>
}
