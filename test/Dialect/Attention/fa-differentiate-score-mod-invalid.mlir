// RUN: fa-opt %s -split-input-file --fa-differentiate-score-mod -verify-diagnostics
// A failure leaves the op as it was (no partial score_mod_grad region).
// RUN: not fa-opt %s -split-input-file --fa-differentiate-score-mod --mlir-print-ir-after-failure 2>&1 | FileCheck %s --implicit-check-not='score_mod_grad {'
// CHECK: cannot differentiate 'math.atan'
// CHECK: IR Dump After FADifferentiateScoreModPass Failed
// CHECK: math.atan
// CHECK: fa.yield %{{.+}} : f32
// CHECK-NEXT: } : tensor<1x1x8x4xf32>

// An op without a derivative rule that depends on the score.
func.func @unsupported(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %x = arith.mulf %s, %two : f32
    // expected-error @+1 {{fa-differentiate-score-mod: cannot differentiate 'math.atan' with respect to the score; write the score_mod_grad region by hand}}
    %t = math.atan %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>,
      tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
      -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
  return %dq : tensor<1x1x8x4xf32>
}

// -----

// An op with regions whose result depends on the score.
func.func @region_op(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %zero = arith.constant 0.0 : f32
    %neg = arith.cmpf olt, %s, %zero : f32
    // expected-error @+1 {{fa-differentiate-score-mod: cannot differentiate 'scf.if' with respect to the score (an op with regions); write the score_mod_grad region by hand}}
    %t = scf.if %neg -> f32 {
      %n = arith.negf %s : f32
      scf.yield %n : f32
    } else {
      scf.yield %s : f32
    }
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>,
      tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
      -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
  return %dq : tensor<1x1x8x4xf32>
}

// -----

// An op with two float results that depends on the score.
func.func @two_results(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{fa-differentiate-score-mod: cannot differentiate 'math.sincos' with respect to the score; write the score_mod_grad region by hand}}
    %sin, %cos = math.sincos %s : f32
    %t = arith.addf %sin, %cos : f32
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>,
      tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
      -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
  return %dq : tensor<1x1x8x4xf32>
}
