// Checks numerically which key/value blocks the tiled form visits, by running
// fa.kv_block_range (expanded to index arithmetic) for every query block.
// Each line prints: begin full_begin full_end end. Blocks [begin, full_begin)
// and [full_end, end) are masked, [full_begin, full_end) unmasked, the rest
// are never visited.
// RUN: fa-opt %s --fa-to-cpu | %mlir_runner | FileCheck %s

func.func @print_range(%b: index, %fb: index, %fe: index, %e: index) {
  vector.print %b : index punctuation <no_punctuation>
  vector.print str ", "
  vector.print %fb : index punctuation <no_punctuation>
  vector.print str ", "
  vector.print %fe : index punctuation <no_punctuation>
  vector.print str ", "
  vector.print %e : index punctuation <no_punctuation>
  vector.print punctuation <newline>
  return
}

// Causal, Nq = Nk = 200, blocks of 64: query block q visits key blocks 0..q,
// only the diagonal one masked: 10 of 16 blocks visited, 4 of them masked.
func.func @causal_square() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 200 : index
  %visited = scf.for %qb = %c0 to %c4 step %c1 iter_args(%count = %c0) -> index {
    %r0 = arith.muli %qb, %c64 : index
    %r64 = arith.addi %r0, %c64 : index
    %r1 = arith.minsi %r64, %n : index
    %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %c0
        {block_kv = 64 : i64, window = array<i64: -1, 0>}
    func.call @print_range(%b, %fb, %fe, %e) : (index, index, index, index) -> ()
    %blocks = arith.subi %e, %b : index
    %next = arith.addi %count, %blocks : index
    scf.yield %next : index
  }
  vector.print %visited : index
  return
}
// CHECK-LABEL: causal square
// CHECK-NEXT: 0, 0, 0, 1
// CHECK-NEXT: 0, 0, 1, 2
// CHECK-NEXT: 0, 0, 2, 3
// CHECK-NEXT: 0, 0, 3, 4
// CHECK-NEXT: 10

// Causal with Nq = 100 > Nk = 17 (diagonal -83), blocks of 64 rows and 16
// keys: rows 0..63 see no key at all and visit nothing.
func.func @causal_more_queries() {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %nk = arith.constant 17 : index
  %diag = arith.constant -83 : index
  %b0, %fb0, %fe0, %e0 = fa.kv_block_range rows [%c0, %c64) keys %nk diagonal %diag
      {block_kv = 16 : i64, window = array<i64: -1, 0>}
  func.call @print_range(%b0, %fb0, %fe0, %e0) : (index, index, index, index) -> ()
  %b1, %fb1, %fe1, %e1 = fa.kv_block_range rows [%c64, %c100) keys %nk diagonal %diag
      {block_kv = 16 : i64, window = array<i64: -1, 0>}
  func.call @print_range(%b1, %fb1, %fe1, %e1) : (index, index, index, index) -> ()
  return
}
// CHECK-LABEL: causal more queries
// CHECK-NEXT: 0, 0, 0, 0
// CHECK-NEXT: 0, 0, 0, 2

// Sliding window (20, 5), Nq = 100, Nk = 257 (diagonal 157), blocks of 32:
// rows 0..31 see keys 137..193, i.e. blocks 4..6, none fully.
// Rows 64..95 see keys 201..257 (clamped to 256): blocks 6..8.
func.func @window() {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %nk = arith.constant 257 : index
  %diag = arith.constant 157 : index
  %b0, %fb0, %fe0, %e0 = fa.kv_block_range rows [%c0, %c32) keys %nk diagonal %diag
      {block_kv = 32 : i64, window = array<i64: 20, 5>}
  func.call @print_range(%b0, %fb0, %fe0, %e0) : (index, index, index, index) -> ()
  %b1, %fb1, %fe1, %e1 = fa.kv_block_range rows [%c64, %c96) keys %nk diagonal %diag
      {block_kv = 32 : i64, window = array<i64: 20, 5>}
  func.call @print_range(%b1, %fb1, %fe1, %e1) : (index, index, index, index) -> ()
  return
}
// CHECK-LABEL: window
// CHECK-NEXT: 4, 6, 6, 7
// CHECK-NEXT: 6, 8, 8, 9

// A wide window (left 100) over 64-row blocks of 32 keys: the middle blocks
// are fully visible and unmasked. Rows 128..191, Nq = Nk = 256, causal:
// visible keys 28..191; fully visible 91..128.
func.func @wide_window() {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c192 = arith.constant 192 : index
  %nk = arith.constant 256 : index
  %b, %fb, %fe, %e = fa.kv_block_range rows [%c128, %c192) keys %nk diagonal %c0
      {block_kv = 32 : i64, window = array<i64: 100, 0>}
  func.call @print_range(%b, %fb, %fe, %e) : (index, index, index, index) -> ()
  return
}
// CHECK-LABEL: wide window
// CHECK-NEXT: 0, 3, 4, 6

// Window bounds at INT64_MAX, diagonal -83 (Nq = 100 > Nk = 17), blocks of
// 16 keys: every block is fully visible for rows 0..63 (no left edge in
// reach, and the right one is past Nk). Without the clamp to 2^62,
// diagonal - left and diagonal + right + 1 wrapped around and hid every block.
func.func @int64_max_window() {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %nk = arith.constant 17 : index
  %diag = arith.constant -83 : index
  %b, %fb, %fe, %e = fa.kv_block_range rows [%c0, %c64) keys %nk diagonal %diag
      {block_kv = 16 : i64,
       window = array<i64: 9223372036854775807, 9223372036854775807>}
  func.call @print_range(%b, %fb, %fe, %e) : (index, index, index, index) -> ()
  // Left edge at INT64_MAX, right edge 0 (causal): rows 0..63 see nothing.
  %b1, %fb1, %fe1, %e1 = fa.kv_block_range rows [%c0, %c64) keys %nk diagonal %diag
      {block_kv = 16 : i64, window = array<i64: 9223372036854775807, 0>}
  func.call @print_range(%b1, %fb1, %fe1, %e1) : (index, index, index, index) -> ()
  return
}
// CHECK-LABEL: int64 max window
// CHECK-NEXT: 0, 0, 2, 2
// CHECK-NEXT: 0, 0, 0, 0

// One block of INT64_MAX keys, causal, rows 64..99 of the case above: the
// one block is visible and masked (ceildiv(Nk, block) must not overflow).
func.func @int64_max_block() {
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %nk = arith.constant 17 : index
  %diag = arith.constant -83 : index
  %b, %fb, %fe, %e = fa.kv_block_range rows [%c64, %c100) keys %nk diagonal %diag
      {block_kv = 9223372036854775807 : i64, window = array<i64: -1, 0>}
  func.call @print_range(%b, %fb, %fe, %e) : (index, index, index, index) -> ()
  return
}
// CHECK-LABEL: int64 max block
// CHECK-NEXT: 0, 0, 0, 1

func.func @main() {
  vector.print str "causal square\n"
  func.call @causal_square() : () -> ()
  vector.print str "causal more queries\n"
  func.call @causal_more_queries() : () -> ()
  vector.print str "window\n"
  func.call @window() : () -> ()
  vector.print str "wide window\n"
  func.call @wide_window() : () -> ()
  vector.print str "int64 max window\n"
  func.call @int64_max_window() : () -> ()
  vector.print str "int64 max block\n"
  func.call @int64_max_block() : () -> ()
  return
}
