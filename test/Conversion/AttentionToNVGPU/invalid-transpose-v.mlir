// transpose-v (fp8: V taken as stored and transposed in shared memory by the
// producer warpgroup, docs/FP8.md) where the kernel cannot do it: reported on
// the op (fa.sm90.transpose_v on the function, or the option, asks for it).
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a -verify-diagnostics

func.func @f16(%q: tensor<1x4x128x128xf16>, %k: tensor<1x1x128x128xf16>, %v: tensor<1x1x128x128xf16>) -> tensor<1x4x128x128xf16> attributes {fa.sm90.transpose_v = true} {
  // expected-error @+1 {{sm_90a kernel transposes V in shared memory (transpose-v) only for fp8 inputs (16-bit wgmma reads V as stored)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @no_producer(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.transpose_v = true, fa.sm90.warp_specialize = false} {
  // expected-error @+1 {{sm_90a transpose-v needs warp-specialize (the producer warpgroup transposes V)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @persistent(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.transpose_v = true, fa.sm90.persistent = true} {
  // expected-error @+1 {{sm_90a transpose-v supports one tile per CTA over contiguous K/V (not persistent, split-kv, varlen, kv_lens or pages)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @block_kv_256(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.transpose_v = true, fa.sm90.block_kv = 256 : i64, fa.sm90.stages = 2 : i64} {
  // expected-error @+1 {{sm_90a transpose-v needs block-kv 128 (one V^T tile of 128 keys per stage), got 256}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @one_stage(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.transpose_v = true, fa.sm90.stages = 1 : i64, fa.sm90.overlap = false} {
  // expected-error @+1 {{sm_90a transpose-v needs at least 2 K/V stages (the producer transposes block j while block j + 1 loads), got 1}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

// At head dim 256 a staging tile per stage does not fit beside the rings.
func.func @d256(%q: tensor<1x4x128x256xf8E4M3FN>, %k: tensor<1x1x128x256xf8E4M3FN>, %v: tensor<1x1x128x256xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x256xf16> attributes {fa.sm90.transpose_v = true} {
  // expected-error @+1 {{sm_90a kernel with 2 stages needs 295936 bytes of shared memory (at most 232448) at head dim 256 with 128-key K/V tiles and a V staging tile per stage (transpose-v): use fewer stages or a smaller block-kv}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x256xf8E4M3FN>, tensor<1x1x128x256xf8E4M3FN>, tensor<1x1x128x256xf8E4M3FN> -> tensor<1x4x128x256xf16>
  return %o : tensor<1x4x128x256xf16>
}
