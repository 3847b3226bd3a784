// RUN: fa-opt %s --fa-tile-attention="block-q=32 block-kv=64" --cse | FileCheck %s

// The tiled form of fa.attention with varlen(...) (docs/TiledForm.md): the
// forall's batch is the packed sequence (B = offsets - 1); each iteration
// reads its sequence's query rows [qs, qs + Lq) and keys [ks, ks + Lk)
// (clamped), counts rows and keys from their starts (an empty block has 0
// rows), uses the diagonal Lk - Lq and writes at row qs + i0 of batch 0 of
// out, which starts filled with 0 (rows of no sequence).

// CHECK-LABEL: func.func @varlen_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x100x32xf16>, %[[K:.+]]: tensor<1x2x120x32xf16>, %[[V:.+]]: tensor<1x2x120x32xf16>, %[[CQ:.+]]: tensor<3xi32>, %[[CK:.+]]: tensor<3xi32>)
// CHECK-DAG: %[[C100:.+]] = arith.constant 100 : index
// CHECK-DAG: %[[C120:.+]] = arith.constant 120 : index
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%{{.+}} : f16) outs(%{{.+}} : tensor<1x4x100x32xf16>)
// CHECK: %[[NQB:.+]] = arith.ceildivsi %[[C100]], %{{.+}} : index
// CHECK: %[[DIM:.+]] = tensor.dim %[[CQ]], %[[C0:.+]] : tensor<3xi32>
// CHECK: %[[BM1:.+]] = arith.subi %[[DIM]], %{{.+}} : index
// CHECK: %[[NSEQ:.+]] = arith.maxsi %[[BM1]], %[[C0]] : index
// CHECK: scf.forall (%[[S:.+]], %[[H:.+]], %[[QB:.+]]) in (%[[NSEQ]], %{{.+}}, %[[NQB]]) shared_outs(%[[OUT:.+]] = %[[ZEROS]])
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %{{.+}} : index
// CHECK: tensor.extract %[[CQ]][%[[S]]] : tensor<3xi32>
// CHECK: %[[QS:.+]] = arith.minsi %{{.+}}, %[[C100]] : index
// CHECK: %[[S1:.+]] = arith.addi %[[S]], %{{.+}} : index
// CHECK: tensor.extract %[[CQ]][%[[S1]]] : tensor<3xi32>
// CHECK: %[[QE0:.+]] = arith.maxsi %{{.+}}, %[[QS]] : index
// CHECK: %[[QE:.+]] = arith.minsi %[[QE0]], %[[C100]] : index
// CHECK: %[[LQ:.+]] = arith.subi %[[QE]], %[[QS]] : index
// CHECK: %[[REST:.+]] = arith.subi %[[LQ]], %[[ROW0]] : index
// CHECK: %[[ROWS0:.+]] = arith.minsi %{{.+}}, %[[REST]] : index
// CHECK: %[[ROWS:.+]] = arith.maxsi %[[ROWS0]], %[[C0]] : index
// CHECK: tensor.extract %[[CK]][%[[S]]] : tensor<3xi32>
// CHECK: %[[KS:.+]] = arith.minsi %{{.+}}, %[[C120]] : index
// CHECK: tensor.extract %[[CK]][%[[S1]]] : tensor<3xi32>
// CHECK: %[[LK:.+]] = arith.subi %{{.+}}, %[[KS]] : index
// CHECK: %[[DIAG:.+]] = arith.subi %[[LK]], %[[LQ]] : index
// CHECK: %[[QROW:.+]] = arith.addi %[[QS]], %[[ROW0]] : index
// CHECK: tensor.extract_slice %[[Q]][%[[C0]], %[[H]], %[[QROW]], 0] [1, 1, %[[ROWS]], 32]
// CHECK: fa.kv_block_range rows[%[[ROW0]], %{{.+}}) keys %[[LK]] diagonal %[[DIAG]] {block_kv = 64 : i64, window = array<i64: -1, 0>}
// CHECK: scf.for %[[KB:[^ ]+]] =
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]], %{{.+}} : index
// CHECK: %[[KROW:.+]] = arith.addi %[[KS]], %[[COL0]] : index
// CHECK: tensor.extract_slice %[[K]][%[[C0]], %{{.+}}, %[[KROW]], 0]
// CHECK: tensor.extract_slice %[[V]][%[[C0]], %{{.+}}, %[[KROW]], 0]
// CHECK: fa.online_attention {{.+}} positions(%[[ROW0]], %[[COL0]], %[[DIAG]])
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[C0]], %[[H]], %[[QROW]], 0] [1, 1, %[[ROWS]], 32]
func.func @varlen_causal(%q: tensor<1x4x100x32xf16>, %k: tensor<1x2x120x32xf16>, %v: tensor<1x2x120x32xf16>,
                         %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<1x4x100x32xf16> {
  %o = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<3xi32>, tensor<3xi32>) {causal}
      : tensor<1x4x100x32xf16>, tensor<1x2x120x32xf16>, tensor<1x2x120x32xf16> -> tensor<1x4x100x32xf16>
  return %o : tensor<1x4x100x32xf16>
}
