// The diagnostics of the sm_90a schedule options (SM90/Schedule.cpp): an
// invalid value or combination names the switch and where it was set, the
// convert-fa-to-nvgpu or the fa-to-ptx option or a function attribute.
// RUN: rm -rf %t && split-file %s %t
// RUN: fa-opt %t/stages.mlir --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=-1" -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/poly.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a exp2-poly-every=-2})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/persistent.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a persistent=true warp-specialize=false})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/mixed.mlir --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a persistent=true" -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/split.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a split-release=true warp-specialize=false})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/one-stage.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a stages=1})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/block-kv.mlir --fa-tile-attention="block-q=128 block-kv=64" --convert-fa-to-nvgpu="chip=sm_90a" -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/q-buffers.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a q-buffers=3})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/q-buffers-fit.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a persistent=true stages=3 q-buffers=2})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/rescale.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-threshold=15})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/rescale-fp8.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-threshold=8})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/rescale-fp8-range.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-threshold=9})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/rescale-sm80.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 rescale-threshold=-2})' -verify-diagnostics -o /dev/null
// A measured default is an option value too: auto, true or false.
// RUN: not fa-opt %t/stages.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a longest-first=maybe})' 2>&1 | FileCheck %s --check-prefix=TRISTATE
// RUN: fa-opt %t/producer-range.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a producer-registers=16})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/producer-8.mlir --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/producer-launch.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a producer-registers=176})' -verify-diagnostics -o /dev/null
// RUN: fa-opt %t/producer-launch-3wg.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a block-q=192 producer-registers=136})' -verify-diagnostics -o /dev/null
// TRISTATE: longest-first
// TRISTATE-SAME: maybe

//--- stages.mlir
// expected-error @+1 {{convert-fa-to-nvgpu option 'stages=-1' must be 0 (auto) or from 1 to 4}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- poly.mlir
// expected-error @+1 {{fa-to-ptx option 'exp2-poly-every=-2' must be at least 0}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- persistent.mlir
// expected-error @+1 {{sm_90a schedule: persistent=true (fa-to-ptx option) needs warp-specialize, but warp-specialize=false (fa-to-ptx option)}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- mixed.mlir
// expected-error @+1 {{sm_90a schedule: persistent=true (convert-fa-to-nvgpu option) needs warp-specialize, but warp-specialize=false (attribute fa.sm90.warp_specialize of function @f)}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.warp_specialize = false} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- split.mlir
// expected-error @+1 {{sm_90a schedule: split-release=true (fa-to-ptx option) needs warp-specialize, but warp-specialize=false (fa-to-ptx option)}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- one-stage.mlir
// expected-error @+1 {{sm_90a schedule: overlap=true (default) needs at least 2 K/V stages, but stages=1 (fa-to-ptx option) (or set overlap=false)}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- block-kv.mlir
// expected-error @+1 {{sm_90a schedule: block-kv=128 (attribute fa.sm90.block_kv of function @f) but the tiled form has block-kv 64 (fa-tile-attention-for-chip tiles with it)}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.block_kv = 128 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- q-buffers.mlir
// expected-error @+1 {{fa-to-ptx option 'q-buffers=3' must be 0 (auto) or from 1 to 2}}
func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
//--- q-buffers-fit.mlir
// Two Q tiles (2 x 32 KiB) and 3 stages of 128-key d128 tiles (192 KiB) do
// not fit: the diagnostic counts the Q tiles.
func.func @f(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16> {
  // expected-error @+1 {{sm_90a kernel with 3 stages and 2 Q tiles needs 263168 bytes of shared memory (at most 232448) at head dim 128}}
  %o = fa.attention %q, %k, %v : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}
//--- rescale.mlir
// expected-error @+1 {{fa-to-ptx option 'rescale-threshold=15' must be 0 (auto) or from -1 to 14}}
func.func @f(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- rescale-fp8.mlir
// Per-block fp8 descales scale O every step (the ratio of consecutive v
// descales): no step can skip it.
// expected-error @+1 {{sm_90a schedule: rescale-threshold=8 (fa-to-ptx option) cannot skip O's rescale with per-block fp8 descales (O is scaled by the ratio of consecutive v descales every step)}}
func.func @f(%q: tensor<1x1x64x128xf8E4M3FN>, %k: tensor<1x1x64x128xf8E4M3FN>, %v: tensor<1x1x64x128xf8E4M3FN>, %qd: tensor<1x1x1xf32>, %kd: tensor<1x1x1xf32>, %vd: tensor<1x1x1xf32>) -> tensor<1x1x64x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>) {descale_block = array<i64: 128, 128>} : tensor<1x1x64x128xf8E4M3FN>, tensor<1x1x64x128xf8E4M3FN>, tensor<1x1x64x128xf8E4M3FN> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- rescale-fp8-range.mlir
// fp8 P reaches 2^threshold: past 8 it would saturate at e4m3's 448.
// expected-error @+1 {{sm_90a schedule: rescale-threshold=9 (fa-to-ptx option) lets fp8 probabilities reach 2^9, past e4m3's 448: at most 8 with fp8 inputs}}
func.func @f(%q: tensor<1x1x64x128xf8E4M3FN>, %k: tensor<1x1x64x128xf8E4M3FN>, %v: tensor<1x1x64x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x1x64x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x1x64x128xf8E4M3FN>, tensor<1x1x64x128xf8E4M3FN>, tensor<1x1x64x128xf8E4M3FN> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- rescale-sm80.mlir
// sm_80 reads the same option and checks its range.
func.func @f(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  // expected-error @+1 {{sm_80 kernel: option rescale-threshold must be 0 (auto), -1 (every step) or in [1, 14], got -2}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- producer-range.mlir
// expected-error @+1 {{fa-to-ptx option 'producer-registers=16' must be 0 (auto) or from 24 to 256}}
func.func @f(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- producer-8.mlir
// setmaxnreg takes multiples of 8.
// expected-error @+1 {{sm_90a schedule: producer-registers=44 (attribute fa.sm90.producer_registers of function @f) must be a multiple of 8 (setmaxnreg)}}
func.func @f(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> attributes {fa.sm90.producer_registers = 44 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- producer-launch.mlir
// Two consumer warpgroups and the producer launch with 168 registers each:
// setmaxnreg.dec cannot raise the producer to 176 (ptxas rejects the PTX).
// expected-error @+1 {{sm_90a schedule: producer-registers=176 (fa-to-ptx option) is more than the 168 registers per thread a CTA of 3 warpgroups launches with (setmaxnreg.dec lowers the producer's count)}}
func.func @f(%q: tensor<1x1x64x128xf16>, %k: tensor<1x1x64x128xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}
//--- producer-launch-3wg.mlir
// Three consumer warpgroups (192-row tiles at head dim 64): 128 at launch.
// expected-error @+1 {{sm_90a schedule: producer-registers=136 (fa-to-ptx option) is more than the 128 registers per thread a CTA of 4 warpgroups launches with}}
func.func @f(%q: tensor<1x1x256x64xf16>, %k: tensor<1x1x256x64xf16>, %v: tensor<1x1x256x64xf16>) -> tensor<1x1x256x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x256x64xf16>, tensor<1x1x256x64xf16>, tensor<1x1x256x64xf16> -> tensor<1x1x256x64xf16>
  return %o : tensor<1x1x256x64xf16>
}
