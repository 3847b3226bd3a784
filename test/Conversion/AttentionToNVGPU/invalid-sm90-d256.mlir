// Head dim 256 on sm_90a: K/V ring depth and tile size must fit the 227 KiB
// of shared memory (Q alone takes 64 KiB; a stage of K + V takes BN x 1 KiB).
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3" -verify-diagnostics
// RUN: not fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=128" --convert-fa-to-nvgpu="chip=sm_90a stages=3" 2>&1 | FileCheck %s --check-prefix=KV128S3
// RUN: not fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=128" --convert-fa-to-nvgpu=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=KV128
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a p-from-registers=false" 2>&1 | FileCheck %s --check-prefix=SMEMP
// RUN: fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=64" --convert-fa-to-nvgpu="chip=sm_90a p-from-registers=false" | FileCheck %s --check-prefix=SMEMP64

// 3 stages of 128-key tiles: 64 KiB + 3 x 256 KiB + 1 KiB.
// KV128S3: error: 'scf.forall' op sm_90a kernel with 3 stages needs 459776 bytes of shared memory (at most 232448) at head dim 256 with 128-key K/V tiles: use fewer stages or a smaller block-kv
// 128-key tiles do not fit even the default 2 stages at head dim 256.
// KV128: error: 'scf.forall' op sm_90a kernel with 2 stages needs 328704 bytes of shared memory (at most 232448) at head dim 256 with 128-key K/V tiles: use fewer stages or a smaller block-kv
// P through shared memory needs a 64-key multiple: not the default 80.
// SMEMP: sm_90a kernel supports K/V tiles of 16 to 256 keys in steps of 16 (of 64 with P through shared memory), got 80
// SMEMP64: \22block_kv\22: 64
// SMEMP64-SAME: \22dynamic_shared_memory_bytes\22: 214016
// SMEMP64-SAME: \22p_from_registers\22: false
// SMEMP64-SAME: \22stages\22: 2

func.func @d256(%q: tensor<1x4x300x256xf16>, %k: tensor<1x2x200x256xf16>, %v: tensor<1x2x200x256xf16>) -> tensor<1x4x300x256xf16> {
  // expected-error @+1 {{sm_90a kernel with 3 stages needs 312320 bytes of shared memory (at most 232448) at head dim 256 with 80-key K/V tiles: use fewer stages or a smaller block-kv}}
  %o = fa.attention %q, %k, %v : tensor<1x4x300x256xf16>, tensor<1x2x200x256xf16>, tensor<1x2x200x256xf16> -> tensor<1x4x300x256xf16>
  return %o : tensor<1x4x300x256xf16>
}
