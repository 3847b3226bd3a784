// RUN: fa-opt %s -split-input-file --fa-differentiate-score-mod -verify-diagnostics | FileCheck %s

// grad_captures: after t and dt/ds, score_mod_grad yields per read of a
// captured tensor dt / d(element) (one more forward sweep seeded at that
// element) and the read's indices; capture_grad_terms names the capture of
// each term. t = (slope[h] * (j - i) + s) * table[j - i + 7]:
//   dt/ds = table[...], dt/d slope[h] = (j - i) table[...], dt/d table[...] = fma(...).
// CHECK-LABEL: func.func @alibi_times_table
// CHECK-SAME: %[[SLOPES:[^:]+]]: tensor<2xf32>, %[[TABLE:[^:]+]]: tensor<15xf16>
// CHECK: grad_captures(%[[SLOPES]], %[[TABLE]] : tensor<2xf32>, tensor<15xf16>) {capture_grad_terms = array<i64: 0, 1>, causal} score_mod {
// CHECK: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32, %{{[^:]+}}: index, %[[H:[^:]+]]: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK: %[[SL:.+]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<2xf32>
// CHECK: %[[D:.+]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[R:.+]] = arith.addi %[[D]], %{{.+}} : index
// CHECK: %[[TB:.+]] = tensor.extract %[[TABLE]][%[[R]]] : tensor<15xf16>
// CHECK: %[[TBF:.+]] = arith.extf %[[TB]] : f16 to f32
// CHECK: %[[DF:.+]] = arith.sitofp
// CHECK: %[[F:.+]] = math.fma %[[SL]], %[[DF]], %[[S]] : f32
// CHECK: %[[T:.+]] = arith.mulf %[[F]], %[[TBF]] : f32
// CHECK: %[[GS:.+]] = arith.mulf %[[DF]], %[[TBF]] : f32
// CHECK: %[[GT:.+]] = arith.mulf %[[F]], %{{.+}} : f32
// CHECK: fa.yield %[[T]], %[[TBF]], %[[GS]], %[[H]], %[[GT]], %[[R]] : f32, f32, f32, index, f32, index
func.func @alibi_times_table(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>,
                             %slopes: tensor<2xf32>, %table: tensor<15xf16>) -> (tensor<2xf32>, tensor<15xf32>) {
  %dq, %dk, %dv, %ds, %dt = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%slopes, %table : tensor<2xf32>, tensor<15xf16>) {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %d = arith.subi %j, %i : index
    %c7 = arith.constant 7 : index
    %r = arith.addi %d, %c7 : index
    %bias = tensor.extract %table[%r] : tensor<15xf16>
    %bf = arith.extf %bias : f16 to f32
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t0 = math.fma %slope, %df, %s : f32
    %t1 = arith.mulf %t0, %bf : f32
    fa.yield %t1 : f32
  } : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32>
    -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<2xf32>, tensor<15xf32>
  return %ds, %dt : tensor<2xf32>, tensor<15xf32>
}

// -----

// A capture read twice gets two terms (both naming it); a read that only
// feeds a comparison carries no gradient and gets none; the capture mask_mod
// reads is not differentiated.
// CHECK-LABEL: func.func @two_reads
// CHECK: {capture_grad_terms = array<i64: 0, 0>} score_mod {
// CHECK: fa.yield %{{.+}}, %{{.+}}, %{{.+}}, %[[I:.+]], %{{.+}}, %[[J:.+]] : f32, f32, f32, index, f32, index
func.func @two_reads(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %dq, %dk, %dv, %dw = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%w : tensor<8xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %wi = tensor.extract %w[%i] : tensor<8xf32>
    %wj = tensor.extract %w[%j] : tensor<8xf32>
    %wb = tensor.extract %w[%b] : tensor<8xf32>
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %wb, %zero : f32
    %x = arith.mulf %wi, %wj : f32
    %y = arith.addf %s, %x : f32
    %t = arith.select %pos, %y, %s : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %wj = tensor.extract %w[%j] : tensor<8xf32>
    %zero = arith.constant 0.0 : f32
    %keep = arith.cmpf oge, %wj, %zero : f32
    fa.yield %keep : i1
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
    -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<8xf32>
  return %dw : tensor<8xf32>
}

// -----

// A capture score_mod never reads: no term, a zero gradient.
// CHECK-LABEL: func.func @unread
// CHECK: {capture_grad_terms = array<i64>} score_mod {
// CHECK: fa.yield %{{.+}}, %{{.+}} : f32, f32
func.func @unread(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %dq, %dk, %dv, %dw = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%w : tensor<8xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %t = arith.mulf %s, %two : f32
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
    -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<8xf32>
  return %dw : tensor<8xf32>
}

// -----

func.func @slice_read(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %dq, %dk, %dv, %dw = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%w : tensor<8xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{fa-differentiate-score-mod: a grad_captures tensor is read by 'tensor.extract_slice'; only tensor.extract reads are differentiated}}
    %half = tensor.extract_slice %w[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    %x = tensor.extract %half[%h] : tensor<4xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
    -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<8xf32>
  return %dw : tensor<8xf32>
}

// -----

func.func @nested_read(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>, %w: tensor<8xf32>, %c: i1) -> tensor<8xf32> {
  %dq, %dk, %dv, %dw = fa.attention_grad %q, %q, %q, %q, %l, %q grad_captures(%w : tensor<8xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bias = scf.if %c -> f32 {
      // expected-error @+1 {{fa-differentiate-score-mod: a grad_captures tensor is read inside an op with regions; read it at score_mod's top level}}
      %x = tensor.extract %w[%h] : tensor<8xf32>
      scf.yield %x : f32
    } else {
      %zero = arith.constant 0.0 : f32
      scf.yield %zero : f32
    }
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
    -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<8xf32>
  return %dw : tensor<8xf32>
}
