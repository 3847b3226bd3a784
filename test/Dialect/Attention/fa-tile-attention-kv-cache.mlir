// RUN: fa-opt %s --fa-tile-attention="block-q=32 block-kv=64" --cse --split-input-file | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_80 --cse --split-input-file | FileCheck %s --check-prefix=CHIP

// The tiled form of fa.attention with kv_lens(...) and pages(...)
// (docs/TiledForm.md): per sequence, L_b = clamp(kv_lens[b], 0, Ncap) replaces
// the key count and L_b - Nq the default diagonal; with pages each key step
// reads gcd(block-kv, S) rows of the page the table names, clamped into the pool.

// kv_lens alone, causal: the key slices are today's; the key count and the
// diagonal are the sequence's.
// CHECK-LABEL: func.func @kv_lens_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x32xf16>, %[[K:.+]]: tensor<2x2x100x32xf16>, %[[V:.+]]: tensor<2x2x100x32xf16>, %[[LENS:.+]]: tensor<2xi32>)
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C100:.+]] = arith.constant 100 : index
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %{{.+}} : index
// CHECK: %[[G:.+]] = arith.divui %[[H]], %{{.+}} : index
// CHECK: %[[L32:.+]] = tensor.extract %[[LENS]][%[[B]]] : tensor<2xi32>
// CHECK: %[[L:.+]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[LP:.+]] = arith.maxsi %[[L]], %[[C0]] : index
// CHECK: %[[NK:.+]] = arith.minsi %[[LP]], %[[C100]] : index
// CHECK: %[[DIAG:.+]] = arith.subi %[[NK]], %[[C8]] : index
// CHECK: fa.kv_block_range rows[%[[ROW0]], %{{.+}}) keys %[[NK]] diagonal %[[DIAG]] {block_kv = 64 : i64, window = array<i64: -1, 0>}
// CHECK: scf.for %[[KB:[^ ]+]] =
// CHECK: %[[START:.+]] = arith.muli %[[KB]], %[[C64:.+]] : index
// CHECK: %[[REST:.+]] = arith.subi %[[NK]], %[[START]] : index
// CHECK: %[[ROWS:.+]] = arith.minsi %[[C64]], %[[REST]] : index
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[G]], %[[START]], 0] [1, 1, %[[ROWS]], 32] [1, 1, 1, 1] : tensor<2x2x100x32xf16> to tensor<?x32xf16>
// CHECK: tensor.extract_slice %[[V]][%[[B]], %[[G]], %[[START]], 0] [1, 1, %[[ROWS]], 32] [1, 1, 1, 1]
// CHECK: fa.online_attention {{.+}} positions(%[[ROW0]], %[[START]], %[[DIAG]])
func.func @kv_lens_causal(%q: tensor<2x4x8x32xf16>, %k: tensor<2x2x100x32xf16>, %v: tensor<2x2x100x32xf16>,
                          %lens: tensor<2xi32>) -> tensor<2x4x8x32xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) {causal}
      : tensor<2x4x8x32xf16>, tensor<2x2x100x32xf16>, tensor<2x2x100x32xf16> -> tensor<2x4x8x32xf16>
  return %o : tensor<2x4x8x32xf16>
}

// -----

// Paged decode, S = 16 < block-kv = 64: steps of gcd(64, 16) = 16 keys, one
// page each (offset 0 in it). Ncap = 8 * 16 = 128; P - 1 = 39.
// CHECK-LABEL: func.func @paged_decode
// CHECK-SAME: (%[[Q:.+]]: tensor<3x8x1x64xf16>, %[[K:.+]]: tensor<40x2x16x64xf16>, %[[V:.+]]: tensor<40x2x16x64xf16>, %[[LENS:.+]]: tensor<3xi32>, %[[T:.+]]: tensor<3x8xi32>)
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[G:.+]] = arith.divui %[[H]], %{{.+}} : index
// CHECK: %[[L32:.+]] = tensor.extract %[[LENS]][%[[B]]] : tensor<3xi32>
// CHECK: %[[L:.+]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[LP:.+]] = arith.maxsi %[[L]], %[[C0:.+]] : index
// CHECK: %[[NK:.+]] = arith.minsi %[[LP]], %[[C128]] : index
// CHECK: %[[DIAG:.+]] = arith.subi %[[NK]], %{{.+}} : index
// CHECK: %[[LAST:.+]] = arith.constant 39 : index
// CHECK: fa.kv_block_range rows[%{{.+}}, %{{.+}}) keys %[[NK]] diagonal %[[DIAG]] {block_kv = 16 : i64, window = array<i64: -1, 0>}
// CHECK: scf.for %[[KB:[^ ]+]] =
// CHECK: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[START:.+]] = arith.muli %[[KB]], %[[C16]] : index
// CHECK: %[[REST:.+]] = arith.subi %[[NK]], %[[START]] : index
// CHECK: %[[ROWS:.+]] = arith.minsi %[[C16]], %[[REST]] : index
// CHECK: %[[PI:.+]] = arith.divui %[[START]], %[[C16]] : index
// CHECK: %[[PO:.+]] = arith.remui %[[START]], %[[C16]] : index
// CHECK: %[[P32:.+]] = tensor.extract %[[T]][%[[B]], %[[PI]]] : tensor<3x8xi32>
// CHECK: %[[P:.+]] = arith.index_cast %[[P32]] : i32 to index
// CHECK: %[[PM:.+]] = arith.maxsi %[[P]], %[[C0]] : index
// CHECK: %[[PC:.+]] = arith.minsi %[[PM]], %[[LAST]] : index
// CHECK: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[PC]], %[[G]], %[[PO]], 0] [1, 1, %[[ROWS]], 64] [1, 1, 1, 1] : tensor<40x2x16x64xf16> to tensor<?x64xf16>
// CHECK: %[[VS:.+]] = tensor.extract_slice %[[V]][%[[PC]], %[[G]], %[[PO]], 0] [1, 1, %[[ROWS]], 64] [1, 1, 1, 1] : tensor<40x2x16x64xf16> to tensor<?x64xf16>
// CHECK: fa.online_attention %{{.+}}, %[[KS]], %[[VS]] into {{.+}} positions(%{{.+}}, %[[START]], %[[DIAG]])

// CHIP-LABEL: func.func @paged_decode
// CHIP: tensor.extract %{{.+}}[%{{.+}}] : tensor<3xi32>
// CHIP: fa.kv_block_range {{.+}} {block_kv = 16 : i64
// CHIP: arith.divui %{{.+}}, %[[CS:.+]] : index
// CHIP: arith.remui %{{.+}}, %[[CS]] : index
// CHIP: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<3x8xi32>
func.func @paged_decode(%q: tensor<3x8x1x64xf16>, %k: tensor<40x2x16x64xf16>, %v: tensor<40x2x16x64xf16>,
                        %lens: tensor<3xi32>, %table: tensor<3x8xi32>) -> tensor<3x8x1x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<3xi32>) pages(%table : tensor<3x8xi32>) {causal}
      : tensor<3x8x1x64xf16>, tensor<40x2x16x64xf16>, tensor<40x2x16x64xf16> -> tensor<3x8x1x64xf16>
  return %o : tensor<3x8x1x64xf16>
}

// -----

// Pages without kv_lens and without a window: one loop over ceildiv(Ncap,
// 64) steps of 64 keys, two per page of S = 128 (offset start mod 128).
// CHECK-LABEL: func.func @paged_no_lens
// CHECK-SAME: (%{{.+}}: tensor<2x2x8x32xf32>, %[[K:.+]]: tensor<5x2x128x32xf32>, %{{.+}}: tensor<5x2x128x32xf32>, %[[T:.+]]: tensor<2x3xi32>)
// CHECK-DAG: %[[CAP:.+]] = arith.constant 384 : index
// CHECK: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// CHECK-NOT: tensor.extract %{{.+}}[%[[B]]] :
// CHECK: %[[LAST:.+]] = arith.constant 4 : index
// CHECK: %[[N:.+]] = arith.ceildivsi %[[CAP]], %[[C64:.+]] : index
// CHECK: scf.for %[[KB:[^ ]+]] = %{{.+}} to %[[N]]
// CHECK: %[[START:.+]] = arith.muli %[[KB]], %[[C64]] : index
// CHECK: arith.subi %[[CAP]], %[[START]] : index
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: arith.divui %[[START]], %[[C128]] : index
// CHECK: %[[PO:.+]] = arith.remui %[[START]], %[[C128]] : index
// CHECK: tensor.extract %[[T]][%[[B]], %{{.+}}] : tensor<2x3xi32>
// CHECK: %[[PC:.+]] = arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK: tensor.extract_slice %[[K]][%[[PC]], %{{.+}}, %[[PO]], 0] [1, 1, %{{.+}}, 32] [1, 1, 1, 1]
func.func @paged_no_lens(%q: tensor<2x2x8x32xf32>, %k: tensor<5x2x128x32xf32>, %v: tensor<5x2x128x32xf32>,
                         %table: tensor<2x3xi32>) -> tensor<2x2x8x32xf32> {
  %o = fa.attention %q, %k, %v pages(%table : tensor<2x3xi32>)
      : tensor<2x2x8x32xf32>, tensor<5x2x128x32xf32>, tensor<5x2x128x32xf32> -> tensor<2x2x8x32xf32>
  return %o : tensor<2x2x8x32xf32>
}

// -----

// Dynamic pool and pages per sequence: Ncap = M * S and P - 1 from the dims.
// CHECK-LABEL: func.func @paged_dynamic
// CHECK-SAME: (%{{.+}}: tensor<?x4x?x32xbf16>, %[[K:.+]]: tensor<?x4x32x32xbf16>, %{{.+}}: tensor<?x4x32x32xbf16>, %[[LENS:.+]]: tensor<?xi32>, %[[T:.+]]: tensor<?x?xi32>)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[M:.+]] = tensor.dim %[[T]], %[[C1]] : tensor<?x?xi32>
// CHECK-DAG: %[[CAP:.+]] = arith.muli %[[M]], %[[C32]] : index
// CHECK-DAG: %[[P:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x4x32x32xbf16>
// CHECK: cf.assert %{{.+}}, "fa.attention: value page count differs from the key's"
// CHECK: cf.assert %{{.+}}, "fa.attention: the page pool must hold at least one page"
// CHECK: cf.assert %{{.+}}, "fa.attention: page table batch size differs from the query's"
// CHECK: cf.assert %{{.+}}, "fa.attention: kv_lens size differs from the query's batch size"
// CHECK: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// CHECK: %[[L32:.+]] = tensor.extract %[[LENS]][%[[B]]] : tensor<?xi32>
// CHECK: %[[NK:.+]] = arith.minsi %{{.+}}, %[[CAP]] : index
// CHECK: %[[LAST:.+]] = arith.subi %[[P]], %[[C1]] : index
// CHECK: arith.ceildivsi %[[NK]], %[[C32]] : index
// CHECK: tensor.extract %[[T]][%[[B]], %{{.+}}] : tensor<?x?xi32>
// CHECK: arith.minsi %{{.+}}, %[[LAST]] : index
func.func @paged_dynamic(%q: tensor<?x4x?x32xbf16>, %k: tensor<?x4x32x32xbf16>, %v: tensor<?x4x32x32xbf16>,
                         %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x4x?x32xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>)
      : tensor<?x4x?x32xbf16>, tensor<?x4x32x32xbf16>, tensor<?x4x32x32xbf16> -> tensor<?x4x?x32xbf16>
  return %o : tensor<?x4x?x32xbf16>
}

// -----

// An explicit diagonal stays absolute: kv_lens only bounds the keys.
// CHECK-LABEL: func.func @kv_lens_explicit_diagonal
// CHECK-SAME: %[[D:[^:]+]]: index)
// CHECK: scf.forall
// CHECK: tensor.extract
// CHECK: arith.index_cast
// CHECK: arith.maxsi
// CHECK: %[[NK:.+]] = arith.minsi
// CHECK-NOT: arith.subi %[[NK]]
// CHECK: fa.kv_block_range rows[%{{.+}}, %{{.+}}) keys %[[NK]] diagonal %[[D]]
func.func @kv_lens_explicit_diagonal(%q: tensor<2x4x8x32xf16>, %k: tensor<2x2x100x32xf16>, %v: tensor<2x2x100x32xf16>,
                                     %lens: tensor<2xi32>, %d: index) -> tensor<2x4x8x32xf16> {
  %o = fa.attention %q, %k, %v diagonal(%d) kv_lens(%lens : tensor<2xi32>) {window = array<i64: 4, 0>}
      : tensor<2x4x8x32xf16>, tensor<2x2x100x32xf16>, tensor<2x2x100x32xf16> -> tensor<2x4x8x32xf16>
  return %o : tensor<2x4x8x32xf16>
}
