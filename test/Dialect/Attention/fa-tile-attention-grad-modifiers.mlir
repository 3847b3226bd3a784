// RUN: fa-opt %s -split-input-file --fa-decompose-attention-grad -verify-diagnostics | FileCheck %s --check-prefix=REF
// RUN: fa-opt %s -split-input-file '--fa-tile-attention-grad=block-q=4 block-kv=4' -verify-diagnostics | FileCheck %s --check-prefix=TILE

// Both lowerings of fa.attention_grad with a score_mod_grad and a mask_mod:
// P uses score_mod_grad's t (here s * 0.5 + bias[h]) and hides what mask_mod
// or the band hides; dS multiplies in its dt (here sin(s * 0.5), a marker),
// 0 where P = 0. The tiled form evaluates them at (b, h, row0 + i, col0 + j).

// REF-LABEL: func.func @mods
// REF-SAME: %[[BIAS:[^:]+]]: tensor<2xf32>)
// REF: %[[S:.+]] = linalg.generic
// P: the regions at the loops' (b, h, i, j).
// REF: %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %{{.+}} : tensor<1x2x8x8xf32>, tensor<1x2x8xf32>)
// REF: %[[H:.+]] = linalg.index 1 : index
// REF: %[[J:.+]] = linalg.index 3 : index
// REF: %[[U:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// REF: %[[X:.+]] = tensor.extract %[[BIAS]][%[[H]]] : tensor<2xf32>
// REF: %[[T:.+]] = arith.addf %[[U]], %[[X]] : f32
// REF: %[[KEEP:.+]] = arith.cmpi uge, %[[J]], %{{.+}} : index
// REF: %[[VIS:.+]] = arith.andi %[[KEEP]], %{{.+}} : i1
// REF: arith.select %[[VIS]], %[[T]], %{{.+}} : f32
// REF: math.exp
// REF: linalg.yield
// dS: P (dP - delta), times dt, 0 where P = 0, times scale.
// REF: linalg.generic {{.*}} ins(%[[P]], %{{.+}}, %{{.+}}, %[[S]] :
// REF-NEXT: ^bb0(%[[PE:[^:]+]]: f32,
// REF: %[[DST:.+]] = arith.mulf %[[PE]], %{{.+}} : f32
// REF: %[[U2:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// REF: %[[DT:.+]] = math.sin %[[U2]] : f32
// REF: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// REF: %[[UNSEEN:.+]] = arith.cmpf oeq, %[[PE]], %[[ZERO]] : f32
// REF: %[[PROD:.+]] = arith.mulf %[[DST]], %[[DT]] : f32
// REF: %[[DS:.+]] = arith.select %[[UNSEEN]], %[[ZERO]], %[[PROD]] : f32
// REF: arith.mulf %[[DS]], %{{.+}} : f32
// REF: linalg.yield

// TILE-LABEL: func.func @mods
// TILE-SAME: %[[BIAS:[^:]+]]: tensor<2xf32>)
// TILE: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// TILE: scf.for
// TILE: scf.for %[[KB:[^ ]+]] =
// TILE: %[[COL0:.+]] = arith.muli %[[KB]], %{{.+}} : index
// TILE: scf.for %[[HR:[^ ]+]] =
// TILE: %[[HEAD:.+]] = arith.addi %{{.+}}, %[[HR]] : index
// TILE: scf.for %[[QB:[^ ]+]] =
// TILE: %[[ROW0:.+]] = arith.muli %[[QB]], %{{.+}} : index
// TILE: %[[S:.+]] = linalg.generic
// TILE: %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %{{.+}} : tensor<?x?xf32>, tensor<?xf32>)
// The band's distance first, then the regions' (row0 + i, col0 + j).
// TILE: arith.subi %{{.+}}, %{{.+}} : index
// TILE: %[[I:.+]] = linalg.index 0 : index
// TILE-NEXT: arith.addi %[[ROW0]], %[[I]] : index
// TILE-NEXT: %[[JL:.+]] = linalg.index 1 : index
// TILE-NEXT: %[[J:.+]] = arith.addi %[[COL0]], %[[JL]] : index
// TILE: %[[X:.+]] = tensor.extract %[[BIAS]][%[[HEAD]]] : tensor<2xf32>
// TILE: arith.addf %{{.+}}, %[[X]] : f32
// TILE: arith.cmpi uge, %[[J]], %{{.+}} : index
// TILE: math.exp
// TILE: linalg.yield
// TILE: linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<?x?xf32>, tensor<?x4xf32>)
// TILE: linalg.generic {{.*}} ins(%[[P]], %{{.+}}, %{{.+}}, %[[S]] :
// TILE-NEXT: ^bb0(%[[PE:[^:]+]]: f32,
// TILE: %[[DT:.+]] = math.sin %{{.+}} : f32
// TILE: %[[UNSEEN:.+]] = arith.cmpf oeq, %[[PE]], %{{.+}} : f32
// TILE: %[[PROD:.+]] = arith.mulf %{{.+}}, %[[DT]] : f32
// TILE: arith.select %[[UNSEEN]], %{{.+}}, %[[PROD]] : f32
// TILE: linalg.yield
func.func @mods(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %bias: tensor<2xf32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %c2 = arith.constant 2 : index
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %bias[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi uge, %j, %c2 : index
    fa.yield %keep : i1
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %bias[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    %dt = math.sin %s : f32
    fa.yield %t, %dt : f32, f32
  } : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
      tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq, %dk, %dv : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// A score_mod without its derivative: the lowerings read only score_mod_grad.
func.func @no_grad(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{'fa.attention_grad' op has a score_mod without its score_mod_grad (the derivative the backward needs): run fa-differentiate-score-mod first}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.exp %s : f32
    fa.yield %t : f32
  } : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>,
      tensor<1x1x8x4xf32>, tensor<1x1x8xf32>, tensor<1x1x8x4xf32>
      -> tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
  return %dq : tensor<1x1x8x4xf32>
}

// -----

// Block sparsity from mask_mod in the tiled form (prefix-LM: bounded by
// intervals): each tile is guarded by the block's someVisible and passes the
// state through when mask_mod hides all of it; the reference has no tiles.
// REF-LABEL: func.func @prefix_sparsity
// REF-NOT: scf.if
// TILE-LABEL: func.func @prefix_sparsity
// Loops over b, g, the key block, the group's query head, then query blocks.
// TILE-COUNT-4: scf.for
// TILE: scf.for %[[QB:[^ ]+]] = {{.*}} iter_args(%[[DQ:[^ ]+]] = %{{.+}}, %[[DK:[^ ]+]] = %{{.+}}, %[[DV:[^ ]+]] = %{{.+}})
// TILE: %[[SOME:.+]] = arith.ori
// TILE: %{{.+}}:3 = scf.if %[[SOME]] -> (tensor<1x1x16x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
// TILE: math.exp
// TILE: } else {
// TILE-NEXT: scf.yield %[[DQ]], %[[DK]], %[[DV]] :
// A mask_mod the intervals cannot bound (a tensor.extract): no block test.
// TILE-LABEL: func.func @document_no_sparsity
// TILE-NOT: scf.if
// TILE: return
func.func @prefix_sparsity(%q: tensor<1x1x16x4xf32>, %l: tensor<1x1x16xf32>) -> tensor<1x1x16x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 2 : index
    %inp = arith.cmpi slt, %j, %p : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inp, %causal : i1
    fa.yield %keep : i1
  } : tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>,
      tensor<1x1x16x4xf32>, tensor<1x1x16xf32>, tensor<1x1x16x4xf32>
      -> tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>
  return %dq : tensor<1x1x16x4xf32>
}

// -----

func.func @document_no_sparsity(%q: tensor<1x1x16x4xf32>, %l: tensor<1x1x16xf32>, %doc: tensor<16xi32>) -> tensor<1x1x16x4xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<16xi32>
    %dj = tensor.extract %doc[%j] : tensor<16xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>,
      tensor<1x1x16x4xf32>, tensor<1x1x16xf32>, tensor<1x1x16x4xf32>
      -> tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>
  return %dq : tensor<1x1x16x4xf32>
}
