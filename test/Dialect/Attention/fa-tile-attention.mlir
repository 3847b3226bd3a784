// RUN: fa-opt %s --fa-tile-attention="block-q=32 block-kv=16" --cse --split-input-file | FileCheck %s
// RUN: not fa-opt %s --fa-tile-attention="block-q=0" 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not fa-opt %s --fa-tile-attention="block-q=32 block-kv=-16" 2>&1 | FileCheck %s --check-prefix=ERR-KV

// ERR: error: fa-tile-attention: block-q and block-kv must be positive, got 0 and 64
// ERR-KV: error: fa-tile-attention: block-q and block-kv must be positive, got 32 and -16

// The FlashAttention form: scf.forall over (batch, query head, query block),
// scf.for over key/value blocks around fa.online_attention, then the
// epilogue out = acc / sum. --cse only merges the repeated constants.

// Non-causal GQA (Hq = 8, Hkv = 2), Nq = 100 (a short last query block of 4
// rows), Nk = 40 (a short last key block of 8 keys): one loop over every key
// block, no positions.
// CHECK-LABEL: func.func @gqa
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x8x100x64xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x2x40x64xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x2x40x64xf16>)
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C100:.+]] = arith.constant 100 : index
// CHECK-DAG: %[[C40:.+]] = arith.constant 40 : index
// CHECK-DAG: %[[RATIO:.+]] = arith.divui %[[C8]], %[[C2]] : index
// CHECK-DAG: %[[INIT:.+]] = tensor.empty() : tensor<2x8x100x64xf16>
// CHECK: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[NQB:.+]] = arith.ceildivsi %[[C100]], %[[C32]] : index
// CHECK: %[[R:.+]] = scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in (2, %[[C8]], %[[NQB]]) shared_outs(%[[OUT:.+]] = %[[INIT]]) -> (tensor<2x8x100x64xf16>) {
// Query tile: rows [row0, row0 + min(32, 100 - row0)).
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %[[C32]] : index
// CHECK: %[[LEFT:.+]] = arith.subi %[[C100]], %[[ROW0]] : index
// CHECK: %[[ROWS:.+]] = arith.minsi %[[C32]], %[[LEFT]] : index
// K/V head by index: h / (Hq / Hkv), nothing replicated.
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[RATIO]] : index
// CHECK: %[[QT:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 64] [1, 1, 1, 1] : tensor<2x8x100x64xf16> to tensor<?x64xf16>
// Initial state: max = -inf, sum = 0, acc = 0.
// CHECK: %[[STATE_EMPTY:.+]] = tensor.empty(%[[ROWS]]) : tensor<?xf32>
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[STATE_EMPTY]] : tensor<?xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[L0:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[STATE_EMPTY]] : tensor<?xf32>)
// CHECK: %[[ACC_EMPTY:.+]] = tensor.empty(%[[ROWS]]) : tensor<?x64xf32>
// CHECK: %[[A0:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[ACC_EMPTY]] : tensor<?x64xf32>)
// One loop 0 .. ceildiv(40, 16).
// CHECK: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[NKB:.+]] = arith.ceildivsi %[[C40]], %[[C16]] : index
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[S:.+]]:3 = scf.for %[[KB:.+]] = %[[C0]] to %[[NKB]] step %[[C1]] iter_args(%[[M:.+]] = %[[M0]], %[[L:.+]] = %[[L0]], %[[A:.+]] = %[[A0]]) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]], %[[C16]] : index
// CHECK: %[[KLEFT:.+]] = arith.subi %[[C40]], %[[COL0]] : index
// CHECK: %[[COLS:.+]] = arith.minsi %[[C16]], %[[KLEFT]] : index
// CHECK: %[[KT:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[KVH]], %[[COL0]], 0] [1, 1, %[[COLS]], 64] [1, 1, 1, 1] : tensor<2x2x40x64xf16> to tensor<?x64xf16>
// CHECK: %[[VT:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[KVH]], %[[COL0]], 0] [1, 1, %[[COLS]], 64] [1, 1, 1, 1] : tensor<2x2x40x64xf16> to tensor<?x64xf16>
// CHECK: %[[M1:.+]], %[[L1:.+]], %[[A1:.+]] = fa.online_attention %[[QT]], %[[KT]], %[[VT]] into %[[M]], %[[L]], %[[A]] {scale = 1.250000e-01 : f32} : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>{{$}}
// CHECK: scf.yield %[[M1]], %[[L1]], %[[A1]]
// CHECK: }
// CHECK-NOT: scf.for
// CHECK-NOT: fa.kv_block_range
// Epilogue: out = acc / sum (0 for an empty row), truncated once.
// CHECK: %[[O_EMPTY:.+]] = tensor.empty(%{{.+}}) : tensor<?x64xf16>
// CHECK: %[[OT:.+]] = linalg.generic {{.+}} ins(%[[S]]#2, %[[S]]#1 : tensor<?x64xf32>, tensor<?xf32>) outs(%[[O_EMPTY]] : tensor<?x64xf16>)
// CHECK: ^bb0(%[[ACC_E:.+]]: f32, %[[SUM_E:.+]]: f32, %{{.+}}: f16):
// CHECK: %[[EMPTY_ROW:.+]] = arith.cmpf oeq, %[[SUM_E]], %[[ZERO]] : f32
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[DEN:.+]] = arith.select %[[EMPTY_ROW]], %[[ONE]], %[[SUM_E]] : f32
// CHECK: %[[DIV:.+]] = arith.divf %[[ACC_E]], %[[DEN]] : f32
// CHECK: %[[SEL:.+]] = arith.select %[[EMPTY_ROW]], %[[ZERO]], %[[DIV]] : f32
// CHECK: %[[TRUNC:.+]] = arith.truncf %[[SEL]] : f32 to f16
// CHECK: linalg.yield %[[TRUNC]] : f16
// CHECK: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[OT]] into %[[OUT]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 64] [1, 1, 1, 1] : tensor<?x64xf16> into tensor<2x8x100x64xf16>
// CHECK: return %[[R]] : tensor<2x8x100x64xf16>
func.func @gqa(%q: tensor<2x8x100x64xf16>, %k: tensor<2x2x40x64xf16>, %v: tensor<2x2x40x64xf16>)
    -> tensor<2x8x100x64xf16> {
  %o = fa.attention %q, %k, %v
      : tensor<2x8x100x64xf16>, tensor<2x2x40x64xf16>, tensor<2x2x40x64xf16> -> tensor<2x8x100x64xf16>
  return %o : tensor<2x8x100x64xf16>
}

// -----

// Causal, Nq = 100 < Nk = 120 (diagonal 20), Dv = 32 != D, bf16 output and
// lse: fa.kv_block_range, then three loops chained through iter_args.
// CHECK-LABEL: func.func @causal_lse
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<1x4x100x64xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<1x4x120x64xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<1x4x120x32xf16>)
// CHECK-DAG: %[[C100:.+]] = arith.constant 100 : index
// CHECK-DAG: %[[C120:.+]] = arith.constant 120 : index
// CHECK: %[[DIAG:.+]] = arith.subi %[[C120]], %[[C100]] : index
// CHECK: %[[OUT_INIT:.+]] = tensor.empty() : tensor<1x4x100x32xbf16>
// CHECK: %[[LSE_INIT:.+]] = tensor.empty() : tensor<1x4x100xf32>
// CHECK: %[[R:.+]]:2 = scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in (1, %{{.+}}, %{{.+}}) shared_outs(%[[OUT:.+]] = %[[OUT_INIT]], %[[LSE_OUT:.+]] = %[[LSE_INIT]]) -> (tensor<1x4x100x32xbf16>, tensor<1x4x100xf32>) {
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %{{.+}} : index
// CHECK: %[[ROWS:.+]] = arith.minsi
// CHECK: %[[QT:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 64]
// CHECK: %[[STATE_EMPTY:.+]] = tensor.empty(%[[ROWS]]) : tensor<?xf32>
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.+]] = linalg.fill ins(%[[NEG_INF]] : f32)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[L0:.+]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[A0:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?x32xf32>)
// CHECK: %[[ROW_END:.+]] = arith.addi %[[ROW0]], %[[ROWS]] : index
// CHECK: %[[BEGIN:.+]], %[[FULL_BEGIN:.+]], %[[FULL_END:.+]], %[[END:.+]] = fa.kv_block_range rows[%[[ROW0]], %[[ROW_END]]) keys %[[C120]] diagonal %[[DIAG]] {block_kv = 16 : i64, window = array<i64: -1, 0>}
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// Straddling blocks before the fully visible ones: positions.
// CHECK: %[[S1:.+]]:3 = scf.for %[[KB1:.+]] = %[[BEGIN]] to %[[FULL_BEGIN]] step %[[C1]] iter_args(%[[M1:.+]] = %[[M0]], %[[L1:.+]] = %[[L0]], %[[A1:.+]] = %[[A0]]) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x32xf32>) {
// CHECK: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[COL1:.+]] = arith.muli %[[KB1]], %[[C16]] : index
// CHECK: %[[KT1:.+]] = tensor.extract_slice %[[K]]
// CHECK: %[[VT1:.+]] = tensor.extract_slice %[[V]]{{.+}} to tensor<?x32xf16>
// CHECK: %[[NM1:.+]], %[[NL1:.+]], %[[NA1:.+]] = fa.online_attention %[[QT]], %[[KT1]], %[[VT1]] into %[[M1]], %[[L1]], %[[A1]] positions(%[[ROW0]], %[[COL1]], %[[DIAG]]) {scale = 1.250000e-01 : f32, window = array<i64: -1, 0>}
// CHECK: scf.yield %[[NM1]], %[[NL1]], %[[NA1]]
// Fully visible blocks: no positions.
// CHECK: %[[S2:.+]]:3 = scf.for %[[KB2:.+]] = %[[FULL_BEGIN]] to %[[FULL_END]] step %[[C1]] iter_args(%[[M2:.+]] = %[[S1]]#0, %[[L2:.+]] = %[[S1]]#1, %[[A2:.+]] = %[[S1]]#2)
// CHECK: %[[NM2:.+]], %[[NL2:.+]], %[[NA2:.+]] = fa.online_attention %[[QT]], %{{.+}}, %{{.+}} into %[[M2]], %[[L2]], %[[A2]] {scale = 1.250000e-01 : f32} :
// CHECK: scf.yield %[[NM2]], %[[NL2]], %[[NA2]]
// Straddling blocks after them: positions.
// CHECK: %[[S3:.+]]:3 = scf.for %[[KB3:.+]] = %[[FULL_END]] to %[[END]] step %[[C1]] iter_args(%[[M3:.+]] = %[[S2]]#0, %[[L3:.+]] = %[[S2]]#1, %[[A3:.+]] = %[[S2]]#2)
// CHECK: %[[COL3:.+]] = arith.muli %[[KB3]], %{{.+}} : index
// CHECK: %[[NM3:.+]], %[[NL3:.+]], %[[NA3:.+]] = fa.online_attention %[[QT]], %{{.+}}, %{{.+}} into %[[M3]], %[[L3]], %[[A3]] positions(%[[ROW0]], %[[COL3]], %[[DIAG]]) {scale = 1.250000e-01 : f32, window = array<i64: -1, 0>}
// CHECK: scf.yield %[[NM3]], %[[NL3]], %[[NA3]]
// CHECK-NOT: scf.for
// out = acc / sum, truncated to bf16.
// CHECK: %[[OT:.+]] = linalg.generic {{.+}} ins(%[[S3]]#2, %[[S3]]#1 : tensor<?x32xf32>, tensor<?xf32>) outs(%{{.+}} : tensor<?x32xbf16>)
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// lse = ln(2) * (safe max + log2(sum)), the max being in log2 units.
// CHECK: %[[LT:.+]] = linalg.generic {{.+}} ins(%[[S3]]#0, %[[S3]]#1 : tensor<?xf32>, tensor<?xf32>) outs(%{{.+}} : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[MAX_E:.+]]: f32, %[[SUM_E:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[IS_INF:.+]] = arith.cmpf oeq, %[[MAX_E]], %[[NEG_INF]] : f32
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[IS_INF]], %[[ZERO]], %[[MAX_E]] : f32
// CHECK-NEXT: %[[LOG2:.+]] = math.log2 %[[SUM_E]] : f32
// CHECK-NEXT: %[[LSE2:.+]] = arith.addf %[[SAFE]], %[[LOG2]] : f32
// CHECK-NEXT: %[[LN2:.+]] = arith.constant 0.693147182 : f32
// CHECK-NEXT: %[[LSE:.+]] = arith.mulf %[[LSE2]], %[[LN2]] : f32
// CHECK-NEXT: linalg.yield %[[LSE]] : f32
// CHECK: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[OT]] into %[[OUT]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 32] [1, 1, 1, 1] : tensor<?x32xbf16> into tensor<1x4x100x32xbf16>
// CHECK-NEXT: tensor.parallel_insert_slice %[[LT]] into %[[LSE_OUT]][%[[B]], %[[H]], %[[ROW0]]] [1, 1, %[[ROWS]]] [1, 1, 1] : tensor<?xf32> into tensor<1x4x100xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @causal_lse(%q: tensor<1x4x100x64xf16>, %k: tensor<1x4x120x64xf16>, %v: tensor<1x4x120x32xf16>)
    -> (tensor<1x4x100x32xbf16>, tensor<1x4x100xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal}
      : tensor<1x4x100x64xf16>, tensor<1x4x120x64xf16>, tensor<1x4x120x32xf16>
      -> (tensor<1x4x100x32xbf16>, tensor<1x4x100xf32>)
  return %o, %lse : tensor<1x4x100x32xbf16>, tensor<1x4x100xf32>
}

// -----

// Mask broadcast over the batch (dim 0 of size 1): its slice reads batch 0,
// the head, the query rows and the key columns of the step.
// CHECK-LABEL: func.func @mask_broadcast
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<1x4x100x120xi1>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]]
// CHECK: %[[ROWS:.+]] = arith.minsi
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]]
// CHECK: %[[COLS:.+]] = arith.minsi
// CHECK: %[[KT:.+]] = tensor.extract_slice %{{.+}}[%[[B]], %{{.+}}, %[[COL0]], 0]
// CHECK: %[[VT:.+]] = tensor.extract_slice %{{.+}}[%[[B]], %{{.+}}, %[[COL0]], 0]
// CHECK: %[[MT:.+]] = tensor.extract_slice %[[MASK]][0, %[[H]], %[[ROW0]], %[[COL0]]] [1, 1, %[[ROWS]], %[[COLS]]] [1, 1, 1, 1] : tensor<1x4x100x120xi1> to tensor<?x?xi1>
// CHECK: fa.online_attention %{{.+}}, %[[KT]], %[[VT]] into %{{.+}}, %{{.+}}, %{{.+}} mask(%[[MT]] : tensor<?x?xi1>) {scale = 1.250000e-01 : f32} :
func.func @mask_broadcast(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x120x64xf16>, %v: tensor<2x4x120x64xf16>,
                          %m: tensor<1x4x100x120xi1>) -> tensor<2x4x100x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x4x100x120xi1>)
      : tensor<2x4x100x64xf16>, tensor<2x4x120x64xf16>, tensor<2x4x120x64xf16> -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}

// -----

// A key-padding mask [B, 1, 1, Nk]: its tile is row 0's [1, cols] (the step
// broadcasts it over the rows).
// CHECK-LABEL: func.func @mask_row_broadcast
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<2x1x1x120xi1>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]]
// CHECK: %[[COLS:.+]] = arith.minsi
// CHECK: %[[MT:.+]] = tensor.extract_slice %[[MASK]][%[[B]], 0, 0, %[[COL0]]] [1, 1, 1, %[[COLS]]] [1, 1, 1, 1] : tensor<2x1x1x120xi1> to tensor<1x?xi1>
// CHECK: fa.online_attention {{.+}} mask(%[[MT]] : tensor<1x?xi1>)
func.func @mask_row_broadcast(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x120x64xf16>, %v: tensor<2x4x120x64xf16>,
                              %m: tensor<2x1x1x120xi1>) -> tensor<2x4x100x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x1x1x120xi1>)
      : tensor<2x4x100x64xf16>, tensor<2x4x120x64xf16>, tensor<2x4x120x64xf16> -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}

// -----

// Additive mask broadcast over the heads (dim 1 of size 1), full batch.
// CHECK-LABEL: func.func @mask_head_broadcast
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<2x1x64x64xf32>)
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]]
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[COL0:.+]] = arith.muli %[[KB]]
// CHECK: %[[MT:.+]] = tensor.extract_slice %[[MASK]][%[[B]], 0, %[[ROW0]], %[[COL0]]] [1, 1, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : tensor<2x1x64x64xf32> to tensor<?x?xf32>
// CHECK: fa.online_attention {{.+}} mask(%[[MT]] : tensor<?x?xf32>)
func.func @mask_head_broadcast(%q: tensor<2x4x64x64xf16>, %k: tensor<2x4x64x64xf16>, %v: tensor<2x4x64x64xf16>,
                               %m: tensor<2x1x64x64xf32>) -> tensor<2x4x64x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x1x64x64xf32>)
      : tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16> -> tensor<2x4x64x64xf16>
  return %o : tensor<2x4x64x64xf16>
}

// -----

// FP8: q_descale * k_descale once, before the forall, on every step; the
// value descale in the epilogue.
// CHECK-LABEL: func.func @fp8
// CHECK-SAME: %[[QD:[a-zA-Z0-9_]+]]: f32, %[[KD:[a-zA-Z0-9_]+]]: f32, %[[VD:[a-zA-Z0-9_]+]]: f32)
// CHECK: %[[SD:.+]] = arith.mulf %[[QD]], %[[KD]] : f32
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}}, %{{.+}} descale(%[[SD]]) {scale = 1.250000e-01 : f32} : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>
// CHECK: linalg.generic
// CHECK: %[[DIV:.+]] = arith.divf
// CHECK-NEXT: %[[DESCALED:.+]] = arith.mulf %[[DIV]], %[[VD]] : f32
// CHECK-NEXT: %[[SEL:.+]] = arith.select %{{.+}}, %{{.+}}, %[[DESCALED]] : f32
// CHECK-NEXT: arith.truncf %[[SEL]] : f32 to bf16
func.func @fp8(%q: tensor<1x2x64x64xf8E4M3FN>, %k: tensor<1x2x64x64xf8E4M3FN>, %v: tensor<1x2x64x64xf8E4M3FN>,
               %qd: f32, %kd: f32, %vd: f32) -> tensor<1x2x64x64xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd)
      : tensor<1x2x64x64xf8E4M3FN>, tensor<1x2x64x64xf8E4M3FN>, tensor<1x2x64x64xf8E4M3FN>
      -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// Dynamic B, H and N, sliding window bounded on the left only: every size
// comes from tensor.dim, the window goes to fa.kv_block_range and the
// straddling steps.
// CHECK-LABEL: func.func @dynamic_window
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<?x?x?x64xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<?x?x?x64xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<?x?x?x64xf16>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[HQ:.+]] = tensor.dim %[[Q]], %[[C1]] : tensor<?x?x?x64xf16>
// CHECK-DAG: %[[HKV:.+]] = tensor.dim %[[K]], %[[C1]] : tensor<?x?x?x64xf16>
// CHECK-DAG: %[[RATIO:.+]] = arith.divui %[[HQ]], %[[HKV]] : index
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %[[Q]], %[[C2]] : tensor<?x?x?x64xf16>
// CHECK-DAG: %[[NK:.+]] = tensor.dim %[[K]], %[[C2]] : tensor<?x?x?x64xf16>
// CHECK-DAG: %[[DIAG:.+]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK-DAG: %[[BATCH:.+]] = tensor.dim %[[Q]], %[[C0]] : tensor<?x?x?x64xf16>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[BATCH]], %[[HQ]], %[[NQ]]) : tensor<?x?x?x64xf16>
// CHECK: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[NQB:.+]] = arith.ceildivsi %[[NQ]], %[[C32]] : index
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in (%[[BATCH]], %[[HQ]], %[[NQB]]) shared_outs(%{{.+}} = %[[INIT]]) -> (tensor<?x?x?x64xf16>) {
// CHECK: %[[ROW0:.+]] = arith.muli %[[QB]], %[[C32]] : index
// CHECK: %[[LEFT:.+]] = arith.subi %[[NQ]], %[[ROW0]] : index
// CHECK: %[[ROWS:.+]] = arith.minsi %[[C32]], %[[LEFT]] : index
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[RATIO]] : index
// CHECK: %[[ROW_END:.+]] = arith.addi %[[ROW0]], %[[ROWS]] : index
// CHECK: fa.kv_block_range rows[%[[ROW0]], %[[ROW_END]]) keys %[[NK]] diagonal %[[DIAG]] {block_kv = 16 : i64, window = array<i64: 8, -1>}
// CHECK: scf.for
// CHECK: %[[KLEFT:.+]] = arith.subi %[[NK]], %{{.+}} : index
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[KVH]], %{{.+}}, 0] {{.+}} : tensor<?x?x?x64xf16> to tensor<?x64xf16>
// CHECK: fa.online_attention {{.+}} positions(%[[ROW0]], %{{.+}}, %[[DIAG]]) {scale = 1.250000e-01 : f32, window = array<i64: 8, -1>}
// CHECK: scf.for
// CHECK: fa.online_attention {{.+}} {scale = 1.250000e-01 : f32} :
// CHECK: scf.for
// CHECK: fa.online_attention {{.+}} positions(%[[ROW0]], %{{.+}}, %[[DIAG]]) {scale = 1.250000e-01 : f32, window = array<i64: 8, -1>}
func.func @dynamic_window(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>)
    -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 8, -1>}
      : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// Static operands, dynamic result type: the forall result is cast back.
// CHECK-LABEL: func.func @result_cast
// CHECK: %[[R:.+]] = scf.forall {{.+}} -> (tensor<1x1x16x32xf32>)
// CHECK: %[[CAST:.+]] = tensor.cast %[[R]] : tensor<1x1x16x32xf32> to tensor<?x?x?x32xf32>
// CHECK: return %[[CAST]]
func.func @result_cast(%q: tensor<1x1x16x32xf32>, %k: tensor<1x1x16x32xf32>, %v: tensor<1x1x16x32xf32>)
    -> tensor<?x?x?x32xf32> {
  %o = fa.attention %q, %k, %v
      : tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32> -> tensor<?x?x?x32xf32>
  return %o : tensor<?x?x?x32xf32>
}
