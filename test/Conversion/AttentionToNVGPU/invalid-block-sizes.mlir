// RUN: not fa-opt %s --fa-tile-attention="block-q=32 block-kv=64" --convert-fa-to-nvgpu 2>&1 | FileCheck %s --check-prefix=BQ
// RUN: not fa-opt %s --fa-tile-attention="block-q=128 block-kv=16" --convert-fa-to-nvgpu 2>&1 | FileCheck %s --check-prefix=BKV
// RUN: not fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 block-q=96})' 2>&1 | FileCheck %s --check-prefix=PIPE

// The sm_80 kernel takes the block sizes of the tiled form only where its
// warps (16 query rows each) and its K/V buffer fit them.
// BQ: error: 'scf.forall' op sm_80 kernel needs block-q 64 or 128 and block-kv 32 or 64, got block-q 32, block-kv 64
// BKV: error: 'scf.forall' op sm_80 kernel needs block-q 64 or 128 and block-kv 32 or 64, got block-q 128, block-kv 16
// RUN: not fa-opt %s --fa-tile-attention="block-q=64 block-kv=64" --convert-fa-to-nvgpu=rows-per-warp=32 2>&1 | FileCheck %s --check-prefix=RPW
// RPW: error: 'scf.forall' op sm_80 kernel needs rows-per-warp 16 or 32 with at least 4 warps, got rows-per-warp 32 for block-q 64
// PIPE: error: 'scf.forall' op sm_80 kernel needs block-q 64 or 128 and block-kv 32 or 64, got block-q 96, block-kv 64
func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
