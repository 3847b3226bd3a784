// split-release: K of a ring stage is released (an mbarrier of its own) as
// soon as S = Q K^T is done, V when P V is; the producer waits for each before
// refilling it. On by default at D = 256 without a left window edge (16-bit
// inputs with a causal band too; fp8 there: off), off otherwise; the option
// or fa.sm90.split_release forces it.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a split-release=true" | FileCheck %s --check-prefix=ON

// d128, one tile per CTA (persistent CTAs, the default for full attention,
// have their own defaults: convert-fa-to-nvgpu-sm90-persistent.mlir), 3
// stages: Q, 3 K full, 3 V full, 3 released = 10 barriers.
// CHECK: fa.manifest.full_d128_kernels = {json = "{{.*}}\22split_release\22: false
// CHECK-LABEL: gpu.module @full_d128_kernels
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// With the option: 3 more (V released), 13.
// ON: fa.manifest.full_d128_kernels = {json = "{{.*}}\22split_release\22: true
// ON-LABEL: gpu.module @full_d128_kernels
// ON: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 13>
// The consumers arrive on K released (7 + stage) right after S_j's wait_group 1,
// and on V released (10 + stage) after P V's wait_group 0.
// ON: nvvm.wgmma.wait.group.sync.aligned 1
// ON: %[[C7:.*]] = arith.constant 7 : index
// ON-NEXT: %[[K:.*]] = arith.addi %[[C7]], %{{.*}} : index
// ON-NEXT: nvgpu.mbarrier.arrive %{{.*}}[%[[K]]]
// ON: nvvm.wgmma.wait.group.sync.aligned 0
// ON: %[[C10:.*]] = arith.constant 10 : index
// ON-NEXT: %[[V:.*]] = arith.addi %[[C10]], %{{.*}} : index
// ON-NEXT: nvgpu.mbarrier.arrive %{{.*}}[%[[V]]]
func.func @full_d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> attributes {fa.sm90.persistent = false} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// d256, 2 stages, no band: on by default, 1 + 4 x 2 = 9 barriers.
// CHECK: fa.manifest.full_d256_kernels = {json = "{{.*}}\22split_release\22: true
// CHECK-LABEL: gpu.module @full_d256_kernels
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 9>
func.func @full_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// Causal d256: on by default too (1.15-1.28x, though it spills 20 bytes
// there), 9 barriers.
// CHECK: fa.manifest.causal_d256_kernels = {json = "{{.*}}\22split_release\22: true
// CHECK-LABEL: gpu.module @causal_d256_kernels
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 9>
func.func @causal_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// A left window edge at d256 (64-key tiles): off, 7 barriers.
// CHECK: fa.manifest.window_d256_kernels = {json = "{{.*}}\22split_release\22: false
// CHECK-LABEL: gpu.module @window_d256_kernels
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 7>
func.func @window_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 256, 64>} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}
