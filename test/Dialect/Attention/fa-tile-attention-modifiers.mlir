// RUN: fa-opt %s --fa-tile-attention="block-q=32 block-kv=16" --cse --split-input-file | FileCheck %s

// fa-tile-attention copies the score_mod / mask_mod regions verbatim into every
// fa.online_attention step, with coords(batch, head, the block's first row, the
// block's first key), and keeps the loop structure of the op without regions.

// Causal, Nq = Nk = 64, both regions; the mask_mod reads a captured tensor.
// CHECK-LABEL: func.func @causal_both
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<1x2x64x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<1x2x64x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<1x2x64x8xf32>, %[[DOC:[a-zA-Z0-9_]+]]: tensor<64xi32>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %[[C32:.+]] : index
// CHECK: fa.kv_block_range
// Masked loop (straddling blocks): positions and coords.
// CHECK: scf.for %[[KB1:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL1:.+]] = arith.muli %[[KB1]], %[[C16:.+]] : index
// CHECK: fa.online_attention {{.+}} positions(%[[ROW0]], %[[COL1]], %{{.+}}) coords(%[[B]], %[[H]], %[[ROW0]], %[[COL1]]) {scale = {{.+}}, window = array<i64: -1, 0>} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[HH:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK-NEXT: %[[HF:.+]] = arith.index_cast %[[HH]] : index to i32
// CHECK: fa.yield %{{.+}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: tensor.extract %[[DOC]][%[[I]]] : tensor<64xi32>
// CHECK-NEXT: tensor.extract %[[DOC]][%[[J]]] : tensor<64xi32>
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor<?x8xf32>
// Unmasked loop (fully visible blocks): no positions, still coords and regions.
// CHECK: scf.for %[[KB2:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL2:.+]] = arith.muli %[[KB2]], %[[C16]] : index
// CHECK: fa.online_attention {{.+}} into %{{.+}}, %{{.+}}, %{{.+}} coords(%[[B]], %[[H]], %[[ROW0]], %[[COL2]]) {scale = {{.+}}} score_mod {
// CHECK: } mask_mod {
// CHECK: } : tensor<?x8xf32>
// The second masked loop.
// CHECK: scf.for %[[KB3:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL3:.+]] = arith.muli %[[KB3]], %[[C16]] : index
// CHECK: fa.online_attention {{.+}} positions(%[[ROW0]], %[[COL3]], %{{.+}}) coords(%[[B]], %[[H]], %[[ROW0]], %[[COL3]]) {{.+}} score_mod {
// CHECK: } mask_mod {
// CHECK: } : tensor<?x8xf32>
// CHECK-NOT: scf.for %
// CHECK-NOT: fa.attention
func.func @causal_both(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>,
                       %v: tensor<1x2x64x8xf32>, %doc: tensor<64xi32>) -> tensor<1x2x64x8xf32> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %t = arith.addf %s, %hf : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<64xi32>
    %dj = tensor.extract %doc[%j] : tensor<64xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    fa.yield %same : i1
  } : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
  return %o : tensor<1x2x64x8xf32>
}

// -----

// No window: the one loop over all key blocks, each step with the region.
// CHECK-LABEL: func.func @mask_mod_only
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %{{.+}} : index
// CHECK-NOT: fa.kv_block_range
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]], %{{.+}} : index
// CHECK: fa.online_attention {{.+}} coords(%[[B]], %[[H]], %[[ROW0]], %[[COL0]]) {scale = {{.+}}} mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK: fa.yield %{{.+}} : i1
// CHECK-NEXT: } : tensor<?x8xf32>
// CHECK-NOT: scf.for %
func.func @mask_mod_only(%q: tensor<1x1x40x8xf32>, %k: tensor<1x1x40x8xf32>,
                         %v: tensor<1x1x40x8xf32>) -> tensor<1x1x40x8xf32> {
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ule, %j, %i : index
    fa.yield %c : i1
  } : tensor<1x1x40x8xf32>, tensor<1x1x40x8xf32>, tensor<1x1x40x8xf32> -> tensor<1x1x40x8xf32>
  return %o : tensor<1x1x40x8xf32>
}

// -----

// Without regions the steps have no coords.
// CHECK-LABEL: func.func @no_regions
// CHECK: fa.online_attention
// CHECK-NOT: coords
// CHECK-SAME: : tensor<?x8xf32>
func.func @no_regions(%q: tensor<1x1x40x8xf32>, %k: tensor<1x1x40x8xf32>,
                      %v: tensor<1x1x40x8xf32>) -> tensor<1x1x40x8xf32> {
  %o = fa.attention %q, %k, %v : tensor<1x1x40x8xf32>, tensor<1x1x40x8xf32>, tensor<1x1x40x8xf32> -> tensor<1x1x40x8xf32>
  return %o : tensor<1x1x40x8xf32>
}
