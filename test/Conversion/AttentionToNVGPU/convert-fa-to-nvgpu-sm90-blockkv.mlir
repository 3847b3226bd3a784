// RUN: fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=176" --convert-fa-to-nvgpu="chip=sm_90a stages=2" | FileCheck %s
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a stages=2 block-kv=176},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_d128_f16_bn176_kernel.ptx

// K/V tiles of 176 keys (FlashAttention-3's d128 tile; the tiled form's block-kv), 2
// stages: 32 KiB of Q + 2 x 2 x 176 x 128 x 2 bytes + 1 KiB = 214016 bytes.
// S is one m64n176k16 wgmma chain, P V 11 register-A k-steps, P_j 44 x i32.
// CHECK: \22block_kv\22: 176
// CHECK-SAME: \22dynamic_shared_memory_bytes\22: 214016
// CHECK-SAME: \22box\22: [\0A{{ *}}64,\0A{{ *}}176,\0A{{ *}}1\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_d128_f16_bn176_kernels
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 176, k = 16>, D[<f32>, <zero>]
// CHECK: scf.for %{{.+}} = %c1{{.*}} -> (f32, f32, f32, f32, !llvm.struct<({{.*}})>, {{(i32, )+}}i32)
// CHECK-COUNT-11: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: scf.yield
// PTX: wgmma.mma_async.sync.aligned.m64n176k16.f32.f16.f16
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
func.func @attn_d128_f16_bn176(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
