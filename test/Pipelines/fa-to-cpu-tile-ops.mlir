// RUN: fa-opt %s --fa-to-cpu=reference=1 | FileCheck %s --implicit-check-not=fa.
// RUN: fa-opt %s --fa-to-cpu | FileCheck %s --implicit-check-not=fa.

// Tile ops outside a tiled attention are lowered by both branches of
// fa-to-cpu. reference=1 used to exit 0 with them left in its output (found
// by fa-fuzz once the seeds' pipeline round robin gave it
// invalid-stray-tile-op.mlir's @stray_range).
// CHECK-LABEL: llvm.func @stray_range
// CHECK: llvm.return
func.func @stray_range(%r0: index, %r1: index, %nk: index, %d: index) -> index {
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %nk diagonal %d
      {block_kv = 16 : i64, window = array<i64: -1, 0>}
  return %e : index
}
