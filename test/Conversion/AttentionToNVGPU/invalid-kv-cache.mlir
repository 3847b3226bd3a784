// What the kernels do not take with kv_lens or pages yet is reported on the op.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a persistent=true" -verify-diagnostics
// RUN: not fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_80})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU

// GPU: error: {{.*}}convert-fa-to-nvgpu{host-launch} does not support pages yet (fa-to-gpu); compile the attention with fa-to-ptx and launch it through the manifest
// GPU: error: {{.*}}convert-fa-to-nvgpu{host-launch} does not support kv_lens yet (fa-to-gpu)

func.func @persistent_pages(%q: tensor<2x8x1x128xf16>, %k: tensor<32x2x16x128xf16>, %v: tensor<32x2x16x128xf16>, %lens: tensor<2xi32>, %table: tensor<2x16xi32>) -> tensor<2x8x1x128xf16> {
  // expected-error @+1 {{sm_90a persistent kernel does not support kv_lens or pages yet (persistent=false)}}
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) pages(%table : tensor<2x16xi32>) : tensor<2x8x1x128xf16>, tensor<32x2x16x128xf16>, tensor<32x2x16x128xf16> -> tensor<2x8x1x128xf16>
  return %o : tensor<2x8x1x128xf16>
}

// -----

func.func @lens_and_mask(%q: tensor<2x8x4x128xf16>, %k: tensor<2x2x256x128xf16>, %v: tensor<2x2x256x128xf16>, %lens: tensor<2xi32>, %m: tensor<1x1x4x256xf16>) -> tensor<2x8x4x128xf16> {
  // expected-error @+1 {{the sm_90a kernel does not support kv_lens together with a mask operand, score_mod / mask_mod or fp8 descales yet}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x4x256xf16>) kv_lens(%lens : tensor<2xi32>) : tensor<2x8x4x128xf16>, tensor<2x2x256x128xf16>, tensor<2x2x256x128xf16> -> tensor<2x8x4x128xf16>
  return %o : tensor<2x8x4x128xf16>
}
