// RUN: fa-opt %s --fa-tile-attention="block-q=32 block-kv=16 mask-mod-sparsity=1" --split-input-file | FileCheck %s

// Block sparsity from mask_mod: each step is guarded by the classification of
// its block [row0, row0 + rows) x [col0, col0 + cols): skipped when no key is
// visible, without mask_mod when every key is. The loop structure (one loop
// here, three with causal/window) is unchanged.

// Prefix-LM (j < 8 or j <= i): index arithmetic, bounded by intervals.
// CHECK-LABEL: func.func @prefix_lm
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %{{.+}} : index
// CHECK: %[[ROWS:.+]] = arith.minsi
// CHECK: scf.for %[[KB:[a-zA-Z0-9_]+]] = {{.+}} iter_args(%[[M:[a-zA-Z0-9_]+]] = %{{.+}}, %[[L:[a-zA-Z0-9_]+]] = %{{.+}}, %[[A:[a-zA-Z0-9_]+]] = %{{.+}})
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]], %{{.+}} : index
// CHECK: %[[COLS:.+]] = arith.minsi
// CHECK: %[[ROW1:.+]] = arith.addi %[[ROW0]], %[[ROWS]] : index
// CHECK: %[[COL1:.+]] = arith.addi %[[COL0]], %[[COLS]] : index
// The bounds: i in [row0, row1 - 1], j in [col0, col1 - 1].
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: %[[IHI:.+]] = arith.subi %[[ROW1]], %[[ONE]] : index
// CHECK: %[[JHI:.+]] = arith.subi %[[COL1]], %[[ONE]] : index
// CHECK: %[[P:.+]] = arith.constant 8 : index
// j < 8 may be true iff col0 < 8, may be false iff 8 <= j_hi.
// CHECK: %[[PT:.+]] = arith.cmpi slt, %[[COL0]], %[[P]] : index
// CHECK: %[[PF:.+]] = arith.cmpi sle, %[[P]], %[[JHI]] : index
// j <= i may be true iff col0 <= i_hi, may be false iff row0 < j_hi.
// CHECK: %[[CT:.+]] = arith.cmpi sle, %[[COL0]], %[[IHI]] : index
// CHECK: %[[CF:.+]] = arith.cmpi slt, %[[ROW0]], %[[JHI]] : index
// CHECK: %[[SOME:.+]] = arith.ori %[[PT]], %[[CT]] : i1
// CHECK: %[[NONE:.+]] = arith.andi %[[PF]], %[[CF]] : i1
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: %[[ALL:.+]] = arith.xori %[[NONE]], %[[TRUE]] : i1
// CHECK: %[[R:.+]]:3 = scf.if %[[SOME]] -> (tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>) {
// CHECK-NEXT: %[[RF:.+]]:3 = scf.if %[[ALL]] -> (tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>) {
// A full block: no region left, no coords.
// CHECK-NEXT: %[[S1M:.+]], %[[S1L:.+]], %[[S1A:.+]] = fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %[[M]], %[[L]], %[[A]] {scale = {{.+}}} : tensor<?x8xf32>
// CHECK-NEXT: scf.yield %[[S1M]], %[[S1L]], %[[S1A]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[S2M:.+]], %[[S2L:.+]], %[[S2A:.+]] = fa.online_attention {{.+}} into %[[M]], %[[L]], %[[A]] coords(%[[B]], %[[H]], %[[ROW0]], %[[COL0]]) {scale = {{.+}}} mask_mod {
// CHECK: fa.yield
// CHECK-NEXT: } : tensor<?x8xf32>
// CHECK-NEXT: scf.yield %[[S2M]], %[[S2L]], %[[S2A]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[RF]]#0, %[[RF]]#1, %[[RF]]#2
// CHECK-NEXT: } else {
// An empty block: the state passes through.
// CHECK-NEXT: scf.yield %[[M]], %[[L]], %[[A]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @prefix_lm(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>,
                     %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 8 : index
    %inp = arith.cmpi slt, %j, %p : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inp, %causal : i1
    fa.yield %keep : i1
  } : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
  return %o : tensor<1x2x64x8xf32>
}

// -----

// Document ids read with tensor.extract cannot be bounded: the block's
// visibility is computed at run time by evaluating the region over the block.
// With a score_mod, the step of a full block keeps it (and coords).
// CHECK-LABEL: func.func @document
// CHECK-SAME: %[[DOC:[a-zA-Z0-9_]+]]: tensor<64xi32>
// CHECK: scf.for %[[KB:[a-zA-Z0-9_]+]] = {{.+}} iter_args(
// CHECK: %[[ROW1:.+]] = arith.addi %[[ROW0:.+]], %{{.+}} : index
// CHECK: %[[COL1:.+]] = arith.addi %[[COL0:.+]], %{{.+}} : index
// CHECK: %[[F:.+]] = arith.constant false
// CHECK: %[[T:.+]] = arith.constant true
// CHECK: %[[VIS:[a-zA-Z0-9_]+]]:2 = scf.for %[[I:[a-zA-Z0-9_]+]] = %[[ROW0]] to %[[ROW1]] step %{{.+}} iter_args(%[[ANY:[a-zA-Z0-9_]+]] = %[[F]], %[[EVERY:[a-zA-Z0-9_]+]] = %[[T]]) -> (i1, i1) {
// CHECK: %[[VISJ:[a-zA-Z0-9_]+]]:2 = scf.for %[[J:[a-zA-Z0-9_]+]] = %[[COL0]] to %[[COL1]] step %{{.+}} iter_args(%[[ANY2:[a-zA-Z0-9_]+]] = %[[ANY]], %[[EVERY2:[a-zA-Z0-9_]+]] = %[[EVERY]]) -> (i1, i1) {
// CHECK: %[[DI:.+]] = tensor.extract %[[DOC]][%[[I]]] : tensor<64xi32>
// CHECK: %[[DJ:.+]] = tensor.extract %[[DOC]][%[[J]]] : tensor<64xi32>
// CHECK: %[[KEEP:.+]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK: %[[OR:.+]] = arith.ori %[[ANY2]], %[[KEEP]] : i1
// CHECK: %[[AND:.+]] = arith.andi %[[EVERY2]], %[[KEEP]] : i1
// CHECK: scf.yield %[[OR]], %[[AND]] : i1, i1
// CHECK: scf.if %[[VIS]]#0
// CHECK: scf.if %[[VIS]]#1
// CHECK: fa.online_attention {{.+}} coords({{.+}}) {scale = {{.+}}} score_mod {
// CHECK: fa.yield %{{.+}} : f32
// CHECK-NEXT: } : tensor<?x8xf32>
// CHECK: } else {
// CHECK: fa.online_attention {{.+}} coords({{.+}}) {scale = {{.+}}} score_mod {
// CHECK: } mask_mod {
func.func @document(%q: tensor<1x1x64x8xf32>, %k: tensor<1x1x64x8xf32>,
                    %v: tensor<1x1x64x8xf32>, %doc: tensor<64xi32>) -> tensor<1x1x64x8xf32> {
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %half = arith.constant 0.5 : f32
    %t = arith.mulf %s, %half : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<64xi32>
    %dj = tensor.extract %doc[%j] : tensor<64xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    fa.yield %same : i1
  } : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %o : tensor<1x1x64x8xf32>
}

// -----

// A captured index (the prefix length, an argument) is one value over the
// block: still bounded, no run-time loop.
// CHECK-LABEL: func.func @captured_prefix
// CHECK-SAME: %[[P:[a-zA-Z0-9_]+]]: index)
// CHECK-NOT: -> (i1, i1)
// CHECK: scf.for %[[KB:[a-zA-Z0-9_]+]] =
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]]
// CHECK: arith.cmpi slt, %[[COL0]], %[[P]] : index
// CHECK-NOT: -> (i1, i1)
// CHECK: scf.if
func.func @captured_prefix(%q: tensor<1x1x64x8xf32>, %k: tensor<1x1x64x8xf32>,
                           %v: tensor<1x1x64x8xf32>, %p: index) -> tensor<1x1x64x8xf32> {
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %inp = arith.cmpi slt, %j, %p : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inp, %causal : i1
    fa.yield %keep : i1
  } : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %o : tensor<1x1x64x8xf32>
}

// -----

// Without a mask_mod nothing changes.
// CHECK-LABEL: func.func @score_mod_only
// CHECK-NOT: scf.if
// CHECK: fa.online_attention {{.+}} score_mod {
// CHECK-NOT: scf.if
func.func @score_mod_only(%q: tensor<1x1x64x8xf32>, %k: tensor<1x1x64x8xf32>,
                          %v: tensor<1x1x64x8xf32>) -> tensor<1x1x64x8xf32> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %o : tensor<1x1x64x8xf32>
}
