// What the in-kernel split-KV kernel does not take yet is reported on the op
// (fa.sm90.split_kv on the function asks for it).
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a -verify-diagnostics
// RUN: not fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_90a split-kv=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU

// GPU: error: {{.*}}convert-fa-to-nvgpu{host-launch} does not support split-kv yet (fa-to-gpu); compile the attention with fa-to-ptx and launch it through the manifest

func.func @fp8(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.split_kv = true} {
  // expected-error @+1 {{sm_90a split-kv kernel does not support fp8 inputs yet (split-kv=false)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @varlen(%q: tensor<1x8x?x128xf16>, %k: tensor<1x2x?x128xf16>, %c: tensor<?xi32>) -> tensor<1x8x?x128xf16> attributes {fa.sm90.split_kv = true} {
  // expected-error @+1 {{sm_90a split-kv kernel does not support varlen yet (split-kv=false)}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x8x?x128xf16>, tensor<1x2x?x128xf16>, tensor<1x2x?x128xf16> -> tensor<1x8x?x128xf16>
  return %o : tensor<1x8x?x128xf16>
}

// -----

// expected-error @+1 {{sm_90a schedule: split-kv=true (attribute fa.sm90.split_kv of function @persistent) runs one tile per CTA, but persistent=true (attribute fa.sm90.persistent of function @persistent)}}
func.func @persistent(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> attributes {fa.sm90.split_kv = true, fa.sm90.persistent = true} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// The host launch (fa-to-gpu{split-kv=true}) has no num_splits nor workspaces.
func.func @host_launch(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x512x64xf16>, %v: tensor<2x2x512x64xf16>) -> tensor<2x8x1x64xf16> attributes {fa.sm90.split_kv = true} {
  %o = fa.attention %q, %k, %v : tensor<2x8x1x64xf16>, tensor<2x2x512x64xf16>, tensor<2x2x512x64xf16> -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

