// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every form of the tile ops of the FlashAttention form (fa.online_attention,
// fa.kv_block_range): printed, reparsed, and through the generic form.

// Static tiles, no optional clause.
// CHECK-LABEL: func.func @plain_static
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<32x64xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<16x64xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<16x64xf16>, %[[M:[a-zA-Z0-9_]+]]: tensor<32xf32>, %[[L:[a-zA-Z0-9_]+]]: tensor<32xf32>, %[[A:[a-zA-Z0-9_]+]]: tensor<32x64xf32>)
// CHECK: %[[M1:.+]], %[[L1:.+]], %[[A1:.+]] = fa.online_attention %[[Q]], %[[K]], %[[V]] into %[[M]], %[[L]], %[[A]] {scale = 1.250000e-01 : f32} : tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32x64xf32>{{$}}
// CHECK: return %[[M1]], %[[L1]], %[[A1]]
// GENERIC-LABEL: sym_name = "plain_static"
// GENERIC: "fa.online_attention"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}> : (tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>)
func.func @plain_static(%q: tensor<32x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>,
                        %m: tensor<32xf32>, %l: tensor<32xf32>, %a: tensor<32x64xf32>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32}
      : tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %a1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}

// Dynamic rows (query block tail) and key block length (key block tail);
// the head dims differ (D = 128, Dv = 64).
// CHECK-LABEL: func.func @plain_dynamic
// CHECK: fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.0883883461 : f32} : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?x64xf32>{{$}}
// GENERIC-LABEL: sym_name = "plain_dynamic"
// GENERIC: "fa.online_attention"{{.+}} : (tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
func.func @plain_dynamic(%q: tensor<?x128xbf16>, %k: tensor<?x128xbf16>, %v: tensor<?x64xbf16>,
                         %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.0883883461 : f32}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// f32 inputs: the state type is the input type.
// CHECK-LABEL: func.func @f32_inputs
// CHECK: fa.online_attention {{.+}} : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8xf32>, tensor<8x32xf32>{{$}}
func.func @f32_inputs(%q: tensor<8x32xf32>, %k: tensor<8x32xf32>, %v: tensor<8x32xf32>,
                      %m: tensor<8xf32>, %l: tensor<8xf32>, %a: tensor<8x32xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8x32xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 1.0 : f32}
      : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8xf32>, tensor<8x32xf32>
  return %m1, %l1, %a1 : tensor<8xf32>, tensor<8xf32>, tensor<8x32xf32>
}

// Boolean mask tile (keep where true).
// CHECK-LABEL: func.func @mask_i1
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<?x?xi1>)
// CHECK: fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}}, %{{.+}} mask(%[[MASK]] : tensor<?x?xi1>) {scale = 1.250000e-01 : f32} : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>{{$}}
// GENERIC-LABEL: sym_name = "mask_i1"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>
// GENERIC-SAME: tensor<?x?xi1>
func.func @mask_i1(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                   %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                   %mask: tensor<?x?xi1>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x?xi1>)
      {scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// A one-row mask tile: broadcast over the 32 query rows (a per-key mask).
// CHECK-LABEL: func.func @mask_one_row
// CHECK: fa.online_attention {{.+}} mask(%{{.+}} : tensor<1x16xi1>) {scale = 1.250000e-01 : f32} : tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32x64xf32>{{$}}
func.func @mask_one_row(%q: tensor<32x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>,
                        %m: tensor<32xf32>, %l: tensor<32xf32>, %a: tensor<32x64xf32>,
                        %mask: tensor<1x16xi1>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<1x16xi1>)
      {scale = 0.125 : f32}
      : tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %a1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}

// Additive f16 mask tile, static.
// CHECK-LABEL: func.func @mask_f16
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<32x16xf16>)
// CHECK: fa.online_attention {{.+}} mask(%[[MASK]] : tensor<32x16xf16>) {scale = 1.250000e-01 : f32} : tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32x64xf32>{{$}}
// GENERIC-LABEL: sym_name = "mask_f16"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>
// GENERIC-SAME: tensor<32x16xf16>
func.func @mask_f16(%q: tensor<32x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>,
                    %m: tensor<32xf32>, %l: tensor<32xf32>, %a: tensor<32x64xf32>,
                    %mask: tensor<32x16xf16>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<32x16xf16>)
      {scale = 0.125 : f32}
      : tensor<32x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %a1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}

// FP8: one descale factor (q_descale * k_descale, computed by the caller).
// CHECK-LABEL: func.func @descale_fp8
// CHECK-SAME: %[[D:[a-zA-Z0-9_]+]]: f32)
// CHECK: fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}}, %{{.+}} descale(%[[D]]) {scale = 1.250000e-01 : f32} : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>{{$}}
// GENERIC-LABEL: sym_name = "descale_fp8"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0>
// GENERIC-SAME: f32)
func.func @descale_fp8(%q: tensor<?x64xf8E4M3FN>, %k: tensor<?x64xf8E4M3FN>, %v: tensor<?x64xf8E4M3FN>,
                       %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %d: f32)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a descale(%d) {scale = 0.125 : f32}
      : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// Positional mask of a block straddling the causal diagonal.
// CHECK-LABEL: func.func @positions_causal
// CHECK-SAME: %[[R0:[a-zA-Z0-9_]+]]: index, %[[C0:[a-zA-Z0-9_]+]]: index, %[[DIAG:[a-zA-Z0-9_]+]]: index)
// CHECK: fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}}, %{{.+}} positions(%[[R0]], %[[C0]], %[[DIAG]]) {scale = 1.250000e-01 : f32, window = array<i64: -1, 0>} : tensor<?x64xf16>
// GENERIC-LABEL: sym_name = "positions_causal"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0>
// GENERIC-SAME: window = array<i64: -1, 0>
func.func @positions_causal(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                            %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                            %row0: index, %col0: index, %diag: index)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%row0, %col0, %diag)
      {scale = 0.125 : f32, window = array<i64: -1, 0>}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// Sliding window, bounded on both sides.
// CHECK-LABEL: func.func @positions_window
// CHECK: fa.online_attention {{.+}} positions(%{{.+}}, %{{.+}}, %{{.+}}) {scale = 1.250000e-01 : f32, window = array<i64: 32, 8>} : tensor<?x64xf16>
func.func @positions_window(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                            %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                            %row0: index, %col0: index, %diag: index)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a positions(%row0, %col0, %diag)
      {window = array<i64: 32, 8>, scale = 0.125 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// Softcap.
// CHECK-LABEL: func.func @softcap
// CHECK: fa.online_attention {{.+}} {scale = 1.250000e-01 : f32, softcap = 5.000000e+01 : f32} : tensor<?x64xf16>
// GENERIC-LABEL: sym_name = "softcap"
// GENERIC: softcap = 5.000000e+01 : f32
func.func @softcap(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                   %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a {scale = 0.125 : f32, softcap = 50.0 : f32}
      : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// Every clause at once, in the order mask, descale, positions.
// CHECK-LABEL: func.func @all_clauses
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<?x?xbf16>, %[[D:[a-zA-Z0-9_]+]]: f32, %[[R0:[a-zA-Z0-9_]+]]: index, %[[C0:[a-zA-Z0-9_]+]]: index, %[[DIAG:[a-zA-Z0-9_]+]]: index)
// CHECK: fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}}, %{{.+}} mask(%[[MASK]] : tensor<?x?xbf16>) descale(%[[D]]) positions(%[[R0]], %[[C0]], %[[DIAG]]) {scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 4, 0>} : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>{{$}}
// GENERIC-LABEL: sym_name = "all_clauses"
// GENERIC: "fa.online_attention"(%{{.+}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 4, 0>}> : (tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x?xbf16>, f32, index, index, index) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
func.func @all_clauses(%q: tensor<?x64xf8E4M3FN>, %k: tensor<?x64xf8E4M3FN>, %v: tensor<?x64xf8E4M3FN>,
                       %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>,
                       %mask: tensor<?x?xbf16>, %d: f32, %row0: index, %col0: index, %diag: index)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m, %l, %a mask(%mask : tensor<?x?xbf16>)
      descale(%d) positions(%row0, %col0, %diag)
      {window = array<i64: 4, 0>, softcap = 30.0 : f32, scale = 0.125 : f32}
      : tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?x64xf8E4M3FN>, tensor<?xf32>, tensor<?x64xf32>
  return %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// The state threaded through a loop, as fa-tile-attention builds it.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for {{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[A:.+]] = %{{.+}}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
// CHECK: %[[M1:.+]], %[[L1:.+]], %[[A1:.+]] = fa.online_attention %{{.+}}, %{{.+}}, %{{.+}} into %[[M]], %[[L]], %[[A]]
// CHECK: scf.yield %[[M1]], %[[L1]], %[[A1]]
func.func @in_loop(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %v: tensor<?x64xf16>,
                   %m: tensor<?xf32>, %l: tensor<?xf32>, %a: tensor<?x64xf32>, %n: index)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%mi = %m, %li = %l, %ai = %a)
      -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>) {
    %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %mi, %li, %ai {scale = 0.125 : f32}
        : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
    scf.yield %m1, %l1, %a1 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>
}

// Causal key/value block range.
// CHECK-LABEL: func.func @kv_block_range_causal
// CHECK-SAME: (%[[R0:[a-zA-Z0-9_]+]]: index, %[[R1:[a-zA-Z0-9_]+]]: index, %[[N:[a-zA-Z0-9_]+]]: index, %[[DIAG:[a-zA-Z0-9_]+]]: index)
// CHECK: %[[B:.+]], %[[FB:.+]], %[[FE:.+]], %[[E:.+]] = fa.kv_block_range rows[%[[R0]], %[[R1]]) keys %[[N]] diagonal %[[DIAG]] {block_kv = 64 : i64, window = array<i64: -1, 0>}{{$}}
// CHECK: return %[[B]], %[[FB]], %[[FE]], %[[E]]
// GENERIC-LABEL: sym_name = "kv_block_range_causal"
// GENERIC: "fa.kv_block_range"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{block_kv = 64 : i64, window = array<i64: -1, 0>}> : (index, index, index, index) -> (index, index, index, index)
func.func @kv_block_range_causal(%r0: index, %r1: index, %n: index, %diag: index)
    -> (index, index, index, index) {
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag
      {block_kv = 64 : i64, window = array<i64: -1, 0>}
  return %b, %fb, %fe, %e : index, index, index, index
}

// Sliding window, and no window at all (every block visible).
// CHECK-LABEL: func.func @kv_block_range_windows
// CHECK: fa.kv_block_range rows[%{{.+}}, %{{.+}}) keys %{{.+}} diagonal %{{.+}} {block_kv = 16 : i64, window = array<i64: 100, 3>}{{$}}
// CHECK: fa.kv_block_range rows[%{{.+}}, %{{.+}}) keys %{{.+}} diagonal %{{.+}} {block_kv = 1 : i64, window = array<i64: -1, -1>}{{$}}
// GENERIC-LABEL: sym_name = "kv_block_range_windows"
// GENERIC: <{block_kv = 16 : i64, window = array<i64: 100, 3>}>
// GENERIC: <{block_kv = 1 : i64, window = array<i64: -1, -1>}>
func.func @kv_block_range_windows(%r0: index, %r1: index, %n: index, %diag: index)
    -> (index, index, index, index, index, index, index, index) {
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag
      {window = array<i64: 100, 3>, block_kv = 16 : i64}
  %b2, %fb2, %fe2, %e2 = fa.kv_block_range rows [%r0, %r1) keys %n diagonal %diag
      {block_kv = 1 : i64, window = array<i64: -1, -1>}
  return %b, %fb, %fe, %e, %b2, %fb2, %fe2, %e2 : index, index, index, index, index, index, index, index
}
