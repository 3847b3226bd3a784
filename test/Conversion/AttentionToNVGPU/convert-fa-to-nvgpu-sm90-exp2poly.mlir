// exp2-poly-every=n: every n-th softmax exponent of a row is computed on the
// FMA pipes (round to an integer j with the 1.5 * 2^23 + 127 shifter, a
// degree-5 polynomial for 2^f, 2^j from the exponent field) instead of
// ex2.approx on the MUFU; 0 (default) keeps them all on the MUFU.
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a exp2-poly-every=4" | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a exp2-poly-every=4" | grep -c "ex2.approx" | FileCheck %s --check-prefix=MUFU4
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | grep -c "ex2.approx" | FileCheck %s --check-prefix=MUFU0
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=OFF
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a exp2-poly-every=-1" 2>&1 | FileCheck %s --check-prefix=NEG

// 128-key tiles: 32 exponents + 1 rescale factor per row and thread, 2 rows,
// 2 copies of the softmax (the first block before the pipelined loop, and the
// loop): 132 ex2.approx; with n = 4, 8 of every 32 leave the MUFU.
// MUFU0: 132
// MUFU4: 100

// CHECK: fa.manifest.attn_kernels = {json = "{{.*}}\22exp2_poly_every\22: 4
// CHECK-LABEL: gpu.func @attn_kernel
// CHECK: %[[X:.*]] = llvm.intr.fma(%{{.*}}#3, %{{.*}}, %{{.*}})
// CHECK: %[[SHIFT:.*]] = arith.constant 0x4B40007F : f32
// CHECK: %[[LO:.*]] = arith.constant -1.270000e+02 : f32
// CHECK: %[[XC:.*]] = llvm.intr.maxnum(%[[X]], %[[LO]])
// CHECK: %[[T:.*]] = arith.addf %[[XC]], %[[SHIFT]]
// CHECK: %[[J:.*]] = arith.subf %[[T]], %[[SHIFT]]
// CHECK: %[[F:.*]] = arith.subf %[[XC]], %[[J]]
// CHECK: %[[P1:.*]] = llvm.intr.fma(%{{.*}}, %[[F]], %{{.*}})
// CHECK: %[[P2:.*]] = llvm.intr.fma(%[[P1]], %[[F]], %{{.*}})
// CHECK: %[[P3:.*]] = llvm.intr.fma(%[[P2]], %[[F]], %{{.*}})
// CHECK: %[[P4:.*]] = llvm.intr.fma(%[[P3]], %[[F]], %{{.*}})
// CHECK: %[[P5:.*]] = llvm.intr.fma(%[[P4]], %[[F]], %{{.*}})
// CHECK: %[[BITS:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK: %[[E:.*]] = arith.shli %[[BITS]], %{{.*}} : i32
// CHECK: %[[POW:.*]] = arith.bitcast %[[E]] : i32 to f32
// CHECK: arith.mulf %[[P5]], %[[POW]]
// OFF: \22exp2_poly_every\22: 0
// OFF-NOT: 0x4B40007F
// NEG: error: convert-fa-to-nvgpu option 'exp2-poly-every=-1' must be at least 0
func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
