// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The issue's example: causal GQA (Hq = 8, Hkv = 2), f16.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x128x64xf16>, %[[K:[^:]+]]: tensor<2x2x128x64xf16>, %[[V:[^:]+]]: tensor<2x2x128x64xf16>, %[[O:[^:]+]]: tensor<2x8x128x64xf16>, %[[L:[^:]+]]: tensor<2x8x128xf32>, %[[DO:[^:]+]]: tensor<2x8x128x64xf16>)
// CHECK: %[[DQ:[^ ,]+]], %[[DK:[^ ,]+]], %[[DV:[^ ,]+]] = fa.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[DO]] {causal, scale = 1.250000e-01 : f32} : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128xf32>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>{{$}}
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// GENERIC-LABEL: sym_name = "causal_gqa"
// GENERIC: "fa.attention_grad"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>, scale = 1.250000e-01 : f32}>
func.func @causal_gqa(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                      %v: tensor<2x2x128x64xf16>, %o: tensor<2x8x128x64xf16>,
                      %lse: tensor<2x8x128xf32>, %do: tensor<2x8x128x64xf16>)
    -> (tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 0.125 : f32}
      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>,
        tensor<2x8x128x64xf16>, tensor<2x8x128xf32>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return %dq, %dk, %dv : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
}

// The forward's mask operand: a key-padding mask [B, 1, 1, Nk] (i1).
// CHECK-LABEL: func.func @padding_mask
// CHECK: fa.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<2x1x1x128xi1>) {causal} : tensor<2x8x128x64xf16>
// GENERIC-LABEL: sym_name = "padding_mask"
// GENERIC: "fa.attention_grad"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0>}>
func.func @padding_mask(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                        %v: tensor<2x2x128x64xf16>, %o: tensor<2x8x128x64xf16>,
                        %lse: tensor<2x8x128xf32>, %do: tensor<2x8x128x64xf16>,
                        %m: tensor<2x1x1x128xi1>)
    -> (tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do mask(%m : tensor<2x1x1x128xi1>) {causal}
      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>,
        tensor<2x8x128x64xf16>, tensor<2x8x128xf32>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return %dq, %dk, %dv : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
}

// Window and softcap, bf16, Dv != D, Nq != Nk.
// CHECK-LABEL: func.func @window_softcap
// CHECK: fa.attention_grad %{{.+}} {softcap = 3.000000e+01 : f32, window = array<i64: 16, 4>} : tensor<1x4x32x64xbf16>, tensor<1x4x48x64xbf16>, tensor<1x4x48x32xbf16>, tensor<1x4x32x32xbf16>, tensor<1x4x32xf32>, tensor<1x4x32x32xbf16> -> tensor<1x4x32x64xbf16>, tensor<1x4x48x64xbf16>, tensor<1x4x48x32xbf16>{{$}}
func.func @window_softcap(%q: tensor<1x4x32x64xbf16>, %k: tensor<1x4x48x64xbf16>,
                          %v: tensor<1x4x48x32xbf16>, %o: tensor<1x4x32x32xbf16>,
                          %lse: tensor<1x4x32xf32>, %do: tensor<1x4x32x32xbf16>)
    -> tensor<1x4x48x64xbf16> {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {window = array<i64: 16, 4>, softcap = 30.0 : f32}
      : tensor<1x4x32x64xbf16>, tensor<1x4x48x64xbf16>, tensor<1x4x48x32xbf16>,
        tensor<1x4x32x32xbf16>, tensor<1x4x32xf32>, tensor<1x4x32x32xbf16>
      -> tensor<1x4x32x64xbf16>, tensor<1x4x48x64xbf16>, tensor<1x4x48x32xbf16>
  return %dk : tensor<1x4x48x64xbf16>
}

// Dynamic B, H, N (verified; not lowered yet); f32; multi-query (Hkv = 1).
// CHECK-LABEL: func.func @dynamic_mqa
// CHECK: fa.attention_grad %{{.+}} : tensor<?x?x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>{{$}}
func.func @dynamic_mqa(%q: tensor<?x?x?x16xf32>, %k: tensor<?x1x?x16xf32>,
                       %v: tensor<?x1x?x16xf32>, %o: tensor<?x?x?x16xf32>,
                       %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x16xf32>)
    -> tensor<?x?x?x16xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do
      : tensor<?x?x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16xf32>
      -> tensor<?x?x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>
  return %dq : tensor<?x?x?x16xf32>
}

// varlen: the forward's offsets after grad_out; packed tensors in batch 1.
// CHECK-LABEL: func.func @varlen
// CHECK: fa.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} varlen(%{{.+}}, %{{.+}} : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>
// GENERIC: sym_name = "varlen"
// GENERIC: "fa.attention_grad"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 2, 0>}>
func.func @varlen(%q: tensor<1x4x?x16xbf16>, %k: tensor<1x2x?x16xbf16>, %o: tensor<1x4x?x16xbf16>,
                  %lse: tensor<1x4x?xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> tensor<1x2x?x16xbf16> {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %k, %o, %lse, %o varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>,
        tensor<1x4x?x16xbf16>, tensor<1x4x?xf32>, tensor<1x4x?x16xbf16>
      -> tensor<1x4x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>
  return %dk : tensor<1x2x?x16xbf16>
}
