// RUN: fa-opt %s --fa-decompose-attention --split-input-file | FileCheck %s

// The reference lowering, step by step: S = Q K^T (f32 accumulation), scale,
// row max M, P = exp(S - Z) with Z = 0 for a fully masked row, row sum L,
// O = P V, out = O / L (0 for an empty row), truncated to the output type once.

// CHECK-DAG: #[[$QK_IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$QK_OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @basic(
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x16x32xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x4x24x32xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x4x24x32xf16>)
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.176776692 : f32
//
// S = Q K^T, reduction over D, f16 extended to f32, K read by tensor.extract.
// CHECK: %[[S_EMPTY:.+]] = tensor.empty() : tensor<2x4x16x24xf32>
// CHECK: %[[S_INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[S_EMPTY]] : tensor<2x4x16x24xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[$QK_IN]], #[[$QK_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]] : tensor<2x4x16x32xf16>) outs(%[[S_INIT]] : tensor<2x4x16x24xf32>)
// CHECK-NEXT: ^bb0(%[[QE:.+]]: f16, %[[ACC:.+]]: f32):
// CHECK-DAG: %[[B:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[H:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[J:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[D:.+]] = linalg.index 4 : index
// CHECK: %[[KE:.+]] = tensor.extract %[[K]][%[[B]], %[[H]], %[[J]], %[[D]]] : tensor<2x4x24x32xf16>
// CHECK: %[[QF:.+]] = arith.extf %[[QE]] : f16 to f32
// CHECK: %[[KF:.+]] = arith.extf %[[KE]] : f16 to f32
// CHECK: %[[QK:.+]] = arith.mulf %[[QF]], %[[KF]] : f32
// CHECK: %[[QK_SUM:.+]] = arith.addf %[[ACC]], %[[QK]] : f32
// CHECK: linalg.yield %[[QK_SUM]] : f32
//
// Scale (nothing else: no softcap, mask or window).
// CHECK: %[[SS:.+]] = linalg.generic {indexing_maps = [#[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[S]] : tensor<2x4x16x24xf32>)
// CHECK-NEXT: ^bb0(%[[SE:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[SE]], %[[SCALE]] : f32
// CHECK-NEXT: linalg.yield %[[SCALED]] : f32
//
// Row max, from -inf.
// CHECK: %[[M_EMPTY:.+]] = tensor.empty() : tensor<2x4x16xf32>
// CHECK: %[[M_INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[M_EMPTY]] : tensor<2x4x16xf32>)
// CHECK: %[[M:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[SS]] : tensor<2x4x16x24xf32>) outs(%[[M_INIT]] : tensor<2x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[MS:.+]]: f32, %[[MACC:.+]]: f32):
// CHECK-NEXT: %[[MAX:.+]] = arith.maximumf %[[MS]], %[[MACC]] : f32
// CHECK-NEXT: linalg.yield %[[MAX]] : f32
//
// P = exp(S - Z), Z = (M == -inf) ? 0 : M.
// CHECK: %[[P_EMPTY:.+]] = tensor.empty() : tensor<2x4x16x24xf32>
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SS]], %[[M]] : tensor<2x4x16x24xf32>, tensor<2x4x16xf32>) outs(%[[P_EMPTY]] : tensor<2x4x16x24xf32>)
// CHECK-NEXT: ^bb0(%[[PS:.+]]: f32, %[[PM:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[M_IS_INF:.+]] = arith.cmpf oeq, %[[PM]], %[[NEG_INF]] : f32
// CHECK-NEXT: %[[Z:.+]] = arith.select %[[M_IS_INF]], %[[ZERO]], %[[PM]] : f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[PS]], %[[Z]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: linalg.yield %[[EXP]] : f32
//
// Row sum, from 0.
// CHECK: %[[L_EMPTY:.+]] = tensor.empty() : tensor<2x4x16xf32>
// CHECK: %[[L_INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[L_EMPTY]] : tensor<2x4x16xf32>)
// CHECK: %[[L:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<2x4x16x24xf32>) outs(%[[L_INIT]] : tensor<2x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[LP:.+]]: f32, %[[LACC:.+]]: f32):
// CHECK-NEXT: %[[LSUM:.+]] = arith.addf %[[LP]], %[[LACC]] : f32
// CHECK-NEXT: linalg.yield %[[LSUM]] : f32
//
// O = P V: loops (b, h, i, e, j), V read at [b, h, j, e].
// CHECK: %[[O_EMPTY:.+]] = tensor.empty() : tensor<2x4x16x32xf32>
// CHECK: %[[O_INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[O_EMPTY]] : tensor<2x4x16x32xf32>)
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#[[$QK_IN]], #[[$QK_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<2x4x16x24xf32>) outs(%[[O_INIT]] : tensor<2x4x16x32xf32>)
// CHECK-NEXT: ^bb0(%[[PE:.+]]: f32, %[[OACC:.+]]: f32):
// CHECK-DAG: %[[VB:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[VH:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[VE_IDX:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[VJ:.+]] = linalg.index 4 : index
// CHECK: %[[VE:.+]] = tensor.extract %[[V]][%[[VB]], %[[VH]], %[[VJ]], %[[VE_IDX]]] : tensor<2x4x24x32xf16>
// CHECK: %[[VF:.+]] = arith.extf %[[VE]] : f16 to f32
// CHECK: %[[PV:.+]] = arith.mulf %[[PE]], %[[VF]] : f32
// CHECK: %[[PV_SUM:.+]] = arith.addf %[[OACC]], %[[PV]] : f32
// CHECK: linalg.yield %[[PV_SUM]] : f32
//
// out = O / L, 0 when L = 0 (dividing by 1 then), truncated to f16 once.
// CHECK: %[[OUT_EMPTY:.+]] = tensor.empty() : tensor<2x4x16x32xf16>
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[O]], %[[L]] : tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) outs(%[[OUT_EMPTY]] : tensor<2x4x16x32xf16>)
// CHECK-NEXT: ^bb0(%[[OV:.+]]: f32, %[[LV:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[ROW_EMPTY:.+]] = arith.cmpf oeq, %[[LV]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DENOM:.+]] = arith.select %[[ROW_EMPTY]], %[[ONE]], %[[LV]] : f32
// CHECK-NEXT: %[[DIV:.+]] = arith.divf %[[OV]], %[[DENOM]] : f32
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[ROW_EMPTY]], %[[ZERO]], %[[DIV]] : f32
// CHECK-NEXT: %[[TRUNC:.+]] = arith.truncf %[[SAFE]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[TRUNC]] : f16
// CHECK: return %[[OUT]] : tensor<2x4x16x32xf16>
// CHECK-NOT: fa.attention
func.func @basic(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x24x32xf16>,
                 %v: tensor<2x4x24x32xf16>) -> tensor<2x4x16x32xf16> {
  %o = fa.attention %q, %k, %v
      : tensor<2x4x16x32xf16>, tensor<2x4x24x32xf16>, tensor<2x4x24x32xf16>
      -> tensor<2x4x16x32xf16>
  return %o : tensor<2x4x16x32xf16>
}

// -----

// GQA: query head h reads K/V head h / (Hq / Hkv) = h / 4, in both products.
// bf16 inputs, f32 output: no truncation at the end.
// CHECK-LABEL: func.func @gqa(
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x8x16x32xbf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x2x16x32xbf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x2x16x32xbf16>)
// CHECK-DAG: %[[RATIO:.+]] = arith.constant 4 : index
// CHECK: linalg.generic {{.*}} ins(%[[Q]] : tensor<2x8x16x32xbf16>)
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[G:.+]] = arith.divui %[[H]], %[[RATIO]] : index
// CHECK: tensor.extract %[[K]][%{{.+}}, %[[G]], %{{.+}}, %{{.+}}] : tensor<2x2x16x32xbf16>
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[VH:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[VG:.+]] = arith.divui %[[VH]], %[[RATIO]] : index
// CHECK: tensor.extract %[[V]][%{{.+}}, %[[VG]], %{{.+}}, %{{.+}}] : tensor<2x2x16x32xbf16>
// CHECK: %[[OUT:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x8x16x32xf32>)
// CHECK-NOT: arith.truncf
// CHECK: return %[[OUT]] : tensor<2x8x16x32xf32>
func.func @gqa(%q: tensor<2x8x16x32xbf16>, %k: tensor<2x2x16x32xbf16>,
               %v: tensor<2x2x16x32xbf16>) -> tensor<2x8x16x32xf32> {
  %o = fa.attention %q, %k, %v
      : tensor<2x8x16x32xbf16>, tensor<2x2x16x32xbf16>, tensor<2x2x16x32xbf16>
      -> tensor<2x8x16x32xf32>
  return %o : tensor<2x8x16x32xf32>
}

// -----

// Causal, bottom-right aligned: Nk - Nq = 48, key j is kept when
// j - (i + 48) <= 0. The explicit scale replaces 1/sqrt(D).
// CHECK-LABEL: func.func @causal(
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[DIAG:.+]] = arith.constant 48 : index
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: linalg.generic {{.*}}]} outs(%{{.+}} : tensor<1x4x16x64xf32>) {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32):
// CHECK-DAG: %[[ROW:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[COL:.+]] = linalg.index 3 : index
// CHECK: %[[ROW_DIAG:.+]] = arith.addi %[[ROW]], %[[DIAG]] : index
// CHECK-NEXT: %[[DELTA:.+]] = arith.subi %[[COL]], %[[ROW_DIAG]] : index
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK-NEXT: %[[KEEP:.+]] = arith.cmpi sle, %[[DELTA]], %[[C0]] : index
// CHECK-NEXT: %[[MASKED:.+]] = arith.select %[[KEEP]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[MASKED]] : f32
func.func @causal(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x64x32xf16>,
                  %v: tensor<1x4x64x32xf16>) -> tensor<1x4x16x32xf16> {
  %o = fa.attention %q, %k, %v {causal, scale = 0.125 : f32}
      : tensor<1x4x16x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x16x32xf16>
  return %o : tensor<1x4x16x32xf16>
}

// -----

// Sliding window [8, 4]: -8 <= j - (i + 48) <= 4.
// CHECK-LABEL: func.func @window(
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[RIGHT:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[LEFT:.+]] = arith.constant -8 : index
// CHECK-DAG: %[[DIAG:.+]] = arith.constant 48 : index
// CHECK: linalg.generic {{.*}}]} outs(%{{.+}} : tensor<1x4x16x64xf32>) {
// CHECK-NEXT: ^bb0(%{{.+}}: f32):
// CHECK-DAG: %[[ROW:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[COL:.+]] = linalg.index 3 : index
// CHECK: %[[ROW_DIAG:.+]] = arith.addi %[[ROW]], %[[DIAG]] : index
// CHECK-NEXT: %[[DELTA:.+]] = arith.subi %[[COL]], %[[ROW_DIAG]] : index
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf
// CHECK-NEXT: %[[AFTER_LEFT:.+]] = arith.cmpi sge, %[[DELTA]], %[[LEFT]] : index
// CHECK-NEXT: %[[BEFORE_RIGHT:.+]] = arith.cmpi sle, %[[DELTA]], %[[RIGHT]] : index
// CHECK-NEXT: %[[KEEP:.+]] = arith.andi %[[AFTER_LEFT]], %[[BEFORE_RIGHT]] : i1
// CHECK-NEXT: %[[MASKED:.+]] = arith.select %[[KEEP]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[MASKED]] : f32
func.func @window(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x64x32xf16>,
                  %v: tensor<1x4x64x32xf16>) -> tensor<1x4x16x32xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 8, 4>}
      : tensor<1x4x16x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x16x32xf16>
  return %o : tensor<1x4x16x32xf16>
}

// -----

// Boolean mask broadcast over batch and heads, read through (0, 0, d2, d3), and
// combined with causal (Nq = Nk: the diagonal offset folds away).
// CHECK-DAG: #[[$MASK_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @mask_boolean_broadcast(
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<1x1x16x16xi1>)
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: linalg.generic {indexing_maps = [#[[$MASK_MAP]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[M]] : tensor<1x1x16x16xi1>) outs(%{{.+}} : tensor<2x4x16x16xf32>)
// CHECK-NEXT: ^bb0(%[[MV:.+]]: i1, %{{.+}}: f32):
// CHECK-DAG: %[[ROW:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[COL:.+]] = linalg.index 3 : index
// CHECK: %[[DELTA:.+]] = arith.subi %[[COL]], %[[ROW]] : index
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf
// CHECK-NEXT: %[[CAUSAL:.+]] = arith.cmpi sle, %[[DELTA]], %[[C0]] : index
// CHECK-NEXT: %[[KEEP:.+]] = arith.andi %[[MV]], %[[CAUSAL]] : i1
// CHECK-NEXT: %[[MASKED:.+]] = arith.select %[[KEEP]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[MASKED]] : f32
func.func @mask_boolean_broadcast(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x16x32xf16>,
                                  %v: tensor<2x4x16x32xf16>, %m: tensor<1x1x16x16xi1>)
    -> tensor<2x4x16x32xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x16x16xi1>) {causal}
      : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>
      -> tensor<2x4x16x32xf16>
  return %o : tensor<2x4x16x32xf16>
}

// -----

// Additive bf16 mask broadcast over heads only: (d0, 0, d2, d3), extended and
// added after scaling; no select.
// CHECK-DAG: #[[$MASK_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @mask_additive(
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<2x1x16x16xbf16>)
// CHECK: linalg.generic {indexing_maps = [#[[$MASK_MAP]], #{{.+}}], {{.*}} ins(%[[M]] : tensor<2x1x16x16xbf16>)
// CHECK-NEXT: ^bb0(%[[MV:.+]]: bf16, %[[S:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]], %{{.+}} : f32
// CHECK-NEXT: %[[MF:.+]] = arith.extf %[[MV]] : bf16 to f32
// CHECK-NEXT: %[[ADDED:.+]] = arith.addf %[[SCALED]], %[[MF]] : f32
// CHECK-NEXT: linalg.yield %[[ADDED]] : f32
func.func @mask_additive(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x16x32xf16>,
                         %v: tensor<2x4x16x32xf16>, %m: tensor<2x1x16x16xbf16>)
    -> tensor<2x4x16x32xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x1x16x16xbf16>)
      : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>
      -> tensor<2x4x16x32xf16>
  return %o : tensor<2x4x16x32xf16>
}

// -----

// Softcap: s -> cap * tanh(s / cap) after scaling. f32 inputs: no extf.
// lse = Z + log(L) from the row max and row sum.
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @softcap_lse(
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: arith.extf
// CHECK: linalg.generic {{.*}}]} outs(%{{.+}} : tensor<1x4x16x16xf32>) {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]], %{{.+}} : f32
// CHECK-NEXT: %[[DIV:.+]] = arith.divf %[[SCALED]], %[[CAP]] : f32
// CHECK-NEXT: %[[TANH:.+]] = math.tanh %[[DIV]] : f32
// CHECK-NEXT: %[[CAPPED:.+]] = arith.mulf %[[TANH]], %[[CAP]] : f32
// CHECK-NEXT: linalg.yield %[[CAPPED]] : f32
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x4x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x4x16xf32>)
// CHECK: arith.addf
// CHECK: %[[OUT:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[SUM]] : {{.*}}) outs(%{{.+}} : tensor<1x4x16x32xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[LSE_EMPTY:.+]] = tensor.empty() : tensor<1x4x16xf32>
// CHECK: %[[LSE:.+]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$ID3]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[MAX]], %[[SUM]] : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%[[LSE_EMPTY]] : tensor<1x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[MV:.+]]: f32, %[[LV:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[M_IS_INF:.+]] = arith.cmpf oeq, %[[MV]], %[[NEG_INF]] : f32
// CHECK-NEXT: %[[Z:.+]] = arith.select %[[M_IS_INF]], %[[ZERO]], %[[MV]] : f32
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[LV]] : f32
// CHECK-NEXT: %[[LSE_V:.+]] = arith.addf %[[Z]], %[[LOG]] : f32
// CHECK-NEXT: linalg.yield %[[LSE_V]] : f32
// CHECK: return %[[OUT]], %[[LSE]] : tensor<1x4x16x32xf32>, tensor<1x4x16xf32>
func.func @softcap_lse(%q: tensor<1x4x16x32xf32>, %k: tensor<1x4x16x32xf32>,
                       %v: tensor<1x4x16x32xf32>)
    -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>) {
  %o, %l = fa.attention %q, %k, %v {softcap = 30.0 : f32}
      : tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>
      -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
  return %o, %l : tensor<1x4x16x32xf32>, tensor<1x4x16xf32>
}

// -----

// FP8: the score factor is (q_descale * k_descale) * scale, the output is
// multiplied by v_descale after the division by L and before the empty-row
// select.
// CHECK-LABEL: func.func @fp8_descale(
// CHECK-SAME: %[[QD:[a-zA-Z0-9_]+]]: f32, %[[KD:[a-zA-Z0-9_]+]]: f32, %[[VD:[a-zA-Z0-9_]+]]: f32)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.176776692 : f32
// CHECK: %[[QKD:.+]] = arith.mulf %[[QD]], %[[KD]] : f32
// CHECK-NEXT: %[[FACTOR:.+]] = arith.mulf %[[QKD]], %[[SCALE]] : f32
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: ^bb0(%[[S:.+]]: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]], %[[FACTOR]] : f32
// CHECK-NEXT: linalg.yield %[[SCALED]] : f32
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: %[[DIV:.+]] = arith.divf
// CHECK-NEXT: %[[DESCALED:.+]] = arith.mulf %[[DIV]], %[[VD]] : f32
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %{{.+}}, %[[ZERO]], %[[DESCALED]] : f32
// CHECK-NEXT: %[[TRUNC:.+]] = arith.truncf %[[SAFE]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[TRUNC]] : bf16
func.func @fp8_descale(%q: tensor<1x4x16x32xf8E4M3FN>, %k: tensor<1x4x16x32xf8E4M3FN>,
                       %v: tensor<1x4x16x32xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32)
    -> tensor<1x4x16x32xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd)
      : tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>, tensor<1x4x16x32xf8E4M3FN>
      -> tensor<1x4x16x32xbf16>
  return %o : tensor<1x4x16x32xbf16>
}

// -----

// Dynamic B, H, N: sizes from tensor.dim, the head ratio and the diagonal
// offset computed at run time.
// CHECK-LABEL: func.func @dynamic_dims(
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<?x?x?x32xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<?x?x?x32xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<?x?x?x32xf16>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]] : tensor<?x?x?x32xf16>
// CHECK-DAG: %[[HQ:.+]] = tensor.dim %[[Q]], %[[C1]] : tensor<?x?x?x32xf16>
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %[[Q]], %[[C2]] : tensor<?x?x?x32xf16>
// CHECK-DAG: %[[NK:.+]] = tensor.dim %[[K]], %[[C2]] : tensor<?x?x?x32xf16>
// CHECK-DAG: %[[HKV:.+]] = tensor.dim %[[K]], %[[C1]] : tensor<?x?x?x32xf16>
// CHECK: %[[RATIO:.+]] = arith.divui %{{.+}}, %[[HKV]] : index
// CHECK: %[[DIAG:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK: %[[S_EMPTY:.+]] = tensor.empty(%[[B]], %[[HQ]], %[[NQ]], %[[NK]]) : tensor<?x?x?x?xf32>
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[G:.+]] = arith.divui %[[H]], %[[RATIO]] : index
// CHECK: tensor.extract %[[K]][%{{.+}}, %[[G]], %{{.+}}, %{{.+}}] : tensor<?x?x?x32xf16>
// CHECK: %[[ROW:.+]] = linalg.index 2 : index
// CHECK: arith.addi %[[ROW]], %[[DIAG]] : index
// CHECK: arith.cmpi sle
// CHECK: tensor.empty(%[[B]], %[[HQ]], %[[NQ]]) : tensor<?x?x?xf32>
// CHECK: %[[OUT:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?x?x32xf16>)
// CHECK: return %[[OUT]] : tensor<?x?x?x32xf16>
func.func @dynamic_dims(%q: tensor<?x?x?x32xf16>, %k: tensor<?x?x?x32xf16>,
                        %v: tensor<?x?x?x32xf16>) -> tensor<?x?x?x32xf16> {
  %o = fa.attention %q, %k, %v {causal}
      : tensor<?x?x?x32xf16>, tensor<?x?x?x32xf16>, tensor<?x?x?x32xf16>
      -> tensor<?x?x?x32xf16>
  return %o : tensor<?x?x?x32xf16>
}
