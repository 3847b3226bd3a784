// Tiling fa.attention with score_mod / mask_mod regions through TilingInterface
// keeps their meaning: the regions of each tile see absolute (b, h, i). The
// regions below depend on all of b, h, i and j; the op is tiled over
// (batch, head, row) = (1, 2, 8) (offsets in every dim) and lowered with
// fa-to-cpu (tiled form) next to the untiled op, and with the reference
// lowering; the outputs and log-sum-exps are compared.
//
// RUN: split-file %s %t
// RUN: fa-opt %t/payload.mlir \
// RUN:   --transform-preload-library=transform-library-paths=%t/schedule.mlir \
// RUN:   --transform-interpreter --fa-to-cpu \
// RUN: | %mlir_runner | FileCheck %s
// RUN: fa-opt %t/payload.mlir \
// RUN:   --transform-preload-library=transform-library-paths=%t/schedule.mlir \
// RUN:   --transform-interpreter --fa-to-cpu=reference=1 \
// RUN: | %mlir_runner | FileCheck %s
// RUN: fa-opt %t/payload.mlir \
// RUN:   --transform-preload-library=transform-library-paths=%t/schedule.mlir \
// RUN:   --transform-interpreter | FileCheck %s --check-prefix=TILED

// The schedule did tile what is compared, and shifted b, h and i:
// TILED-LABEL: func.func @mods_tiled
// TILED: scf.forall ({{.+}}) in (2, 2, 3)
// TILED: fa.attention {{.+}} score_mod {
// TILED-COUNT-3: arith.addi
// TILED: } mask_mod {
// TILED-COUNT-3: arith.addi
// TILED: } : tensor<1x2x8x16xf32>, tensor<1x1x40x16xf32>

// Tiles whose regions saw tile-relative positions (b, h, i without the
// offsets) would differ far beyond 1e-5. The mask_mod hides every key of the
// rows with (b + h + i) mod 5 == 0: their lse is -inf in both, which
// max_abs_diff3 counts as equal.
// CHECK: sum |out|: {{[1-9][0-9]*\.[0-9]+}}
// CHECK-NEXT: max |out diff|: {{.+}}
// CHECK-NEXT: out matches: 1
// CHECK-NEXT: max |lse diff|: {{.+}}
// CHECK-NEXT: lse matches: 1

//--- schedule.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(
      %root: !transform.any_op {transform.readonly}) {
    %fn = transform.structured.match ops{["func.func"]}
        attributes {sym_name = "mods_tiled"} in %root
        : (!transform.any_op) -> !transform.any_op
    %op = transform.structured.match ops{["fa.attention"]} in %fn
        : (!transform.any_op) -> !transform.any_op
    %t0, %l0 = transform.structured.tile_using_forall %op
        tile_sizes [1, 2, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

//--- payload.mlir
!q = tensor<2x4x24x16xf32>
!k = tensor<2x2x40x16xf32>
!v = tensor<2x2x40x8xf32>
!o = tensor<2x4x24x8xf32>
!l = tensor<2x4x24xf32>

func.func @mods(%q: !q, %k: !k, %v: !v) -> (!o, !l) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %true = arith.constant true
  %o, %l = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = arith.muli %b, %c7 : index
    %y = arith.addi %x, %h : index
    %z = arith.subi %j, %i : index
    %w = arith.addi %y, %z : index
    %wi = arith.index_cast %w : index to i64
    %wf = arith.sitofp %wi : i64 to f32
    %eighth = arith.constant 0.125 : f32
    %bias = arith.mulf %wf, %eighth : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %x = arith.addi %b, %h : index
    %y = arith.addi %x, %i : index
    %r = arith.remui %y, %c5 : index
    %hide = arith.cmpi eq, %r, %c0 : index
    %c30 = arith.constant 30 : index
    %far = arith.cmpi ult, %j, %c30 : index
    %keep0 = arith.xori %hide, %true : i1
    %keep = arith.andi %keep0, %far : i1
    fa.yield %keep : i1
  } : !q, !k, !v -> (!o, !l)
  return %o, %l : !o, !l
}
func.func @mods_tiled(%q: !q, %k: !k, %v: !v) -> (!o, !l) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %true = arith.constant true
  %o, %l = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = arith.muli %b, %c7 : index
    %y = arith.addi %x, %h : index
    %z = arith.subi %j, %i : index
    %w = arith.addi %y, %z : index
    %wi = arith.index_cast %w : index to i64
    %wf = arith.sitofp %wi : i64 to f32
    %eighth = arith.constant 0.125 : f32
    %bias = arith.mulf %wf, %eighth : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %x = arith.addi %b, %h : index
    %y = arith.addi %x, %i : index
    %r = arith.remui %y, %c5 : index
    %hide = arith.cmpi eq, %r, %c0 : index
    %c30 = arith.constant 30 : index
    %far = arith.cmpi ult, %j, %c30 : index
    %keep0 = arith.xori %hide, %true : i1
    %keep = arith.andi %keep0, %far : i1
    fa.yield %keep : i1
  } : !q, !k, !v -> (!o, !l)
  return %o, %l : !o, !l
}

// Deterministic inputs in [-0.5, 0.5): ((7a + 13b + 3c + 5d + seed) mod 17) / 17 - 0.5.
func.func @fill(%seed: index) -> tensor<2x4x40x16xf32> {
  %t = tensor.generate {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c13 = arith.constant 13 : index
    %c17 = arith.constant 17 : index
    %x0 = arith.muli %a, %c7 : index
    %x1 = arith.muli %b, %c13 : index
    %x2 = arith.muli %c, %c3 : index
    %x3 = arith.muli %d, %c5 : index
    %s0 = arith.addi %x0, %x1 : index
    %s1 = arith.addi %s0, %x2 : index
    %s2 = arith.addi %s1, %x3 : index
    %s3 = arith.addi %s2, %seed : index
    %m = arith.remui %s3, %c17 : index
    %i = arith.index_cast %m : index to i32
    %f = arith.sitofp %i : i32 to f32
    %inv = arith.constant 0.0588235296 : f32
    %half = arith.constant 0.5 : f32
    %g = arith.mulf %f, %inv : f32
    %r = arith.subf %g, %half : f32
    tensor.yield %r : f32
  } : tensor<2x4x40x16xf32>
  return %t : tensor<2x4x40x16xf32>
}

// max |a - b| over a tensor, and sum |a|.
func.func @max_abs_diff4(%a: !o, %b: !o) -> f32 {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                       affine_map<(a, b, c, d) -> (a, b, c, d)>,
                       affine_map<(a, b, c, d) -> ()>],
      iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : !o, !o) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %n = arith.maximumf %m, %ad : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %e = tensor.extract %r[] : tensor<f32>
  return %e : f32
}
func.func @max_abs_diff3(%a: !l, %b: !l) -> f32 {
  // Fully masked rows: -inf in both counts as equal.
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>,
                       affine_map<(a, b, c) -> (a, b, c)>,
                       affine_map<(a, b, c) -> ()>],
      iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%a, %b : !l, !l) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %same = arith.cmpf oeq, %x, %y : f32
    %zero0 = arith.constant 0.0 : f32
    %ad0 = arith.select %same, %zero0, %ad : f32
    %n = arith.maximumf %m, %ad0 : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %e = tensor.extract %r[] : tensor<f32>
  return %e : f32
}
func.func @sum_abs(%a: !o) -> f32 {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                       affine_map<(a, b, c, d) -> ()>],
      iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a : !o) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %ax = math.absf %x : f32
    %n = arith.addf %m, %ax : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %e = tensor.extract %r[] : tensor<f32>
  return %e : f32
}

// Prints both differences, and whether each is below 1e-5.
func.func @report(%out_diff: f32, %lse_diff: f32) {
  %tol = arith.constant 1.0e-5 : f32
  %out_ok = arith.cmpf olt, %out_diff, %tol : f32
  %lse_ok = arith.cmpf olt, %lse_diff, %tol : f32
  vector.print str "max |out diff|: "
  vector.print %out_diff : f32
  vector.print str "out matches: "
  vector.print %out_ok : i1
  vector.print str "max |lse diff|: "
  vector.print %lse_diff : f32
  vector.print str "lse matches: "
  vector.print %lse_ok : i1
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %qs = call @fill(%c0) : (index) -> tensor<2x4x40x16xf32>
  %ks = call @fill(%c1) : (index) -> tensor<2x4x40x16xf32>
  %vs = call @fill(%c2) : (index) -> tensor<2x4x40x16xf32>
  %q = tensor.extract_slice %qs[0, 0, 0, 0] [2, 4, 24, 16] [1, 1, 1, 1]
      : tensor<2x4x40x16xf32> to !q
  %k = tensor.extract_slice %ks[0, 0, 0, 0] [2, 2, 40, 16] [1, 1, 1, 1]
      : tensor<2x4x40x16xf32> to !k
  %v = tensor.extract_slice %vs[0, 0, 0, 0] [2, 2, 40, 8] [1, 1, 1, 1]
      : tensor<2x4x40x16xf32> to !v

  %o0, %l0 = call @mods(%q, %k, %v) : (!q, !k, !v) -> (!o, !l)
  %o1, %l1 = call @mods_tiled(%q, %k, %v) : (!q, !k, !v) -> (!o, !l)
  %sum = call @sum_abs(%o0) : (!o) -> f32
  %do = call @max_abs_diff4(%o0, %o1) : (!o, !o) -> f32
  %dl = call @max_abs_diff3(%l0, %l1) : (!l, !l) -> f32
  vector.print str "sum |out|: "
  vector.print %sum : f32
  call @report(%do, %dl) : (f32, f32) -> ()
  return
}
