// RUN: fa-opt %s --fa-tile-attention-for-chip | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a | FileCheck %s

// The chip's tiling is fa-tile-attention: every step carries the modifier
// regions and coords (convert-fa-to-nvgpu then rejects them, invalid.mlir).
// CHECK-LABEL: func.func @mask_mod
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in
// CHECK-COUNT-3: fa.online_attention {{.+}} coords(%[[B]], %[[H]], %{{.+}}, %{{.+}}) {{.+}} mask_mod {
// CHECK-NOT: fa.online_attention
func.func @mask_mod(%q: tensor<1x2x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                    %v: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %o = fa.attention %q, %k, %v {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ne, %i, %j : index
    fa.yield %c : i1
  } : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
