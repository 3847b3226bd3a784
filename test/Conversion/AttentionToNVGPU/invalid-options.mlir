// Extreme values of the integer options of fa-to-ptx (and of the passes it
// runs) are rejected with a message that names the option; none crashes.
// DEFINE: %{max} = 9223372036854775807
// DEFINE: %{ptx} = not fa-opt %s -o /dev/null

// Negative values (0 is the chip's default) and options the other chip's
// builder would silently ignore: convert-fa-to-nvgpu.
// RUN: %{ptx} '--fa-to-ptx=chip=sm_80 rows-per-warp=-1' 2>&1 | FileCheck %s --check-prefix=RPWNEG
// RPWNEG: error: convert-fa-to-nvgpu: option rows-per-warp must be >= 0 (0: the chip's default), got -1
// RUN: %{ptx} '--fa-to-ptx=chip=sm_90a stages=-1' 2>&1 | FileCheck %s --check-prefix=STNEG
// STNEG: error: fa-to-ptx option 'stages=-1' must be 0 (auto) or from 1 to 4
// RUN: %{ptx} '--fa-to-ptx=chip=sm_80 stages=3' 2>&1 | FileCheck %s --check-prefix=ST80
// ST80: error: convert-fa-to-nvgpu: option stages applies to chip=sm_90a only, got stages=3 with chip=sm_80
// RUN: %{ptx} '--fa-to-ptx=chip=sm_90a rows-per-warp=16' 2>&1 | FileCheck %s --check-prefix=RPW90
// RPW90: error: convert-fa-to-nvgpu: option rows-per-warp applies to chip=sm_80 only, got rows-per-warp=16 with chip=sm_90a
// RUN: not fa-opt %s --fa-tile-attention-for-chip --convert-fa-to-nvgpu=stages=-7 -o /dev/null 2>&1 | FileCheck %s --check-prefix=STNEG7
// STNEG7: error: convert-fa-to-nvgpu: option stages must be >= 0 (0: the chip's default), got -7

// INT64_MAX and negative block sizes, rows per warp and stages: the
// builders' range checks (sm_80 / sm_90a) and fa-tile-attention's.
// RUN: %{ptx} '--fa-to-ptx=chip=sm_80 block-q=%{max}' 2>&1 | FileCheck %s --check-prefix=BQ80
// BQ80: error: 'scf.forall' op sm_80 kernel needs block-q 64 or 128 and block-kv 32 or 64, got block-q 9223372036854775807, block-kv 64
// RUN: %{ptx} '--fa-to-ptx=chip=sm_80 block-kv=%{max}' 2>&1 | FileCheck %s --check-prefix=BKV80
// BKV80: error: 'scf.forall' op sm_80 kernel needs block-q 64 or 128 and block-kv 32 or 64, got block-q 128, block-kv 9223372036854775807
// RUN: %{ptx} '--fa-to-ptx=chip=sm_80 rows-per-warp=%{max}' 2>&1 | FileCheck %s --check-prefix=RPW80
// RPW80: error: 'scf.forall' op sm_80 kernel needs rows-per-warp 16 or 32 with at least 4 warps, got rows-per-warp 9223372036854775807 for block-q 128
// RUN: %{ptx} '--fa-to-ptx=chip=sm_90a block-q=%{max}' 2>&1 | FileCheck %s --check-prefix=BQ90
// BQ90: error: 'scf.forall' op sm_90a kernel needs the tiled form with block-q = 128 (2 consumer warpgroups) or 192 (3, at head dim 64), got 9223372036854775807
// RUN: %{ptx} '--fa-to-ptx=chip=sm_90a block-kv=%{max}' 2>&1 | FileCheck %s --check-prefix=BKV90
// BKV90: error: 'scf.forall' op sm_90a kernel supports K/V tiles of 16 to 256 keys in steps of 16 (of 64 with P through shared memory), got 9223372036854775807
// RUN: %{ptx} '--fa-to-ptx=chip=sm_90a stages=%{max}' 2>&1 | FileCheck %s --check-prefix=ST90
// ST90: error: fa-to-ptx option 'stages=9223372036854775807' must be 0 (auto) or from 1 to 4
// RUN: %{ptx} '--fa-to-ptx=chip=sm_80 block-q=-1' 2>&1 | FileCheck %s --check-prefix=BQNEG
// BQNEG: error: fa-tile-attention: block-q and block-kv must be positive, got -1 and 64
// RUN: %{ptx} '--fa-to-ptx=chip=sm_90a block-kv=-128' 2>&1 | FileCheck %s --check-prefix=BKVNEG
// BKVNEG: error: fa-tile-attention: block-q and block-kv must be positive, got 128 and -128
// RUN: %{ptx} '--fa-to-cpu=block-q=0' 2>&1 | FileCheck %s --check-prefix=CPU0
// CPU0: error: fa-tile-attention: block-q and block-kv must be positive, got 0 and 64

func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
