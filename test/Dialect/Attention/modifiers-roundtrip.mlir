// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The score_mod / mask_mod regions of fa.attention and fa.online_attention,
// and the coords(...) clause of the step.

// CHECK-LABEL: func.func @score_mod
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x16x8xf32>, %[[K:.+]]: tensor<1x2x16x8xf32>, %[[V:.+]]: tensor<1x2x16x8xf32>, %[[SL:.+]]: tensor<2xf32>)
// CHECK: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {causal} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[SLOPE:.+]] = tensor.extract %[[SL]][%[[H]]] : tensor<2xf32>
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[T:.+]] = math.fma %[[SLOPE]], %{{.+}}, %[[S]] : f32
// CHECK-NEXT: fa.yield %[[T]] : f32
// CHECK-NEXT: } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
// GENERIC-LABEL: sym_name = "score_mod"
// GENERIC: "fa.attention"(%{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({
// GENERIC: "fa.yield"(%{{.+}}) : (f32) -> ()
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<1x2x16x8xf32>
func.func @score_mod(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>,
                     %v: tensor<1x2x16x8xf32>, %slopes: tensor<2xf32>) -> tensor<1x2x16x8xf32> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %slope, %df, %s : f32
    fa.yield %t : f32
  } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// CHECK-LABEL: func.func @mask_mod_with_lse
// CHECK: %{{.+}}, %{{.+}} = fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<1x1x16x16xi1>) {scale = 5.000000e-01 : f32} mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[DI:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<16xi32>
// CHECK-NEXT: %[[DJ:.+]] = tensor.extract %{{.+}}[%[[J]]] : tensor<16xi32>
// CHECK-NEXT: %[[EQ:.+]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK-NEXT: fa.yield %[[EQ]] : i1
// CHECK-NEXT: } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> (tensor<1x2x16x8xf32>, tensor<1x2x16xf32>)
// GENERIC-LABEL: sym_name = "mask_mod_with_lse"
// GENERIC: "fa.attention"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>, scale = 5.000000e-01 : f32}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: ^bb0(
func.func @mask_mod_with_lse(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>,
                             %v: tensor<1x2x16x8xf32>, %m: tensor<1x1x16x16xi1>,
                             %doc: tensor<16xi32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x16xf32>) {
  %o, %l = fa.attention %q, %k, %v mask(%m : tensor<1x1x16x16xi1>) {scale = 0.5 : f32} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<16xi32>
    %dj = tensor.extract %doc[%j] : tensor<16xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    fa.yield %same : i1
  } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> (tensor<1x2x16x8xf32>, tensor<1x2x16xf32>)
  return %o, %l : tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
}

// Both regions, without an attribute dictionary; nested region ops (scf.if)
// are allowed when they have no memory effects.
// CHECK-LABEL: func.func @both
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} score_mod {
// CHECK: scf.if
// CHECK: fa.yield %{{.+}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor<1x2x16x8xf32>
func.func @both(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>,
                %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %h, %c0 : index
    %t = scf.if %first -> f32 {
      %two = arith.constant 2.0 : f32
      %x = arith.mulf %s, %two : f32
      scf.yield %x : f32
    } else {
      scf.yield %s : f32
    }
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c4 = arith.constant 4 : index
    %p = arith.cmpi ult, %j, %c4 : index
    %c = arith.cmpi ule, %j, %i : index
    %keep = arith.ori %p, %c : i1
    fa.yield %keep : i1
  } : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// The step: coords after positions, regions after the attribute dictionary.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8xf16>, %[[K:.+]]: tensor<?x8xf16>, %[[V:.+]]: tensor<?x8xf16>, %[[M:.+]]: tensor<?xf32>, %[[L:.+]]: tensor<?xf32>, %[[A:.+]]: tensor<?x8xf32>, %[[B:.+]]: index, %[[H:.+]]: index, %[[R:.+]]: index, %[[C:.+]]: index, %[[DG:.+]]: index)
// CHECK: fa.online_attention %[[Q]], %[[K]], %[[V]] into %[[M]], %[[L]], %[[A]] positions(%[[R]], %[[C]], %[[DG]]) coords(%[[B]], %[[H]], %[[R]], %[[C]]) {scale = 1.250000e-01 : f32, window = array<i64: -1, 0>} score_mod {
// CHECK: fa.yield %{{.+}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor<?x8xf16>
// GENERIC-LABEL: sym_name = "step"
// GENERIC: "fa.online_attention"({{.+}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1>, scale = 1.250000e-01 : f32, window = array<i64: -1, 0>}> ({
func.func @step(%q: tensor<?x8xf16>, %k: tensor<?x8xf16>, %v: tensor<?x8xf16>,
                %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x8xf32>,
                %b: index, %h: index, %r: index, %c: index, %dg: index) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a
      positions(%r, %c, %dg) coords(%b, %h, %r, %c)
      {scale = 0.125 : f32, window = array<i64: -1, 0>} score_mod {
  ^bb0(%s: f32, %bb: index, %hh: index, %i: index, %j: index):
    %half = arith.constant 0.5 : f32
    %t = arith.mulf %s, %half : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%bb: index, %hh: index, %i: index, %j: index):
    %ne = arith.cmpi ne, %i, %j : index
    fa.yield %ne : i1
  } : tensor<?x8xf16>, tensor<?x8xf16>, tensor<?x8xf16>, tensor<?xf32>, tensor<?x8xf32>
  return
}
