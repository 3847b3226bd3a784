// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_80' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--fa-to-ptx=chip=sm_90a deterministic=1' -verify-diagnostics

// The varlen backward kernel is sm_90a's (fa-to-ptx-grad-varlen.mlir); the
// mma.sync kernel of sm_80 and the deterministic dQ (its turns count per
// batch and query block) refuse packed sequences on the op.

func.func @varlen(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>,
                  %o: tensor<1x4x?x64xf16>, %l: tensor<1x4x?xf32>, %do: tensor<1x4x?x64xf16>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>) {
  // expected-error-re @+1 {{{{convert-fa-to-nvgpu: the backward kernel for packed variable-length sequences \(varlen\) (is sm_90a's \(chip=sm_90a\)|has no deterministic dQ yet); the CPU pipeline \(fa-to-cpu\) lowers it}}}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x4x?x64xf16>, tensor<1x4x?xf32>, tensor<1x4x?x64xf16> -> tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
  return %dq, %dk, %dv : tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
}

// -----

// With regions too (sm_90a applies them, positions within the sequence:
// fa-to-ptx-varlen-modifiers-ptxas.mlir): the same two refusals.
func.func @varlen_mask_mod(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>,
                  %o: tensor<1x4x?x64xf16>, %l: tensor<1x4x?xf32>, %do: tensor<1x4x?x64xf16>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>) {
  // expected-error-re @+1 {{{{convert-fa-to-nvgpu: the backward kernel for packed variable-length sequences \(varlen\) (is sm_90a's \(chip=sm_90a\)|has no deterministic dQ yet); the CPU pipeline \(fa-to-cpu\) lowers it}}}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    fa.yield %keep : i1
  } : tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x4x?x64xf16>, tensor<1x4x?xf32>, tensor<1x4x?x64xf16> -> tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
  return %dq, %dk, %dv : tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
}
