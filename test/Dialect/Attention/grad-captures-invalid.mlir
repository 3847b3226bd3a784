// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Without -verify-diagnostics the errors make fa-opt fail, not crash.
// RUN: not fa-opt %s -split-input-file > /dev/null 2>&1

// One case per verifier rule of fa.attention_grad's grad_captures, their
// gradients and capture_grad_terms.

func.func @count(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{has 1 grad_captures but 0 capture gradient results (one per capture)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return
}

// -----

func.func @int_capture(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{grad_captures #0 must have a float element type (f16, bf16 or f32), got 'i32'}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xi32>)
      : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xi32>
  return
}

// -----

func.func @grad_type(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf16>) {
  // expected-error @+1 {{the gradient of grad_captures #0 must be 'tensor<2xf32>' (its shape, f32), got 'tensor<2xf16>'}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf16>)
      : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf16>
  return
}

// -----

func.func @repeated(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{grad_captures #1 repeats an earlier capture}}
  %dq, %dk, %dv, %g, %g2 = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c, %c : tensor<2xf32>, tensor<2xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>, tensor<2xf32>
  return
}

// -----

func.func @no_score_mod(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{grad_captures needs the score_mod that reads them (only score_mod's values are differentiated)}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf32>)
      : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @terms_without_region(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{capture_grad_terms describes score_mod_grad's values: it needs that region}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf32>) {capture_grad_terms = array<i64: 0>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @term_range(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{capture_grad_terms entry 1 is not a grad_captures position (there are 1)}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf32>) {capture_grad_terms = array<i64: 1>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    %one = arith.constant 1.0 : f32
    fa.yield %t, %one : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @no_terms(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{has grad_captures and a score_mod_grad without capture_grad_terms (run fa-differentiate-score-mod on the op without score_mod_grad, or list the terms the region yields)}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    %one = arith.constant 1.0 : f32
    fa.yield %t, %one : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @term_yield(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{the score_mod_grad region must yield (f32, f32, f32, index), got (f32, f32, f32)}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%c : tensor<2xf32>) {capture_grad_terms = array<i64: 0>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    %one = arith.constant 1.0 : f32
    fa.yield %t, %one, %one : f32, f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @varlen(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %c: tensor<2xf32>, %cu: tensor<2xi32>) {
  // expected-error @+1 {{grad_captures with varlen is not supported}}
  %dq, %dk, %dv, %g = fa.attention_grad %q, %q, %q, %q, %l, %q varlen(%cu, %cu : tensor<2xi32>, tensor<2xi32>) grad_captures(%c : tensor<2xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %c[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<2xf32>
  return
}
