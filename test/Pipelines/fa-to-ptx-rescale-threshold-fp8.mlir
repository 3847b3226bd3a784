// Conditional rescaling of the fp8 (e4m3) sm_90a kernels (option
// rescale-threshold, SM90/Schedule.cpp): the measured default is 8 with
// per-tensor and per-head descales at head dim 128 and at causal / windowed
// head dim 256 (the serial schedule: no spills), every step at head dim 64
// and full head dim 256 (it would spill) and always with per-block descales
// (O is scaled by the ratio of consecutive v descales every step). P reaches
// 2^8 = 256 at most, under e4m3's 448.
// RUN: rm -rf %t && mkdir -p %t
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/auto})' -o /dev/null
// RUN: FileCheck %s --check-prefix=ON < %t/auto/fp8_d128_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/auto/fp8_d128_kernel.json
// RUN: FileCheck %s --check-prefix=E4M3 < %t/auto/fp8_d128_kernel.ptx
// RUN: FileCheck %s --check-prefix=ON < %t/auto/fp8_d128_head_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/auto/fp8_d128_head_causal_kernel.json
// RUN: FileCheck %s --check-prefix=ON < %t/auto/fp8_d256_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/auto/fp8_d256_causal_kernel.json
// RUN: FileCheck %s --check-prefix=OFF < %t/auto/fp8_d64_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/auto/fp8_d64_kernel.json
// RUN: FileCheck %s --check-prefix=OFF < %t/auto/fp8_d256_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/auto/fp8_d256_kernel.json
// RUN: FileCheck %s --check-prefix=OFF < %t/auto/fp8_d128_block_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/auto/fp8_d128_block_kernel.json
// The conditional kernels assemble without spills.
// RUN: %ptxas -arch=sm_90a -v %t/auto/fp8_d128_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90a -v %t/auto/fp8_d128_head_causal_kernel.ptx -o %t/d128h.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90a -v %t/auto/fp8_d256_causal_kernel.ptx -o %t/d256c.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// The option sets it where the descales allow (here without the per-block
// function: with it the option is an error, invalid-sm90-schedule-options.mlir).
// RUN: sed '/^func.func @fp8_d128_block/,/^}/d' %s > %t/noblock.mlir
// RUN: fa-opt %t/noblock.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-threshold=4},fa-dump-kernel{dir=%t/t4})' -o /dev/null
// RUN: FileCheck %s --check-prefix=ON < %t/t4/fp8_d64_kernel.ptx
// RUN: FileCheck %s --check-prefix=T4 < %t/t4/fp8_d64_kernel.json
// RUN: FileCheck %s --check-prefix=T4 < %t/t4/fp8_d256_kernel.json
// RUN: %ptxas -arch=sm_90a %t/t4/fp8_d64_kernel.ptx -o %t/d64t4.cubin
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-threshold=-1},fa-dump-kernel{dir=%t/off})' -o /dev/null
// RUN: FileCheck %s --check-prefix=OFF < %t/off/fp8_d128_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/off/fp8_d128_kernel.json

// ON: vote.sync.any.pred
// ON: @{{%p[0-9]+}} bra
// E4M3: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// E4M3: vote.sync.any.pred
// E4M3: cvt.rn.satfinite.e4m3x2.f32
// OFF-NOT: vote.sync
// T8: "rescale_threshold": 8
// T4: "rescale_threshold": 4
// TM1: "rescale_threshold": -1
// NOSPILL: 0 bytes spill stores, 0 bytes spill loads

func.func @fp8_d128(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @fp8_d128_head_causal(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @fp8_d64(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @fp8_d256(%q: tensor<?x?x?x256xf8E4M3FN>, %k: tensor<?x?x?x256xf8E4M3FN>, %v: tensor<?x?x?x256xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

func.func @fp8_d256_causal(%q: tensor<?x?x?x256xf8E4M3FN>, %k: tensor<?x?x?x256xf8E4M3FN>, %v: tensor<?x?x?x256xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

func.func @fp8_d128_block(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
