// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @basic
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x128x64xf16>, %[[K:.+]]: tensor<2x8x128x64xf16>, %[[V:.+]]: tensor<2x8x128x64xf16>)
// CHECK: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16>{{$}}
// CHECK: return %[[O]]
// GENERIC-LABEL: sym_name = "basic"
// GENERIC: "fa.attention"(%{{.+}}, %{{.+}}, %{{.+}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}>
func.func @basic(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                 %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %o = fa.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @causal_scale_gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x128x64xf16>, %[[K:.+]]: tensor<2x2x128x64xf16>, %[[V:.+]]: tensor<2x2x128x64xf16>)
// CHECK: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 1.250000e-01 : f32} : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>
// CHECK: return %[[O]]
// GENERIC-LABEL: sym_name = "causal_scale_gqa"
// GENERIC: "fa.attention"(%{{.+}}, %{{.+}}, %{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}>
func.func @causal_scale_gqa(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                            %v: tensor<2x2x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %o = fa.attention %q, %k, %v {causal, scale = 1.250000e-01 : f32} : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// Multi-query: one K/V head for all query heads.
// CHECK-LABEL: func.func @mqa
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x16x32x64xbf16>, tensor<1x1x32x64xbf16>, tensor<1x1x32x64xbf16> -> tensor<1x16x32x64xbf16>
func.func @mqa(%q: tensor<1x16x32x64xbf16>, %k: tensor<1x1x32x64xbf16>,
               %v: tensor<1x1x32x64xbf16>) -> tensor<1x16x32x64xbf16> {
  %o = fa.attention %q, %k, %v
      : tensor<1x16x32x64xbf16>, tensor<1x1x32x64xbf16>, tensor<1x1x32x64xbf16>
      -> tensor<1x16x32x64xbf16>
  return %o : tensor<1x16x32x64xbf16>
}

// CHECK-LABEL: func.func @window
// CHECK: %[[O:.+]] = fa.attention %{{.+}}, %{{.+}}, %{{.+}} {window = array<i64: 32, 16>} : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16> -> tensor<1x4x64x32xf16>
// CHECK: return %[[O]]
// GENERIC-LABEL: sym_name = "window"
// GENERIC: window = array<i64: 32, 16>
func.func @window(%q: tensor<1x4x64x32xf16>, %k: tensor<1x4x64x32xf16>,
                  %v: tensor<1x4x64x32xf16>) -> tensor<1x4x64x32xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 32, 16>}
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xf16>
  return %o : tensor<1x4x64x32xf16>
}

// CHECK-LABEL: func.func @window_unbounded_causal
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, window = array<i64: -1, 0>}
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, window = array<i64: 8, -1>}
func.func @window_unbounded_causal(%q: tensor<1x4x64x32xf16>, %k: tensor<1x4x64x32xf16>,
                                   %v: tensor<1x4x64x32xf16>)
    -> (tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>) {
  %o0 = fa.attention %q, %k, %v {causal, window = array<i64: -1, 0>}
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xf16>
  %o1 = fa.attention %q, %k, %v {causal, window = array<i64: 8, -1>}
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xf16>
  return %o0, %o1 : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
}

// CHECK-LABEL: func.func @softcap
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {softcap = 5.000000e+01 : f32} : tensor<1x4x64x32xbf16>, tensor<1x4x64x32xbf16>, tensor<1x4x64x32xbf16> -> tensor<1x4x64x32xbf16>
// GENERIC-LABEL: sym_name = "softcap"
// GENERIC: softcap = 5.000000e+01 : f32
func.func @softcap(%q: tensor<1x4x64x32xbf16>, %k: tensor<1x4x64x32xbf16>,
                   %v: tensor<1x4x64x32xbf16>) -> tensor<1x4x64x32xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 50.0 : f32}
      : tensor<1x4x64x32xbf16>, tensor<1x4x64x32xbf16>, tensor<1x4x64x32xbf16>
      -> tensor<1x4x64x32xbf16>
  return %o : tensor<1x4x64x32xbf16>
}

// CHECK-LABEL: func.func @mask_additive
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<2x8x128x256xf32>
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<2x8x128x256xf32>) : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16> -> tensor<2x8x128x64xf16>
// GENERIC-LABEL: sym_name = "mask_additive"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>
func.func @mask_additive(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x256x64xf16>,
                         %v: tensor<2x2x256x64xf16>, %m: tensor<2x8x128x256xf32>)
    -> tensor<2x8x128x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x8x128x256xf32>)
      : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>
      -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// A key-padding mask: one row per sequence, broadcast over the heads and the
// query rows.
// CHECK-LABEL: func.func @mask_bool_row_broadcast
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<2x1x1x256xi1>) {causal}
func.func @mask_bool_row_broadcast(
    %q: tensor<2x8x128x64xf16>, %k: tensor<2x2x256x64xf16>,
    %v: tensor<2x2x256x64xf16>, %m: tensor<2x1x1x256xi1>) -> tensor<2x8x128x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x1x1x256xi1>) {causal}
      : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>
      -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @mask_additive_f16_head_broadcast
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<2x1x128x256xf16>) {causal}
func.func @mask_additive_f16_head_broadcast(
    %q: tensor<2x8x128x64xf16>, %k: tensor<2x2x256x64xf16>,
    %v: tensor<2x2x256x64xf16>, %m: tensor<2x1x128x256xf16>) -> tensor<2x8x128x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<2x1x128x256xf16>) {causal}
      : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>
      -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @mask_boolean_broadcast
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<1x1x128x128xi1>
// CHECK: %[[O:[a-z0-9_]+]], %[[L:[a-z0-9_]+]] = fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x128x128xi1>) {window = array<i64: 32, 0>} : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16> -> (tensor<2x8x128x64xf32>, tensor<2x8x128xf32>)
// CHECK: return %[[O]], %[[L]]
func.func @mask_boolean_broadcast(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                                  %v: tensor<2x2x128x64xf16>, %m: tensor<1x1x128x128xi1>)
    -> (tensor<2x8x128x64xf32>, tensor<2x8x128xf32>) {
  %o2, %lse = fa.attention %q, %k, %v mask(%m : tensor<1x1x128x128xi1>) {window = array<i64: 32, 0>}
      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
      -> (tensor<2x8x128x64xf32>, tensor<2x8x128xf32>)
  return %o2, %lse : tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
}

// CHECK-LABEL: func.func @lse
// CHECK: %[[O:[a-z0-9_]+]], %[[L:[a-z0-9_]+]] = fa.attention %{{.+}}, %{{.+}}, %{{.+}} {causal} : tensor<1x4x16x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32> -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
// CHECK: return %[[O]], %[[L]]
// GENERIC-LABEL: sym_name = "lse"
// GENERIC: "fa.attention"{{.*}} -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
func.func @lse(%q: tensor<1x4x16x32xf32>, %k: tensor<1x4x64x32xf32>,
               %v: tensor<1x4x64x32xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal}
      : tensor<1x4x16x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
      -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
  return %o, %lse : tensor<1x4x16x32xf32>, tensor<1x4x16xf32>
}

// CHECK-LABEL: func.func @fp8_descale
// CHECK-SAME: %[[QD:[a-zA-Z0-9_]+]]: f32, %[[KD:[a-zA-Z0-9_]+]]: f32, %[[VD:[a-zA-Z0-9_]+]]: f32
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} descale(%[[QD]], %[[KD]], %[[VD]]) {causal} : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xbf16>
// GENERIC-LABEL: sym_name = "fp8_descale"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0>
func.func @fp8_descale(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>,
                       %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32)
    -> tensor<1x4x128x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal}
      : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>
      -> tensor<1x4x128x128xbf16>
  return %o : tensor<1x4x128x128xbf16>
}

// Every clause at once, in the documented order.
// CHECK-LABEL: func.func @fp8_mask_descale_lse
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<1x1x128x128xi1>, %[[QD:[a-zA-Z0-9_]+]]: f32, %[[KD:[a-zA-Z0-9_]+]]: f32, %[[VD:[a-zA-Z0-9_]+]]: f32
// CHECK: %[[O:[a-z0-9_]+]], %[[L:[a-z0-9_]+]] = fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x128x128xi1>) descale(%[[QD]], %[[KD]], %[[VD]]) {scale = 5.000000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 64, 64>} : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> (tensor<1x4x128x128xf16>, tensor<1x4x128xf32>)
// GENERIC-LABEL: sym_name = "fp8_mask_descale_lse"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>
func.func @fp8_mask_descale_lse(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>,
                                %v: tensor<1x1x128x128xf8E4M3FN>, %m: tensor<1x1x128x128xi1>,
                                %qd: f32, %kd: f32, %vd: f32)
    -> (tensor<1x4x128x128xf16>, tensor<1x4x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v mask(%m : tensor<1x1x128x128xi1>) descale(%qd, %kd, %vd)
      {scale = 0.5 : f32, softcap = 30.0 : f32, window = array<i64: 64, 64>}
      : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>
      -> (tensor<1x4x128x128xf16>, tensor<1x4x128xf32>)
  return %o, %lse : tensor<1x4x128x128xf16>, tensor<1x4x128xf32>
}

// CHECK-LABEL: func.func @dynamic_dims
// CHECK: %[[O:[a-z0-9_]+]], %[[L:[a-z0-9_]+]] = fa.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<?x1x?x?xbf16>) {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
func.func @dynamic_dims(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>,
                        %v: tensor<?x?x?x64xf16>, %m: tensor<?x1x?x?xbf16>)
    -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v mask(%m : tensor<?x1x?x?xbf16>) {causal}
      : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
      -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

// Static and dynamic dims mixed between operands.
// CHECK-LABEL: func.func @mixed_static_dynamic
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<2x?x512x64xf16> -> tensor<?x8x?x64xf16>
func.func @mixed_static_dynamic(%q: tensor<2x8x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                                %v: tensor<2x?x512x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v
      : tensor<2x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<2x?x512x64xf16>
      -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// CHECK-LABEL: func.func @value_head_dim
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x4x64x192xbf16>, tensor<1x4x64x192xbf16>, tensor<1x4x64x128xbf16> -> tensor<1x4x64x128xbf16>
func.func @value_head_dim(%q: tensor<1x4x64x192xbf16>, %k: tensor<1x4x64x192xbf16>,
                          %v: tensor<1x4x64x128xbf16>) -> tensor<1x4x64x128xbf16> {
  %o = fa.attention %q, %k, %v
      : tensor<1x4x64x192xbf16>, tensor<1x4x64x192xbf16>, tensor<1x4x64x128xbf16>
      -> tensor<1x4x64x128xbf16>
  return %o : tensor<1x4x64x128xbf16>
}

// CHECK-LABEL: func.func @output_types
// CHECK: fa.attention {{.+}} -> tensor<1x4x64x32xbf16>
// CHECK: fa.attention {{.+}} -> tensor<1x4x64x32xf32>
// CHECK: fa.attention {{.+}} : tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32> -> tensor<1x4x64x32xf16>
func.func @output_types(%q: tensor<1x4x64x32xf16>, %k: tensor<1x4x64x32xf16>,
                        %v: tensor<1x4x64x32xf16>, %q32: tensor<1x4x64x32xf32>,
                        %k32: tensor<1x4x64x32xf32>, %v32: tensor<1x4x64x32xf32>)
    -> (tensor<1x4x64x32xbf16>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf16>) {
  %o0 = fa.attention %q, %k, %v
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xbf16>
  %o1 = fa.attention %q, %k, %v
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xf32>
  %o2 = fa.attention %q32, %k32, %v32
      : tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
      -> tensor<1x4x64x32xf16>
  return %o0, %o1, %o2 : tensor<1x4x64x32xbf16>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf16>
}

// Dialect-prefixed discardable attributes are kept.
// CHECK-LABEL: func.func @discardable_attr
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, test.tag = "kept"}
// GENERIC-LABEL: sym_name = "discardable_attr"
// GENERIC: "fa.attention"{{.*}} <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> {test.tag = "kept"}
func.func @discardable_attr(%q: tensor<1x4x64x32xf16>, %k: tensor<1x4x64x32xf16>,
                            %v: tensor<1x4x64x32xf16>) -> tensor<1x4x64x32xf16> {
  %o = fa.attention %q, %k, %v {causal, test.tag = "kept"}
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xf16>
  return %o : tensor<1x4x64x32xf16>
}

// The generic form parses as well.
// CHECK-LABEL: func.func @generic_input
// CHECK: %[[O:.+]] = fa.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 2.500000e-01 : f32} : tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16> -> tensor<1x2x8x16xf16>
func.func @generic_input(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>,
                         %v: tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16> {
  %o = "fa.attention"(%q, %k, %v)
      <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>, scale = 0.25 : f32}>
      : (tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>)
      -> tensor<1x2x8x16xf16>
  return %o : tensor<1x2x8x16xf16>
}
