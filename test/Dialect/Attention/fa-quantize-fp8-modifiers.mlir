// RUN: fa-opt %s --fa-quantize-fp8 | FileCheck %s

// fa-quantize-fp8 carries the modifier regions to the fp8 op (score_mod then
// sees the descaled score, the one the f32 op's score_mod saw).
// CHECK-LABEL: func.func @modifiers
// CHECK-SAME: %[[SLOPES:[a-zA-Z0-9_]+]]: tensor<2xf32>
// CHECK: fa.attention {{.+}} descale(%{{.+}}, %{{.+}}, %{{.+}}) {causal} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK-NEXT: %[[SL:.+]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<2xf32>
// CHECK-NEXT: %[[T:.+]] = arith.addf %[[S]], %[[SL]] : f32
// CHECK-NEXT: fa.yield %[[T]] : f32
// CHECK-NEXT: } mask_mod {
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor<1x2x16x16xf8E4M3FN>
// CHECK-NOT: fa.attention
func.func @modifiers(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x16x16xf32>,
                     %v: tensor<1x2x16x16xf32>, %slopes: tensor<2xf32>) -> tensor<1x2x16x16xf32> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<2xf32>
    %t = arith.addf %s, %sl : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ne, %i, %j : index
    fa.yield %c : i1
  } : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x16xf32>
  return %o : tensor<1x2x16x16xf32>
}
