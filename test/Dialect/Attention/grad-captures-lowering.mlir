// RUN: fa-opt %s --fa-differentiate-score-mod '--fa-tile-attention-grad=block-q=4 block-kv=4' | FileCheck %s --check-prefix=TILED
// RUN: fa-opt %s --fa-differentiate-score-mod --fa-decompose-attention-grad | FileCheck %s --check-prefix=REF

// The capture gradients in both CPU lowerings of fa.attention_grad: zero f32
// tensors carried through the loops; per visible score (P != 0: a hidden
// score's indices may be anything), score_mod_grad's terms added as
// dS_t * coefficient at their indices, clamped into the tensor. dS_t =
// P (dP - delta) is the gradient with respect to score_mod's t (before dt).

// TILED-LABEL: func.func @alibi_table
// TILED: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2xf32>) -> tensor<2xf32>
// TILED: scf.for {{.+}} iter_args({{.+}}, %{{.+}} = %[[Z]]) -> (tensor<1x2x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<2xf32>)
// The tile's scores, one by one, after its dS generic:
// TILED: scf.for %[[I:[^ ]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (tensor<2xf32>)
// TILED-NEXT: arith.constant 0
// TILED-NEXT: arith.constant 1
// TILED-NEXT: scf.for %[[J:[^ ]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:[^ ]+]] = %{{.+}}) -> (tensor<2xf32>)
// TILED-NEXT: arith.addi %{{.+}}, %[[I]] : index
// TILED-NEXT: arith.addi %{{.+}}, %[[J]] : index
// TILED-NEXT: %[[S:.+]] = tensor.extract %{{.+}}[%[[I]], %[[J]]] : tensor<?x?xf32>
// TILED-NEXT: arith.constant 2.500000e-01 : f32
// TILED-NEXT: %[[U:.+]] = arith.mulf %[[S]], %{{.+}} : f32
// TILED-NEXT: %[[P:.+]] = tensor.extract %{{.+}}[%[[I]], %[[J]]] : tensor<?x?xf32>
// TILED-NEXT: %[[DP:.+]] = tensor.extract %{{.+}}[%[[I]], %[[J]]] : tensor<?x?xf32>
// TILED-NEXT: %[[DELTA:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<?xf32>
// TILED-NEXT: %[[DIFF:.+]] = arith.subf %[[DP]], %[[DELTA]] : f32
// TILED-NEXT: %[[DST:.+]] = arith.mulf %[[P]], %[[DIFF]] : f32
// TILED: %[[SEEN:.+]] = arith.cmpf one, %[[P]], %{{.+}} : f32
// TILED-NEXT: scf.if %[[SEEN]] -> (tensor<2xf32>) {
// TILED: %[[SL:.+]] = tensor.extract %{{.+}}[%[[H:.+]]] : tensor<2xf32>
// TILED: %[[DF:.+]] = arith.sitofp
// TILED-NEXT: math.fma %[[SL]], %[[DF]], %[[U]] : f32
// TILED: %[[LO:.+]] = arith.maxsi %[[H]], %{{.+}} : index
// TILED-NEXT: %[[AT:.+]] = arith.minsi %[[LO]], %{{.+}} : index
// TILED-NEXT: %[[OLD:.+]] = tensor.extract %[[ACC]][%[[AT]]] : tensor<2xf32>
// TILED-NEXT: %[[NEW:.+]] = math.fma %[[DST]], %[[DF]], %[[OLD]] : f32
// TILED-NEXT: %[[INS:.+]] = tensor.insert %[[NEW]] into %[[ACC]][%[[AT]]] : tensor<2xf32>
// TILED-NEXT: scf.yield %[[INS]] : tensor<2xf32>
// TILED-NEXT: } else {
// TILED-NEXT: scf.yield %[[ACC]] : tensor<2xf32>

// The reference lowering: after its full-size generics, a loop nest over
// (b, h, i, j) reading the full P, dP and delta.
// REF-LABEL: func.func @alibi_table
// REF: scf.for %[[B:[^ ]+]] = {{.+}} -> (tensor<2xf32>)
// REF: scf.for %[[H:[^ ]+]] = {{.+}} -> (tensor<2xf32>)
// REF: scf.for %[[I:[^ ]+]] = {{.+}} -> (tensor<2xf32>)
// REF: scf.for %[[J:[^ ]+]] = {{.+}} iter_args(%[[ACC:[^ ]+]] = %{{.+}}) -> (tensor<2xf32>)
// REF: %[[P:.+]] = tensor.extract %{{.+}}[%[[B]], %[[H]], %[[I]], %[[J]]] : tensor<1x2x8x16xf32>
// REF: arith.cmpf one, %[[P]]
// REF: scf.if
// REF: tensor.insert %{{.+}} into %[[ACC]]
// REF: return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x2x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<2xf32>
func.func @alibi_table(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x16x16xf32>, %o: tensor<1x2x8x16xf32>,
                       %l: tensor<1x2x8xf32>, %slopes: tensor<2xf32>)
    -> (tensor<1x2x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<2xf32>) {
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %k, %o, %l, %o grad_captures(%slopes : tensor<2xf32>) {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %slope, %df, %s : f32
    fa.yield %t : f32
  } : tensor<1x2x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32>
    -> tensor<1x2x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<2xf32>
  return %dq, %dk, %dv, %ds : tensor<1x2x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<2xf32>
}
