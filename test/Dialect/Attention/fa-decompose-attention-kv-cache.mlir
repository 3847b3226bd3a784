// RUN: fa-opt %s --fa-decompose-attention --split-input-file | FileCheck %s

// The reference lowering of kv_lens(...) and pages(...): the pools are
// gathered into [B, Hkv, Ncap, D] through the page table (ids clamped into
// [0, P - 1]), then the keys j >= L_b = clamp(kv_lens[b], 0, Ncap) are set to
// -inf after the other modifiers, and the causal diagonal is L_b - Nq.

// CHECK-LABEL: func.func @paged_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x3x8xf16>, %[[K:.+]]: tensor<9x2x16x8xf16>, %[[V:.+]]: tensor<9x2x16x4xf16>, %[[LENS:.+]]: tensor<2xi32>, %[[T:.+]]: tensor<2x4xi32>)
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[KE:.+]] = tensor.empty() : tensor<2x2x64x8xf16>
// CHECK: %[[KG:.+]] = linalg.generic {{.+}} outs(%[[KE]] : tensor<2x2x64x8xf16>)
// CHECK: %[[B:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: %[[PI:.+]] = arith.divui %[[J]], %[[C16]] : index
// CHECK: %[[ID:.+]] = tensor.extract %[[T]][%[[B]], %[[PI]]] : tensor<2x4xi32>
// CHECK: %[[P:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: %[[PM:.+]] = arith.maxsi %[[P]], %[[C0]] : index
// CHECK: %[[PC:.+]] = arith.minsi %[[PM]], %[[C8]] : index
// CHECK: %[[G:.+]] = linalg.index 1 : index
// CHECK: %[[PO:.+]] = arith.remui %[[J]], %[[C16]] : index
// CHECK: %[[D:.+]] = linalg.index 3 : index
// CHECK: %[[E:.+]] = tensor.extract %[[K]][%[[PC]], %[[G]], %[[PO]], %[[D]]] : tensor<9x2x16x8xf16>
// CHECK: linalg.yield %[[E]] : f16
// CHECK: %[[VG:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<2x2x64x4xf16>)
// CHECK: tensor.extract %[[V]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<9x2x16x4xf16>
// CHECK: linalg.generic {{.+}} ins(%[[Q]] : tensor<2x4x3x8xf16>) outs(%{{.+}} : tensor<2x4x3x64xf32>)
// CHECK: tensor.extract %[[KG]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x2x64x8xf16>
// The modifiers: L_b, the diagonal L_b - Nq, the causal select, then j < L_b.
// CHECK: linalg.generic
// CHECK: %[[BI:.+]] = linalg.index 0 : index
// CHECK: %[[L32:.+]] = tensor.extract %[[LENS]][%[[BI]]] : tensor<2xi32>
// CHECK: %[[L:.+]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[LP:.+]] = arith.maxsi %[[L]], %[[C0]] : index
// CHECK: %[[LB:.+]] = arith.minsi %[[LP]], %[[C64]] : index
// CHECK: %[[DIAG:.+]] = arith.subi %[[LB]], %[[C3]] : index
// CHECK: arith.addi %{{.+}}, %[[DIAG]] : index
// CHECK: %[[BAND:.+]] = arith.select %{{.+}}, %{{.+}}, %[[NEGINF]] : f32
// CHECK: %[[JJ:.+]] = linalg.index 3 : index
// CHECK: %[[IN:.+]] = arith.cmpi slt, %[[JJ]], %[[LB]] : index
// CHECK: %[[S:.+]] = arith.select %[[IN]], %[[BAND]], %[[NEGINF]] : f32
// CHECK: linalg.yield %[[S]] : f32
// The value gather is what P V reads.
// CHECK: tensor.extract %[[VG]][
func.func @paged_causal(%q: tensor<2x4x3x8xf16>, %k: tensor<9x2x16x8xf16>, %v: tensor<9x2x16x4xf16>,
                        %lens: tensor<2xi32>, %table: tensor<2x4xi32>) -> tensor<2x4x3x4xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) pages(%table : tensor<2x4xi32>) {causal}
      : tensor<2x4x3x8xf16>, tensor<9x2x16x8xf16>, tensor<9x2x16x4xf16> -> tensor<2x4x3x4xf16>
  return %o : tensor<2x4x3x4xf16>
}

// -----

// kv_lens alone, no window: no gather, no diagonal; only j < L_b.
// CHECK-LABEL: func.func @kv_lens_only
// CHECK-SAME: (%{{.+}}: tensor<2x2x4x8xf32>, %[[K:.+]]: tensor<2x2x40x8xf32>, %{{.+}}: tensor<2x2x40x8xf32>, %[[LENS:.+]]: tensor<2xi32>)
// CHECK-NOT: tensor.empty() : tensor<2x2x40x8xf32>
// CHECK: tensor.extract %[[K]][
// CHECK: %[[L32:.+]] = tensor.extract %[[LENS]][%{{.+}}] : tensor<2xi32>
// CHECK-NOT: arith.subi
// CHECK: %[[LB:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: %[[IN:.+]] = arith.cmpi slt, %{{.+}}, %[[LB]] : index
// CHECK: arith.select %[[IN]]
func.func @kv_lens_only(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x40x8xf32>, %v: tensor<2x2x40x8xf32>,
                        %lens: tensor<2xi32>) -> tensor<2x2x4x8xf32> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>)
      : tensor<2x2x4x8xf32>, tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32> -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}
