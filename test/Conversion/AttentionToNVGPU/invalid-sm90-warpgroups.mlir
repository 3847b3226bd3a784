// Three consumer warpgroups (the tiled form's block-q 192): head dim 64 only
// (O, S and P of 64 rows in 160 registers per thread), 16-bit inputs, warp
// specialized (setmaxnreg shares the registers four ways), not split-kv.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip="chip=sm_90a block-q=192" --convert-fa-to-nvgpu=chip=sm_90a -verify-diagnostics
// RUN: not fa-opt %s -split-input-file --fa-tile-attention-for-chip="chip=sm_90a block-q=256" --convert-fa-to-nvgpu=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=BQ256
// BQ256: error: 'scf.forall' op sm_90a kernel needs the tiled form with block-q = 128 (2 consumer warpgroups) or 192 (3, at head dim 64), got 256

func.func @d128(%q: tensor<1x4x300x128xf16>, %k: tensor<1x2x200x128xf16>, %v: tensor<1x2x200x128xf16>) -> tensor<1x4x300x128xf16> {
  // expected-error @+1 {{sm_90a kernel with 3 consumer warpgroups (block-q 192) needs head dim 64 (160 registers per consumer thread), got 128}}
  %o = fa.attention %q, %k, %v {causal} : tensor<1x4x300x128xf16>, tensor<1x2x200x128xf16>, tensor<1x2x200x128xf16> -> tensor<1x4x300x128xf16>
  return %o : tensor<1x4x300x128xf16>
}

// -----

func.func @fp8(%q: tensor<1x4x128x64xf8E4M3FN>, %k: tensor<1x1x128x64xf8E4M3FN>, %v: tensor<1x1x128x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x64xf16> {
  // expected-error @+1 {{sm_90a kernel with 3 consumer warpgroups (block-q 192) does not support fp8 inputs (their descale blocks are 128 rows)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x64xf8E4M3FN>, tensor<1x1x128x64xf8E4M3FN>, tensor<1x1x128x64xf8E4M3FN> -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}

// -----

func.func @split_kv(%q: tensor<1x4x1x64xf16>, %k: tensor<1x1x4096x64xf16>, %v: tensor<1x1x4096x64xf16>) -> tensor<1x4x1x64xf16> attributes {fa.sm90.split_kv = true} {
  // expected-error @+1 {{sm_90a split-kv kernel needs 2 consumer warpgroups (block-q 128)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x1x64xf16>, tensor<1x1x4096x64xf16>, tensor<1x1x4096x64xf16> -> tensor<1x4x1x64xf16>
  return %o : tensor<1x4x1x64xf16>
}

// -----

func.func @no_warp_specialization(%q: tensor<1x4x300x64xf16>, %k: tensor<1x2x200x64xf16>, %v: tensor<1x2x200x64xf16>) -> tensor<1x4x300x64xf16> attributes {fa.sm90.warp_specialize = false} {
  // expected-error @+1 {{sm_90a kernel with 3 consumer warpgroups (block-q 192) needs warp-specialize (setmaxnreg shares the registers)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x300x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16> -> tensor<1x4x300x64xf16>
  return %o : tensor<1x4x300x64xf16>
}
