// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3" | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3 overlap=false" | FileCheck %s --check-prefix=NOOV

// Default sm_90a schedule: P fed to the P V wgmma from registers (inline PTX
// wgmma with A in 4 x b32 per 16-key step), one "released" arrival per
// consumer warp (mbarrier count 8, lane 0 arrives), fast softmax (tree of
// maxnum, exp2 of one fma). d128 with 3 stages fits: 32 KiB of Q + 3 x 64 KiB
// of K/V + 1 KiB of realignment, no P tile.
// CHECK: \22dynamic_shared_memory_bytes\22: 230400
// CHECK-SAME: \22fast_softmax\22: true
// CHECK-SAME: \22p_from_registers\22: true
// CHECK-SAME: \22ping_pong\22: true
// CHECK-SAME: \22rescale_before_pv\22: false
// CHECK-SAME: \22stages\22: 3
// CHECK-SAME: \22warp_arrive\22: true
// CHECK-LABEL: gpu.module @attn_d128_f16_kernels
// CHECK: %[[BARS:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c7], %c8
// CHECK: llvm.intr.maxnum
// CHECK: llvm.intr.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// P_0 packed (f32 pairs -> f16x2 -> i32) and carried into the loop: 5 + 32 values.
// CHECK: llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK: scf.for %{{.+}} = %c1{{.*}} -> (f32, f32, f32, f32, !llvm.struct<({{.*}})>, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;\0A}", "=f,{{(=f,)+}}0,{{.*}},63,r,r,r,r,l"
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The registers of P_{j-1} stay live (and untouched) until the wait.
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "=r,{{.*}},31"
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.arrive %[[BARS]]
// CHECK-NOT: nvvm.fence.proxy
// CHECK: scf.yield
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;{{.*}}m64n128k16.f32.f16.f16
// NOOV-LABEL: gpu.module @attn_d128_f16_kernels
// NOOV: scf.for
// NOOV: llvm.bitcast %{{.+}} : vector<2xf16> to i32
// NOOV-NOT: nvvm.fence.proxy
// NOOV: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// NOOV: nvvm.wgmma.wait.group.sync.aligned 0
// NOOV: nvgpu.mbarrier.arrive
func.func @attn_d128_f16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

// The per-function overrides: P through shared memory again (swizzled store,
// proxy fence, named barrier, both wgmma operands by descriptor), one arrival
// per thread, the old softmax, no ping-pong; rescale before P V (only with P
// in registers) on the second function.
// CHECK: \22fast_softmax\22: false
// CHECK-SAME: \22p_from_registers\22: false
// CHECK-SAME: \22ping_pong\22: false
// CHECK-SAME: \22warp_arrive\22: false
// CHECK-LABEL: gpu.module @attn_d64_bf16_smem_kernels
// CHECK: nvgpu.mbarrier.init %{{.+}}[%c7], %c256
// CHECK-NOT: llvm.intr.maxnum
// CHECK-NOT: nvvm.barrier id
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
func.func @attn_d64_bf16_smem(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> attributes {fa.sm90.p_from_registers = false, fa.sm90.warp_arrive = false, fa.sm90.fast_softmax = false, fa.sm90.ping_pong = false} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// CHECK: \22rescale_before_pv\22: true
// CHECK-LABEL: gpu.module @attn_d64_bf16_early_kernels
// 5 + 32 P registers + the two alphas of the previous block.
// CHECK: scf.for %{{.+}} = %c1{{.*}} -> (f32, f32, f32, f32, !llvm.struct<({{.*}})>, {{(i32, )+}}f32, f32)
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// O *= alpha_{j-1} under the S GEMM, then a wgmma fence before P V reads O.
// CHECK: arith.mulf
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16.f32.bf16.bf16
func.func @attn_d64_bf16_early(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> attributes {fa.sm90.rescale_before_pv = true} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
