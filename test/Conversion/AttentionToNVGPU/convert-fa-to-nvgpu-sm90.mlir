// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=2 warp-specialize=false" | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=2" | FileCheck %s --check-prefix=WS
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=2 overlap=false" | FileCheck %s --check-prefix=NOOV
// The P-through-shared-memory schedules (fa.sm90.p_from_registers = false,
// one "released" arrival per consumer thread); the default register-A P path
// is in convert-fa-to-nvgpu-sm90-pregs.mlir.

// Default: warp specialized. Warpgroup 2 is the producer (setmaxnreg down,
// one thread streams K/V, waiting on the "stage released" mbarriers that all
// 256 consumer threads arrive on); warpgroups 0-1 consume (setmaxnreg up).
// WS-LABEL: gpu.module @attn_d128_f16_kernels
// WS: kernel attributes {known_block_size = array<i32: 384, 1, 1>}
// WS: %[[BARS:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 7>
// WS: nvgpu.mbarrier.init %[[BARS]][%{{.+}}], %c256
// WS: gpu.barrier
// WS: scf.if
// WS-NEXT: nvvm.setmaxregister  decrease 24
// WS: nvgpu.tma.async.load
// WS: scf.for
// WS: nvgpu.mbarrier.try_wait.parity %[[BARS]]
// WS: nvgpu.tma.async.load
// WS: } else {
// WS-NEXT: nvvm.setmaxregister  increase 240
// Overlap (default): block 0's S, then a loop from 1 that issues S_j and
// P_{j-1} V_{j-1} as two groups between its turn (bar.sync 3 + w) and the
// hand-over (bar.arrive), waits for S only (1 group left) for the softmax,
// then for P V before releasing the stage; the last P V after the loop.
// WS: nvvm.barrier.arrive id = %{{.+}} number_of_threads = %c256_i32
// WS: nvvm.barrier id = %{{.+}} number_of_threads = %c256_i32
// WS: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <zero>]
// WS: scf.for %{{.+}} = %c1
// WS: nvvm.barrier id = %{{.+}} number_of_threads = %c256_i32
// WS: nvvm.wgmma.mma_async {{.*}}B[<f16>, <one>, <col>]
// WS: nvvm.wgmma.commit.group.sync.aligned
// WS: nvvm.wgmma.mma_async {{.*}}B[<f16>, <one>, <row>]
// WS: nvvm.wgmma.commit.group.sync.aligned
// WS: nvvm.barrier.arrive
// WS: nvvm.wgmma.wait.group.sync.aligned 1
// WS: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS-NOT: gpu.barrier
// WS: nvgpu.mbarrier.arrive %[[BARS]]
// WS: scf.yield
// WS: nvvm.wgmma.mma_async {{.*}}B[<f16>, <one>, <row>]
// WS: nvgpu.mbarrier.arrive %[[BARS]]
// Warp specialized without overlap: S, softmax, P V in turn, no ping-pong.
// NOOV: nvvm.setmaxregister  increase 240
// NOOV-NOT: nvvm.barrier.arrive
// NOOV-NOT: wait.group.sync.aligned 1
// NOOV: nvgpu.mbarrier.arrive

// Without warp specialization: 2 warpgroups, thread 0 issues the TMA and
// refills a stage after a CTA barrier.

// The manifest lists the tensor maps the host must encode (3-D, 128-byte swizzle).
// CHECK: module attributes {fa.manifest.attn_d128_f16_kernels = {json = "{{.*}}\22chip\22: \22sm_90a\22{{.*}}\22dynamic_shared_memory_bytes\22: 197632{{.*}}\22params\22{{.*}}\22q_map\22{{.*}}\22tensormap\22{{.*}}\22stages\22: 2{{.*}}\22tensor_maps\22{{.*}}\22box\22: [\0A{{ *}}64,\0A{{ *}}64,\0A{{ *}}1\0A{{ *}}]{{.*}}\22dims\22: [\0A{{ *}}\22D\22,\0A{{ *}}\22Nq\22,\0A{{ *}}{\0A{{ *}}\22mul\22: [\0A{{ *}}\22B\22,\0A{{ *}}\22Hq\22\0A{{.*}}\22swizzle\22: \22128B\22{{.*}}\22warp_specialized\22: false{{.*}}", kernel = "attn_d128_f16_kernel"}, gpu.container_module}
// CHECK-LABEL: gpu.module @attn_d128_f16_kernels
// CHECK: gpu.func @attn_d128_f16_kernel(%[[QM:.+]]: !llvm.ptr, %[[KM:.+]]: !llvm.ptr, %[[VM:.+]]: !llvm.ptr, %{{.+}}: memref<1099511627776xf16>, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: %[[QD:.+]] = builtin.unrealized_conversion_cast %[[QM]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK: %[[KD:.+]] = builtin.unrealized_conversion_cast %[[KM]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x128x64xf16
// CHECK: gpu.dynamic_shared_memory
// CHECK: %[[BARS:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 5>
// CHECK: nvgpu.mbarrier.init %[[BARS]]
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%{{.+}}], %{{.+}} :
// CHECK: nvgpu.tma.async.load %[[QD]][%{{.+}}, %{{.+}}, %{{.+}}], %[[BARS]][%{{.+}}] to %{{.+}} : {{.*}} -> memref<1x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %[[KD]]
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]]
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async %{{.+}}, %{{.+}}, %{{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.shuffle  xor
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.+}} number_of_threads = %{{.+}}
// CHECK: nvvm.wgmma.mma_async %{{.+}}, %{{.+}}, %{{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: gpu.barrier
// CHECK: nvgpu.tma.async.load %[[KD]]
// CHECK: scf.yield
// CHECK: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1099511627776xf16>, vector<8xf16>
func.func @attn_d128_f16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> attributes {fa.sm90.p_from_registers = false, fa.sm90.warp_arrive = false} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

// bf16, d64, causal, lse: N = 64 for P V, the lse pointer after out.
// CHECK-LABEL: gpu.module @attn_d64_bf16_lse_kernels
// CHECK: gpu.func @attn_d64_bf16_lse_kernel(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: memref<1099511627776xbf16>, %[[LSE:.+]]: memref<1099511627776xf32>, %{{.+}}: i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: arith.minsi
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: memref.store %{{.+}}, %[[LSE]]
func.func @attn_d64_bf16_lse(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) attributes {fa.sm90.p_from_registers = false, fa.sm90.warp_arrive = false} {
  %o, %lse = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
