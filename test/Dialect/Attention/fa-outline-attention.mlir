// RUN: fa-opt %s --fa-tile-attention="block-q=64 block-kv=64" --fa-outline-attention --canonicalize --split-input-file | FileCheck %s

// Two attentions in one function, other ops before, between and after: each
// becomes a private function of its own (names made unique), called in place;
// the function's other ops stay.

// CHECK-LABEL: func.func private @two_attention(
// CHECK-SAME:      %{{.*}}: tensor<1x2x128x64xf16>, %{{.*}}: tensor<1x2x128x64xf16>, %{{.*}}: tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16>
// CHECK:         tensor.empty() : tensor<1x2x128x64xf16>
// CHECK:         scf.forall
// CHECK:           fa.online_attention
// CHECK:         return
// CHECK-LABEL: func.func private @two_attention_1(
// CHECK-SAME:      -> (tensor<1x2x128x64xf16>, tensor<1x2x128xf32>)
// CHECK:         scf.forall
// CHECK-LABEL: func.func @two(
// CHECK-SAME:      %[[Q:.*]]: tensor<1x2x128x64xf16>, %[[K:.*]]: tensor<1x2x128x64xf16>, %[[V:.*]]: tensor<1x2x128x64xf16>, %[[X:.*]]: tensor<1x2x128x64xf16>)
// CHECK-NOT:     scf.forall
// CHECK:         %[[A:.*]] = arith.addf %[[Q]], %[[X]]
// CHECK:         %[[O1:.*]] = call @two_attention(%[[A]], %[[K]], %[[V]])
// CHECK:         %[[O2:.*]]:2 = call @two_attention_1(%[[O1]], %[[K]], %[[V]])
// CHECK:         %[[R:.*]] = arith.mulf %[[O2]]#0, %[[X]]
// CHECK:         return %[[R]], %[[O2]]#1
func.func @two(%q: tensor<1x2x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %x: tensor<1x2x128x64xf16>) -> (tensor<1x2x128x64xf16>, tensor<1x2x128xf32>) {
  %a = arith.addf %q, %x : tensor<1x2x128x64xf16>
  %o1 = fa.attention %a, %k, %v {causal} : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x2x128x64xf16>
  %o2, %lse = fa.attention %o1, %k, %v : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> (tensor<1x2x128x64xf16>, tensor<1x2x128xf32>)
  %r = arith.mulf %o2, %x : tensor<1x2x128x64xf16>
  return %r, %lse : tensor<1x2x128x64xf16>, tensor<1x2x128xf32>
}

// -----

// Runtime sizes are recomputed from the arguments inside (tensor.dim), and a
// tensor that a mask_mod region reads becomes an argument; a function that
// others call keeps its name and callers.

// CHECK-LABEL: func.func private @docs_attention(
// CHECK-SAME:      %[[Q:[a-z0-9]+]]: tensor<?x?x?x64xf16>, %{{[a-z0-9]+}}: tensor<?x?x?x64xf16>, %{{[a-z0-9]+}}: tensor<?x?x?x64xf16>, %[[IDS:[a-z0-9]+]]: tensor<128xi32>)
// CHECK:         tensor.dim %[[Q]]
// CHECK:         scf.forall
// CHECK:           tensor.extract %[[IDS]]
// CHECK-LABEL: func.func @docs(
// CHECK:         call @docs_attention(
// CHECK-LABEL: func.func @caller(
// CHECK:         call @docs(
func.func @docs(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %ids: tensor<128xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<128xi32>
    %dj = tensor.extract %ids[%j] : tensor<128xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
func.func @caller(%q: tensor<?x?x?x64xf16>, %ids: tensor<128xi32>) -> tensor<?x?x?x64xf16> {
  %o = call @docs(%q, %q, %q, %ids) : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<128xi32>) -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// A name already taken: the next free suffix.

// CHECK-LABEL: func.func @f_attention(
// CHECK-LABEL: func.func private @f_attention_1(
// CHECK-LABEL: func.func @f(
// CHECK:         call @f_attention_1(
func.func @f_attention() {
  return
}
func.func @f(%q: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  %o = fa.attention %q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

// kv_lens and the page table are data the tiled form reads (tensor.extract
// in the loop): they become arguments of the outlined function, like the
// pools. With dynamic dims, M * S and P - 1 are recomputed inside from them.
// CHECK-LABEL: func.func private @paged_attention(
// CHECK-SAME:      %[[T:[^:]+]]: tensor<?x?xi32>, %{{[^:]+}}: tensor<?x4x1x64xf16>, %[[LENS:[^:]+]]: tensor<?xi32>, %[[K:[^:]+]]: tensor<?x2x16x64xf16>, %{{[^:]+}}: tensor<?x2x16x64xf16>)
// CHECK:         tensor.dim %[[T]], %{{.+}} : tensor<?x?xi32>
// CHECK:         scf.forall
// CHECK:         tensor.extract %[[LENS]][%{{.+}}] : tensor<?xi32>
// CHECK:         tensor.dim %[[K]], %{{.+}} : tensor<?x2x16x64xf16>
// CHECK:         tensor.extract %[[T]][%{{.+}}, %{{.+}}] : tensor<?x?xi32>
// CHECK-LABEL: func.func @paged(
// CHECK-SAME:      %[[Q:[^:]+]]: tensor<?x4x1x64xf16>, %[[KA:[^:]+]]: tensor<?x2x16x64xf16>, %[[VA:[^:]+]]: tensor<?x2x16x64xf16>, %[[LA:[^:]+]]: tensor<?xi32>, %[[TA:[^:]+]]: tensor<?x?xi32>)
// CHECK:         call @paged_attention(%[[TA]], %[[Q]], %[[LA]], %[[KA]], %[[VA]])
func.func @paged(%q: tensor<?x4x1x64xf16>, %k: tensor<?x2x16x64xf16>, %v: tensor<?x2x16x64xf16>,
                 %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x4x1x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal}
      : tensor<?x4x1x64xf16>, tensor<?x2x16x64xf16>, tensor<?x2x16x64xf16> -> tensor<?x4x1x64xf16>
  return %o : tensor<?x4x1x64xf16>
}
