// RUN: fa-opt %s --fa-decompose-online-attention --split-input-file | FileCheck %s

// The CPU lowering of the tile ops. fa.online_attention becomes, on its tiles:
// T = Q K^T (f32), the score modifiers (scale with log2(e) folded in when
// nothing non-linear or additive follows it), the block row max, A = exp2(M - Z),
// M' = max(M, rowmax T), P = exp2(T - Z), L' = A L + rowsum P, ACC' = A ACC + P V,
// the state updated in place (the generics' outs are the incoming max, sum and
// acc). fa.kv_block_range becomes index arithmetic.

// CHECK-DAG: #[[$QK_Q:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$QK_K:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$QK_OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$PV_V:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @causal_step(
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<?x64xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<?x64xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<?x64xf16>, %[[M:[a-zA-Z0-9_]+]]: tensor<?xf32>, %[[L:[a-zA-Z0-9_]+]]: tensor<?xf32>, %[[A:[a-zA-Z0-9_]+]]: tensor<?x64xf32>, %[[ROW0:[a-zA-Z0-9_]+]]: index, %[[COL0:[a-zA-Z0-9_]+]]: index, %[[DIAG:[a-zA-Z0-9_]+]]: index)
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// 0.125 * log2(e), folded: no softcap, no additive mask.
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.180336878 : f32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ROWS:.+]] = tensor.dim %[[Q]], %[[C0]] : tensor<?x64xf16>
// CHECK-DAG: %[[COLS:.+]] = tensor.dim %[[K]], %[[C0]] : tensor<?x64xf16>
//
// T = Q K^T: loops (i, j, d), f16 extended to f32.
// CHECK: %[[T_EMPTY:.+]] = tensor.empty(%[[ROWS]], %[[COLS]]) : tensor<?x?xf32>
// CHECK: %[[T_INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[T_EMPTY]] : tensor<?x?xf32>)
// CHECK: %[[T:.+]] = linalg.generic {indexing_maps = [#[[$QK_Q]], #[[$QK_K]], #[[$QK_OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : tensor<?x64xf16>, tensor<?x64xf16>) outs(%[[T_INIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[QE:.+]]: f16, %[[KE:.+]]: f16, %[[TACC:.+]]: f32):
// CHECK-NEXT: %[[QF:.+]] = arith.extf %[[QE]] : f16 to f32
// CHECK-NEXT: %[[KF:.+]] = arith.extf %[[KE]] : f16 to f32
// CHECK-NEXT: %[[QK:.+]] = arith.mulf %[[QF]], %[[KF]] : f32
// CHECK-NEXT: %[[QK_SUM:.+]] = arith.addf %[[TACC]], %[[QK]] : f32
// CHECK-NEXT: linalg.yield %[[QK_SUM]] : f32
//
// Modifiers, in place of T: distance = (col0 + j) - (row0 + i + diagonal),
// the scaled score kept where distance <= 0 (causal), else -inf.
// CHECK: %[[TS:.+]] = linalg.generic {indexing_maps = [#[[$ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[T]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[TE:.+]]: f32):
// CHECK-NEXT: %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[ROW:.+]] = arith.addi %[[ROW0]], %[[I]] : index
// CHECK-NEXT: %[[J:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[COL:.+]] = arith.addi %[[COL0]], %[[J]] : index
// CHECK-NEXT: %[[DIAG_COL:.+]] = arith.addi %[[ROW]], %[[DIAG]] : index
// CHECK-NEXT: %[[DIST:.+]] = arith.subi %[[COL]], %[[DIAG_COL]] : index
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[TE]], %[[SCALE]] : f32
// CHECK-NEXT: %[[INSIDE:.+]] = arith.cmpi sle, %[[DIST]], %[[C0]] : index
// CHECK-NEXT: %[[MASKED:.+]] = arith.select %[[INSIDE]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[MASKED]] : f32
//
// The block's row max, from -inf.
// CHECK: %[[BM_EMPTY:.+]] = tensor.empty(%[[ROWS]]) : tensor<?xf32>
// CHECK: %[[BM_INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[BM_EMPTY]] : tensor<?xf32>)
// CHECK: %[[BM:.+]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[TS]] : tensor<?x?xf32>) outs(%[[BM_INIT]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[BMT:.+]]: f32, %[[BMACC:.+]]: f32):
// CHECK-NEXT: %[[BMAX:.+]] = arith.maximumf %[[BMT]], %[[BMACC]] : f32
// CHECK-NEXT: linalg.yield %[[BMAX]] : f32
//
// alpha = exp2(M - Z), Z = max(M, block max), 0 while the row is all -inf.
// CHECK: %[[ALPHA_EMPTY:.+]] = tensor.empty(%[[ROWS]]) : tensor<?xf32>
// CHECK: %[[ALPHA:.+]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[M]], %[[BM]] : tensor<?xf32>, tensor<?xf32>) outs(%[[ALPHA_EMPTY]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[OLD_M:.+]]: f32, %[[BLK_M:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[NEW_M:.+]] = arith.maximumf %[[OLD_M]], %[[BLK_M]] : f32
// CHECK-NEXT: %[[NEW_M_INF:.+]] = arith.cmpf oeq, %[[NEW_M]], %[[NEG_INF]] : f32
// CHECK-NEXT: %[[Z:.+]] = arith.select %[[NEW_M_INF]], %[[ZERO]], %[[NEW_M]] : f32
// CHECK-NEXT: %[[MZ:.+]] = arith.subf %[[OLD_M]], %[[Z]] : f32
// CHECK-NEXT: %[[ALPHA_E:.+]] = math.exp2 %[[MZ]] : f32
// CHECK-NEXT: linalg.yield %[[ALPHA_E]] : f32
//
// M' = max(M, block max), in place of M.
// CHECK: %[[M1:.+]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[BM]] : tensor<?xf32>) outs(%[[M]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: f32):
// CHECK-NEXT: arith.maximumf
//
// P = exp2(T - Z), in place of T.
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[M1]] : tensor<?xf32>) outs(%[[TS]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[PM:.+]]: f32, %[[PT:.+]]: f32):
// CHECK-NEXT: %[[PM_INF:.+]] = arith.cmpf oeq, %[[PM]], %[[NEG_INF]] : f32
// CHECK-NEXT: %[[PZ:.+]] = arith.select %[[PM_INF]], %[[ZERO]], %[[PM]] : f32
// CHECK-NEXT: %[[PTZ:.+]] = arith.subf %[[PT]], %[[PZ]] : f32
// CHECK-NEXT: %[[PE:.+]] = math.exp2 %[[PTZ]] : f32
// CHECK-NEXT: linalg.yield %[[PE]] : f32
//
// L' = alpha * L + rowsum P, in place of L.
// CHECK: %[[L_SCALED:.+]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[ALPHA]] : tensor<?xf32>) outs(%[[L]] : tensor<?xf32>)
// CHECK: arith.mulf
// CHECK: %[[L1:.+]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<?x?xf32>) outs(%[[L_SCALED]] : tensor<?xf32>)
// CHECK: arith.addf
//
// ACC' = alpha * ACC + P V, in place of ACC: loops (i, e, j).
// CHECK: %[[A_SCALED:.+]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[ALPHA]] : tensor<?xf32>) outs(%[[A]] : tensor<?x64xf32>)
// CHECK: arith.mulf
// CHECK: %[[A1:.+]] = linalg.generic {indexing_maps = [#[[$QK_Q]], #[[$PV_V]], #[[$QK_OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]], %[[V]] : tensor<?x?xf32>, tensor<?x64xf16>) outs(%[[A_SCALED]] : tensor<?x64xf32>)
// CHECK-NEXT: ^bb0(%[[PVP:.+]]: f32, %[[PVV:.+]]: f16, %[[PVACC:.+]]: f32):
// CHECK-NEXT: %[[VF:.+]] = arith.extf %[[PVV]] : f16 to f32
// CHECK-NEXT: %[[PV:.+]] = arith.mulf %[[PVP]], %[[VF]] : f32
// CHECK-NEXT: %[[PV_SUM:.+]] = arith.addf %[[PVACC]], %[[PV]] : f32
// CHECK-NEXT: linalg.yield %[[PV_SUM]] : f32
// CHECK: return %[[M1]], %[[L1]], %[[A1]]
// CHECK-NOT: fa.online_attention
func.func @causal_step(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                       %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                       %row0: index, %col0: index, %diag: index)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%row0, %col0, %diag)
      {scale = 0.125 : f32, window = array<i64: -1, 0>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// -----

// Softcap: tanh sits between the scale and the exponent, so the scale stays
// 0.125 and log2(e) is a separate multiply after the cap.
// CHECK-LABEL: func.func @softcap
// CHECK-DAG: %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} outs(%{{.+}} : tensor<16x16xf32>)
// CHECK-NEXT: ^bb0(%[[TE:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[TE]], %[[SCALE]] : f32
// CHECK-NEXT: %[[DIV:.+]] = arith.divf %[[SCALED]], %[[CAP]] : f32
// CHECK-NEXT: %[[TANH:.+]] = math.tanh %[[DIV]] : f32
// CHECK-NEXT: %[[CAPPED:.+]] = arith.mulf %[[TANH]], %[[CAP]] : f32
// CHECK-NEXT: %[[LOG2:.+]] = arith.mulf %[[CAPPED]], %[[LOG2E]] : f32
// CHECK-NEXT: linalg.yield %[[LOG2]] : f32
// CHECK-NOT: linalg.index
func.func @softcap(%q: tensor<16x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>,
                   %m: tensor<16xf32>, %l: tensor<16xf32>, %a: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32, softcap = 30.0 : f32}
      : tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %a1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// Additive mask: added after the scaling, so log2(e) comes after the add.
// CHECK-LABEL: func.func @additive_mask
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<?x?xbf16>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: linalg.generic {{.+}} ins(%[[MASK]] : tensor<?x?xbf16>) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[ME:.+]]: bf16, %[[TE:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[TE]], %[[SCALE]] : f32
// CHECK-NEXT: %[[MF:.+]] = arith.extf %[[ME]] : bf16 to f32
// CHECK-NEXT: %[[ADDED:.+]] = arith.addf %[[SCALED]], %[[MF]] : f32
// CHECK-NEXT: %[[LOG2:.+]] = arith.mulf %[[ADDED]], %[[LOG2E]] : f32
// CHECK-NEXT: linalg.yield %[[LOG2]] : f32
func.func @additive_mask(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>,
                         %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                         %mask: tensor<?x?xbf16>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x?xbf16>) {scale = 0.125 : f32}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// -----

// A one-row mask broadcasts over the query rows: its map reads row 0.
// CHECK: #[[$ROW0MAP:map[0-9]*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @bool_mask_one_row
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<1x?xi1>)
// CHECK: linalg.generic {indexing_maps = [#[[$ROW0MAP]], #{{.+}}], {{.+}} ins(%[[MASK]] : tensor<1x?xi1>) outs(%{{.+}} : tensor<?x?xf32>)
func.func @bool_mask_one_row(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                             %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                             %mask: tensor<1x?xi1>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<1x?xi1>) {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// -----

// Boolean mask and a two-sided window: log2(e) stays folded (select is
// linear in the score); both window edges and the mask form one predicate.
// CHECK-LABEL: func.func @bool_mask_window
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<?x?xi1>, %[[ROW0:[a-zA-Z0-9_]+]]: index, %[[COL0:[a-zA-Z0-9_]+]]: index, %[[DIAG:[a-zA-Z0-9_]+]]: index)
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.180336878 : f32
// CHECK-DAG: %[[LEFT:.+]] = arith.constant -8 : index
// CHECK-DAG: %[[RIGHT:.+]] = arith.constant 2 : index
// CHECK: linalg.generic {{.+}} ins(%[[MASK]] : tensor<?x?xi1>) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[KEEP:.+]]: i1, %[[TE:.+]]: f32):
// CHECK: %[[DIST:.+]] = arith.subi
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[TE]], %[[SCALE]] : f32
// CHECK-NEXT: %[[GE:.+]] = arith.cmpi sge, %[[DIST]], %[[LEFT]] : index
// CHECK-NEXT: %[[LE:.+]] = arith.cmpi sle, %[[DIST]], %[[RIGHT]] : index
// CHECK-NEXT: %[[INSIDE:.+]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK-NEXT: %[[BOTH:.+]] = arith.andi %[[KEEP]], %[[INSIDE]] : i1
// CHECK-NEXT: %[[SEL:.+]] = arith.select %[[BOTH]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[SEL]] : f32
func.func @bool_mask_window(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                            %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                            %mask: tensor<?x?xi1>, %row0: index, %col0: index, %diag: index)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x?xi1>)
      positions(%row0, %col0, %diag) {scale = 0.125 : f32, window = array<i64: 8, 2>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// -----

// FP8: the folded scale is multiplied by the descale factor once, outside the
// generics; f8E4M3FN is extended to f32 in the products.
// CHECK-LABEL: func.func @fp8
// CHECK-SAME: %[[D:[a-zA-Z0-9_]+]]: f32)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.180336878 : f32
// CHECK: %[[DSCALE:.+]] = arith.mulf %[[D]], %[[SCALE]] : f32
// CHECK: linalg.generic
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[TE:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[TE]], %[[DSCALE]] : f32
// CHECK-NEXT: linalg.yield %[[SCALED]] : f32
func.func @fp8(%q: tensor<?x64xf8E4M3FN>, %k: tensor<?x64xf8E4M3FN>, %v: tensor<?x64xf8E4M3FN>,
               %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %d: f32)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a descale(%d) {scale = 0.125 : f32}
      : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// -----

// Causal block range: columns some row sees are [0, last row + diagonal + 1),
// the ones every row sees [0, first row + diagonal + 1), clamped to
// [0, Nk]; begin = lo / block, end = ceildiv(hi, block), full_begin =
// ceildiv(full lo, block), full_end = full hi / block (or every block when
// full hi = Nk), clamped into [begin, end].
// CHECK-LABEL: func.func @kv_block_range_causal
// CHECK-SAME: (%[[R0:[a-zA-Z0-9_]+]]: index, %[[R1:[a-zA-Z0-9_]+]]: index, %[[N:[a-zA-Z0-9_]+]]: index, %[[DIAG:[a-zA-Z0-9_]+]]: index)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[NB:.+]] = arith.ceildivsi %[[N]], %[[C16]] : index
// CHECK: %[[FIRST:.+]] = arith.addi %[[R0]], %[[DIAG]] : index
// CHECK: %[[LAST_ROW:.+]] = arith.subi %[[R1]], %[[C1]] : index
// CHECK: %[[LAST:.+]] = arith.addi %[[LAST_ROW]], %[[DIAG]] : index
// CHECK: %[[HI:.+]] = arith.addi %[[LAST]], %[[C1]] : index
// CHECK: %[[FULL_HI:.+]] = arith.addi %[[FIRST]], %[[C1]] : index
// CHECK: %[[LO:.+]] = arith.minsi %[[N]], %[[C0]] : index
// CHECK: %[[HI_LB:.+]] = arith.maxsi %[[HI]], %[[C0]] : index
// CHECK: %[[HI_C:.+]] = arith.minsi %[[HI_LB]], %[[N]] : index
// CHECK: %[[FULL_LO:.+]] = arith.minsi %[[N]], %[[C0]] : index
// CHECK: %[[FULL_HI_LB:.+]] = arith.maxsi %[[FULL_HI]], %[[C0]] : index
// CHECK: %[[FULL_HI_C:.+]] = arith.minsi %[[FULL_HI_LB]], %[[N]] : index
// CHECK: %[[BEGIN:.+]] = arith.divsi %[[LO]], %[[C16]] : index
// CHECK: %[[END_RAW:.+]] = arith.ceildivsi %[[HI_C]], %[[C16]] : index
// CHECK: %[[END:.+]] = arith.maxsi %[[END_RAW]], %[[BEGIN]] : index
// CHECK: %[[FB_RAW:.+]] = arith.ceildivsi %[[FULL_LO]], %[[C16]] : index
// CHECK: %[[ALL:.+]] = arith.cmpi eq, %[[FULL_HI_C]], %[[N]] : index
// CHECK: %[[FE_DIV:.+]] = arith.divsi %[[FULL_HI_C]], %[[C16]] : index
// CHECK: %[[FE_RAW:.+]] = arith.select %[[ALL]], %[[NB]], %[[FE_DIV]] : index
// CHECK: %[[FB_LB:.+]] = arith.maxsi %[[FB_RAW]], %[[BEGIN]] : index
// CHECK: %[[FB:.+]] = arith.minsi %[[FB_LB]], %[[END]] : index
// CHECK: %[[FE_LB:.+]] = arith.maxsi %[[FE_RAW]], %[[FB]] : index
// CHECK: %[[FE:.+]] = arith.minsi %[[FE_LB]], %[[END]] : index
// CHECK: return %[[BEGIN]], %[[FB]], %[[FE]], %[[END]] : index, index, index, index
// CHECK-NOT: fa.kv_block_range
func.func @kv_block_range_causal(%r0: index, %r1: index, %n: index, %diag: index)
    -> (index, index, index, index) {
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag
      {block_kv = 16 : i64, window = array<i64: -1, 0>}
  return %b, %fb, %fe, %e : index, index, index, index
}

// -----

// No window: every block, none masked: 0, 0, n, n with n = ceildiv(Nk, block).
// CHECK-LABEL: func.func @kv_block_range_no_window
// CHECK-SAME: (%{{.+}}: index, %{{.+}}: index, %[[N:[a-zA-Z0-9_]+]]: index, %{{.+}}: index)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[NB:.+]] = arith.ceildivsi %[[N]], %[[C64]] : index
// CHECK-NEXT: return %[[C0]], %[[C0]], %[[NB]], %[[NB]] : index, index, index, index
func.func @kv_block_range_no_window(%r0: index, %r1: index, %n: index, %diag: index)
    -> (index, index, index, index) {
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag
      {block_kv = 64 : i64, window = array<i64: -1, -1>}
  return %b, %fb, %fe, %e : index, index, index, index
}
