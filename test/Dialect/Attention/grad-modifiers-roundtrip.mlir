// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The score_mod, mask_mod and score_mod_grad regions of fa.attention_grad.

// All three: ALiBi with its derivative, and a prefix-LM mask.
// CHECK-LABEL: func.func @all_three
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x16x8xf32>, %{{.+}}: tensor<1x2x16xf32>, %[[SL:[^:]+]]: tensor<2xf32>)
// CHECK: %{{.+}}, %{{.+}}, %{{.+}} = fa.attention_grad %[[Q]], %[[Q]], %[[Q]], %[[Q]], %{{.+}}, %[[Q]] {causal} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[SLOPE:.+]] = tensor.extract %[[SL]][%[[H]]] : tensor<2xf32>
// CHECK: %[[T:.+]] = math.fma %[[SLOPE]], %{{.+}}, %[[S]] : f32
// CHECK-NEXT: fa.yield %[[T]] : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[MJ:.+]]: index):
// CHECK: %[[KEEP:.+]] = arith.cmpi ult, %[[MJ]], %{{.+}} : index
// CHECK-NEXT: fa.yield %[[KEEP]] : i1
// CHECK-NEXT: } score_mod_grad {
// CHECK-NEXT: ^bb0(%[[GS:.+]]: f32, %{{.+}}: index, %[[GH:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK: %[[GT:.+]] = math.fma %{{.+}}, %{{.+}}, %[[GS]] : f32
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: fa.yield %[[GT]], %[[ONE]] : f32, f32
// CHECK-NEXT: } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
// GENERIC-LABEL: sym_name = "all_three"
// GENERIC: "fa.attention_grad"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>}> ({
// GENERIC: "fa.yield"(%{{.+}}) : (f32) -> ()
// GENERIC-NEXT: }, {
// GENERIC: "fa.yield"(%{{.+}}) : (i1) -> ()
// GENERIC-NEXT: }, {
// GENERIC: "fa.yield"(%{{.+}}, %{{.+}}) : (f32, f32) -> ()
// GENERIC-NEXT: }) : (tensor<1x2x16x8xf32>
func.func @all_three(%q: tensor<1x2x16x8xf32>, %lse: tensor<1x2x16xf32>, %slopes: tensor<2xf32>)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
  %c4 = arith.constant 4 : index
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %lse, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %slope, %df, %s : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ult, %j, %c4 : index
    fa.yield %keep : i1
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %slope, %df, %s : f32
    %one = arith.constant 1.0 : f32
    fa.yield %t, %one : f32, f32
  } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
      tensor<1x2x16x8xf32>, tensor<1x2x16xf32>, tensor<1x2x16x8xf32>
      -> tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  return %dq, %dk, %dv : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}

// A mask_mod alone: the score_mod and score_mod_grad regions are empty.
// CHECK-LABEL: func.func @mask_mod_only
// CHECK: fa.attention_grad %{{.+}} {scale = 5.000000e-01 : f32} mask_mod {
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor<1x2x16x8xf32>
// GENERIC-LABEL: sym_name = "mask_mod_only"
// GENERIC: "fa.attention_grad"({{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>, scale = 5.000000e-01 : f32}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: ^bb0(
// GENERIC: "fa.yield"(%{{.+}}) : (i1) -> ()
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<1x2x16x8xf32>
func.func @mask_mod_only(%q: tensor<1x2x16x8xf32>, %lse: tensor<1x2x16xf32>, %doc: tensor<16xi32>)
    -> tensor<1x2x16x8xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %lse, %q {scale = 0.5 : f32} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<16xi32>
    %dj = tensor.extract %doc[%j] : tensor<16xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    fa.yield %same : i1
  } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
      tensor<1x2x16x8xf32>, tensor<1x2x16xf32>, tensor<1x2x16x8xf32>
      -> tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  return %dq : tensor<1x2x16x8xf32>
}

// A score_mod without its derivative (fa-differentiate-score-mod builds it).
// CHECK-LABEL: func.func @score_mod_only
// CHECK: fa.attention_grad %{{.+}} {softcap = 2.000000e+01 : f32} score_mod {
// CHECK: math.tanh
// CHECK: fa.yield %{{.+}} : f32
// CHECK-NEXT: } : tensor<1x2x16x8xbf16>
func.func @score_mod_only(%q: tensor<1x2x16x8xbf16>, %lse: tensor<1x2x16xf32>)
    -> tensor<1x2x16x8xbf16> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %lse, %q {softcap = 20.0 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 5.0 : f32
    %x = arith.divf %s, %c : f32
    %th = math.tanh %x : f32
    %t = arith.mulf %c, %th : f32
    fa.yield %t : f32
  } : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>,
      tensor<1x2x16x8xbf16>, tensor<1x2x16xf32>, tensor<1x2x16x8xbf16>
      -> tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
  return %dq : tensor<1x2x16x8xbf16>
}

// Without regions the op prints as before, generic form included.
// CHECK-LABEL: func.func @none
// CHECK: fa.attention_grad %{{.+}} {causal} : tensor<1x2x16x8xf32>
// GENERIC-LABEL: sym_name = "none"
// GENERIC: "fa.attention_grad"({{.*}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>}> : (tensor<1x2x16x8xf32>
func.func @none(%q: tensor<1x2x16x8xf32>, %lse: tensor<1x2x16xf32>) -> tensor<1x2x16x8xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %lse, %q {causal}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
        tensor<1x2x16x8xf32>, tensor<1x2x16xf32>, tensor<1x2x16x8xf32>
      -> tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  return %dq : tensor<1x2x16x8xf32>
}
