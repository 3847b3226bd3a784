// RUN: fa-opt %s -split-input-file --fa-differentiate-score-mod | FileCheck %s
// One case per derivative rule family; the score_mod is kept, score_mod_grad
// follows it.

// ALiBi (slope captured from above, math.fma): only the s operand of the fma
// carries a tangent, so dt/ds is the seed 1 itself.
// CHECK-LABEL: func.func @alibi
// CHECK-SAME: %[[SLOPES:[^:]+]]: tensor<2xf32>
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32, %{{[^:]+}}: index, %[[H:[^:]+]]: index, %{{[^:]+}}: index, %{{[^:]+}}: index):
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[SL:.+]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<2xf32>
// CHECK-NEXT: arith.subi
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[DF:.+]] = arith.sitofp
// CHECK-NEXT: %[[T:.+]] = math.fma %[[SL]], %[[DF]], %[[S]] : f32
// CHECK-NEXT: fa.yield %[[T]], %[[ONE]] : f32, f32
// CHECK-NEXT: } :
func.func @alibi(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %slopes: tensor<2xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %slope, %df, %s : f32
    fa.yield %t : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// Softcap written as a score_mod: d(c tanh(s / c)) = c (1 - tanh^2) (1 / c).
// CHECK-LABEL: func.func @softcap_tanh
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32,
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.+]] = arith.constant 2.000000e+01 : f32
// CHECK-NEXT: %[[X:.+]] = arith.divf %[[S]], %[[C]] : f32
// CHECK-NEXT: %[[DX:.+]] = arith.divf %[[ONE]], %[[C]] : f32
// CHECK-NEXT: %[[TH:.+]] = math.tanh %[[X]] : f32
// CHECK-NEXT: %[[ONE2:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[TH]], %[[TH]] : f32
// CHECK-NEXT: %[[D1:.+]] = arith.subf %[[ONE2]], %[[SQ]] : f32
// CHECK-NEXT: %[[DTH:.+]] = arith.mulf %[[D1]], %[[DX]] : f32
// CHECK-NEXT: %[[T:.+]] = arith.mulf %[[TH]], %[[C]] : f32
// CHECK-NEXT: %[[DT:.+]] = arith.mulf %[[DTH]], %[[C]] : f32
// CHECK-NEXT: fa.yield %[[T]], %[[DT]] : f32, f32
func.func @softcap_tanh(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 20.0 : f32
    %x = arith.divf %s, %c : f32
    %th = math.tanh %x : f32
    %t = arith.mulf %th, %c : f32
    fa.yield %t : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// A relative-position bias read from a captured table: s + bias(i, j) has
// dt/ds = 1, the index arithmetic and the tensor.extract get no tangent.
// CHECK-LABEL: func.func @relpos
// CHECK-SAME: %[[TABLE:[^:]+]]: tensor<7xf32>
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32,
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BIAS:.+]] = tensor.extract %[[TABLE]][%{{.+}}] : tensor<7xf32>
// CHECK-NEXT: %[[T:.+]] = arith.addf %[[S]], %[[BIAS]] : f32
// CHECK-NEXT: fa.yield %[[T]], %[[ONE]] : f32, f32
func.func @relpos(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %table: tensor<7xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %r = arith.constant 3 : index
    %nr = arith.constant -3 : index
    %d = arith.subi %j, %i : index
    %lo = arith.maxsi %d, %nr : index
    %dc = arith.minsi %lo, %r : index
    %idx = arith.addi %dc, %r : index
    %bias = tensor.extract %table[%idx] : tensor<7xf32>
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// max takes the tangent of the operand it returned; select that of its branch;
// the comparison on s has none.
// CHECK-LABEL: func.func @max_select
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32,
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpf oeq, %[[M]], %[[S]] : f32
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[DM:.+]] = arith.select %[[FIRST]], %[[ONE]], %[[Z]] : f32
// CHECK-NEXT: %[[NEG:.+]] = arith.cmpf olt, %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: %[[S2:.+]] = arith.mulf %[[S]], %[[TWO]] : f32
// CHECK-NEXT: %[[T:.+]] = arith.select %[[NEG]], %[[S2]], %[[M]] : f32
// CHECK-NEXT: %[[DT:.+]] = arith.select %[[NEG]], %[[TWO]], %[[DM]] : f32
// CHECK-NEXT: fa.yield %[[T]], %[[DT]] : f32, f32
func.func @max_select(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %m = arith.maximumf %s, %zero : f32
    %neg = arith.cmpf olt, %s, %zero : f32
    %s2 = arith.mulf %s, %two : f32
    %t = arith.select %neg, %s2, %m : f32
    fa.yield %t : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// A chain: -exp(sqrt(s * s)) through f16 and back.
// CHECK-LABEL: func.func @chain
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32,
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[S]], %[[S]] : f32
// CHECK-NEXT: %[[DSQ:.+]] = arith.addf %[[S]], %[[S]] : f32
// CHECK-NEXT: %[[R:.+]] = math.sqrt %[[SQ]] : f32
// CHECK-NEXT: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[F:.+]] = arith.divf %[[HALF]], %[[R]] : f32
// CHECK-NEXT: %[[DR:.+]] = arith.mulf %[[F]], %[[DSQ]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[R]] : f32
// CHECK-NEXT: %[[DE:.+]] = arith.mulf %[[E]], %[[DR]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[E]] : f32
// CHECK-NEXT: %[[DN:.+]] = arith.negf %[[DE]] : f32
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[N]] : f32 to f16
// CHECK-NEXT: %[[DH:.+]] = arith.truncf %[[DN]] : f32 to f16
// CHECK-NEXT: %[[T:.+]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: %[[DT:.+]] = arith.extf %[[DH]] : f16 to f32
// CHECK-NEXT: fa.yield %[[T]], %[[DT]] : f32, f32
func.func @chain(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %a = arith.mulf %s, %s : f32
    %b1 = math.sqrt %a : f32
    %e = math.exp %b1 : f32
    %n = arith.negf %e : f32
    %h16 = arith.truncf %n : f32 to f16
    %f = arith.extf %h16 : f16 to f32
    fa.yield %f : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// A scalar captured from above, used as it is (an op on it that has no
// derivative rule is fine: it does not depend on s): d(s * atan(w)) = atan(w).
// CHECK-LABEL: func.func @captured_scalar
// CHECK-SAME: %[[W:[^:]+]]: f32)
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32,
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[A:.+]] = math.atan %[[W]] : f32
// CHECK-NEXT: %[[T:.+]] = arith.mulf %[[S]], %[[A]] : f32
// CHECK-NEXT: fa.yield %[[T]], %[[A]] : f32, f32
func.func @captured_scalar(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %w: f32) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = math.atan %w : f32
    %t = arith.mulf %s, %c : f32
    fa.yield %t : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// A score_mod that ignores s: dt = 0.
// CHECK-LABEL: func.func @independent
// CHECK: } score_mod_grad {
// CHECK: %[[T:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: fa.yield %[[T]], %[[Z]] : f32, f32
func.func @independent(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.0 : f32
    fa.yield %c : f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// A hand-written score_mod_grad (a custom derivative) is left alone.
// CHECK-LABEL: func.func @custom_left_alone
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: math.exp
// CHECK-NEXT: %[[DT:.+]] = arith.constant 4.200000e+01 : f32
// CHECK-NEXT: fa.yield %{{.+}}, %[[DT]] : f32, f32
// CHECK-NEXT: } :
func.func @custom_left_alone(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.exp %s : f32
    fa.yield %t : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.exp %s : f32
    %dt = arith.constant 42.0 : f32
    fa.yield %t, %dt : f32, f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// Without a score_mod there is nothing to differentiate.
// CHECK-LABEL: func.func @mask_mod_only
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor
func.func @mask_mod_only(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    fa.yield %keep : i1
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}
