// The K/V tile of the sm_90a kernel is the tiled form's block-kv
// (fa-tile-attention-for-chip{block-kv}, fa-to-ptx{block-kv}); the kernel
// rejects sizes its wgmma chain cannot take.
// RUN: fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=100" --convert-fa-to-nvgpu="chip=sm_90a" -verify-diagnostics
// RUN: not fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=176" --convert-fa-to-nvgpu="chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=SMEMP

// SMEMP: sm_90a kernel supports K/V tiles of 16 to 256 keys in steps of 16 (of 64 with P through shared memory), got 176

// The @block_kv_100 error also names the tile size.
func.func @block_kv(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.p_from_registers = false} {
  // expected-error @+1 {{sm_90a kernel supports K/V tiles of 16 to 256 keys in steps of 16 (of 64 with P through shared memory), got 100}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
