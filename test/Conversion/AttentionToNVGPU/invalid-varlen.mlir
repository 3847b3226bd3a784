// What the kernels do not take with varlen yet is reported on the op.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a -verify-diagnostics
// RUN: not fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_80 --convert-fa-to-nvgpu=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_90a})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU

// SM80: error: {{.*}}the sm_80 kernel does not support varlen yet (sm_90a does)
// GPU: error: {{.*}}convert-fa-to-nvgpu{host-launch} does not support varlen yet (fa-to-gpu); compile the attention with fa-to-ptx and launch it through the manifest

// One offset tensor for queries and keys (self-attention) is fine; dynamic
// tiles are not.
func.func @dynamic_tiles(%q: tensor<1x8x?x128xf16>, %k: tensor<1x2x?x128xf16>, %c: tensor<?xi32>) -> tensor<1x8x?x128xf16> attributes {fa.sm90.dynamic_tiles = true} {
  // expected-error @+1 {{sm_90a kernel with dynamic tiles does not support varlen yet (dynamic-tiles=false)}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x8x?x128xf16>, tensor<1x2x?x128xf16>, tensor<1x2x?x128xf16> -> tensor<1x8x?x128xf16>
  return %o : tensor<1x8x?x128xf16>
}
