// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=2" -verify-diagnostics
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=4" -split-input-file 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3" -split-input-file 2>&1 | FileCheck %s --check-prefix=SMEMP
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=5" -split-input-file 2>&1 | FileCheck %s --check-prefix=FIVE

// FIVE: error: convert-fa-to-nvgpu option 'stages=5' must be 0 (auto) or from 1 to 4
// With P in registers (default) d128 fits 3 stages (230400 bytes), not 4;
// with P through shared memory (2 x 16 KiB more) not 3.
// SMEM: sm_90a kernel with 4 stages needs 295936 bytes of shared memory (at most 232448)
// SMEMP: sm_90a kernel with 3 stages needs 263168 bytes of shared memory (at most 232448)

func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{sm_90a kernel needs f16, bf16 or f8E4M3FN inputs}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

func.func @d96(%q: tensor<1x1x64x96xf16>, %k: tensor<1x1x64x96xf16>, %v: tensor<1x1x64x96xf16>) -> tensor<1x1x64x96xf16> {
  // expected-error @+1 {{sm_90a kernel supports head dim 64, 128 or 256, got 96}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x96xf16>, tensor<1x1x64x96xf16>, tensor<1x1x64x96xf16> -> tensor<1x1x64x96xf16>
  return %o : tensor<1x1x64x96xf16>
}

// -----

// Sliding windows are supported (convert-fa-to-nvgpu-sm90-window.mlir).
func.func @window(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 16, 8>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// fp8 takes no modifier yet (the 16-bit kernels take softcap, masks and
// regions: fa-to-ptx-sm90-modifiers-ptxas.mlir).
func.func @fp8_softcap(%q: tensor<1x1x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x1x128x128xf16> {
  // expected-error @+1 {{sm_90a fp8 kernel does not support softcap, a mask operand or score_mod / mask_mod yet}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {softcap = 30.0 : f32} : tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x1x128x128xf16>
  return %o : tensor<1x1x128x128xf16>
}

// -----

func.func @d128(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}

// -----

func.func @d128_smem_p(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> attributes {fa.sm90.p_from_registers = false} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}

// -----

// fp8: head dims 64, 128 and 256.
func.func @fp8_d96(%q: tensor<1x4x128x96xf8E4M3FN>, %k: tensor<1x1x128x96xf8E4M3FN>, %v: tensor<1x1x128x96xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x96xf16> {
  // expected-error @+1 {{sm_90a kernel supports head dim 64, 128 or 256, got 96}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x96xf8E4M3FN>, tensor<1x1x128x96xf8E4M3FN>, tensor<1x1x128x96xf8E4M3FN> -> tensor<1x4x128x96xf16>
  return %o : tensor<1x4x128x96xf16>
}

// -----

func.func @fp8_block_kv(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.block_kv = 64 : i64} {
  // expected-error @+1 {{sm_90a fp8 kernel needs block-kv 128 or 256 (whole 128-byte V^T rows), got 64}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @fp8_p_shared(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf16> attributes {fa.sm90.p_from_registers = false} {
  // expected-error @+1 {{sm_90a fp8 kernel needs p-from-registers (P goes to the P V wgmma as e4m3 registers)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf16>
  return %o : tensor<1x4x128x128xf16>
}

// -----

func.func @fp8_f32_out(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xf32> {
  // expected-error @+1 {{the fp8 kernel needs an f16 or bf16 output}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xf32>
  return %o : tensor<1x4x128x128xf32>
}

// -----

// Per-block descales must be over the kernel's tiles (128 query rows,
// block-kv keys): the kernel reads one per tile. (fa-tile-attention tiles
// with descale_block, so the tile is what the diagnostic names.)
func.func @fp8_descale_block_mismatch(%q: tensor<1x4x256x128xf8E4M3FN>, %k: tensor<1x1x256x128xf8E4M3FN>, %v: tensor<1x1x256x128xf8E4M3FN>, %qd: tensor<1x4x4xf32>, %kd: tensor<1x1x4xf32>, %vd: tensor<1x1x4xf32>) -> tensor<1x4x256x128xf16> {
  // expected-error @+1 {{sm_90a kernel needs the tiled form with block-q = 128 (2 consumer warpgroups) or 192 (3, at head dim 64), got 64 (fp8 per-block descales: fa-tile-attention tiles with descale_block; the kernel needs descale_block = [128, 128])}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<1x4x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) {descale_block = array<i64: 64, 64>} : tensor<1x4x256x128xf8E4M3FN>, tensor<1x1x256x128xf8E4M3FN>, tensor<1x1x256x128xf8E4M3FN> -> tensor<1x4x256x128xf16>
  return %o : tensor<1x4x256x128xf16>
}
