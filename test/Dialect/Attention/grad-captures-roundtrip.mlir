// RUN: fa-opt %s | FileCheck %s
// RUN: fa-opt %s | fa-opt | FileCheck %s

// grad_captures: the tensors score_mod reads whose gradients follow dq, dk, dv
// (f32, their shapes); score_mod_grad then yields, after t and dt/ds, each
// capture_grad_terms entry's coefficient and indices.
// CHECK-LABEL: func.func @alibi_slopes
// CHECK: %{{.+}}, %{{.+}}, %{{.+}}, %[[G:.+]] = fa.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} grad_captures(%[[SL:.+]] : tensor<2xf16>) {capture_grad_terms = array<i64: 0>, causal} score_mod {
// CHECK: } score_mod_grad {
// CHECK: fa.yield %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32, index
// CHECK: -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>
// CHECK: return %[[G]] : tensor<2xf32>
func.func @alibi_slopes(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %slopes: tensor<2xf16>) -> tensor<2xf32> {
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%slopes : tensor<2xf16>) {capture_grad_terms = array<i64: 0>, causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<2xf16>
    %slf = arith.extf %sl : f16 to f32
    %t = arith.addf %s, %slf : f32
    fa.yield %t : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<2xf16>
    %slf = arith.extf %sl : f16 to f32
    %t = arith.addf %s, %slf : f32
    %one = arith.constant 1.0 : f32
    fa.yield %t, %one, %one, %h : f32, f32, f32, index
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>
  return %ds : tensor<2xf32>
}

// Before fa-differentiate-score-mod: grad_captures with score_mod alone, two
// captures (one of rank 2, dynamic), no terms yet.
// CHECK-LABEL: func.func @two_captures
// CHECK: grad_captures(%{{.+}}, %{{.+}} : tensor<3xf32>, tensor<2x?xbf16>) {causal} score_mod {
// CHECK: -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3xf32>, tensor<2x?xf32>
func.func @two_captures(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %a: tensor<3xf32>, %m: tensor<2x?xbf16>) -> (tensor<3xf32>, tensor<2x?xf32>) {
  %dq, %dk, %dv, %da, %dm = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%a, %m : tensor<3xf32>, tensor<2x?xbf16>) {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %a[%h] : tensor<3xf32>
    %y = tensor.extract %m[%h, %j] : tensor<2x?xbf16>
    %yf = arith.extf %y : bf16 to f32
    %t0 = arith.addf %s, %x : f32
    %t = arith.mulf %t0, %yf : f32
    fa.yield %t : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3xf32>, tensor<2x?xf32>
  return %da, %dm : tensor<3xf32>, tensor<2x?xf32>
}
