// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip="chip=sm_90a block-kv=64" --convert-fa-to-nvgpu=chip=sm_90a | FileCheck %s --check-prefix=KV64
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip="chip=sm_90a block-kv=48" --convert-fa-to-nvgpu="chip=sm_90a stages=3" | FileCheck %s --check-prefix=KV48

// Head dim 256: FlashAttention-3's 128 x 80 tile at 2 stages, the chip's
// default for this head dim (fa-tile-attention-for-chip block-kv 80, no
// stages option: 2). Shared memory: Q 2 x 64 x 256 x 2 = 64 KiB + 2 stages x
// (K + V) 80 x 256 x 2 = 160 KiB + 1 KiB of realignment = 230400 bytes.
// Q, K and V come in four 64-column sub-tiles (TMA boxes of 64 columns).
// CHECK: \22block_kv\22: 80
// CHECK-SAME: \22dynamic_shared_memory_bytes\22: 230400
// CHECK-SAME: \22head_dim\22: 256
// CHECK-SAME: \22stages\22: 2
// CHECK-SAME: \22box\22: [\0A{{ *}}64,\0A{{ *}}64,\0A{{ *}}1\0A{{ *}}]
// CHECK-SAME: \22box\22: [\0A{{ *}}64,\0A{{ *}}80,\0A{{ *}}1\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_d256_f16_kernels
// CHECK: nvgpu.tensormap.descriptor<tensor = memref<1x80x64xf16
// A K, a V, a K-released and a V-released mbarrier per stage (split release,
// the d256 default without a band) plus the Q one.
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 9>
// Q: 2 warpgroups x 4 sub-tiles; K and V: 4 sub-tiles each.
// CHECK-COUNT-8: nvgpu.tma.async.load %{{.+}} -> memref<1x64x64xf16
// CHECK: scf.for
// CHECK-COUNT-8: nvgpu.tma.async.load %{{.+}} -> memref<1x80x64xf16
// CHECK: nvvm.setmaxregister  increase 240
// S_0 = Q K^T: 16 k-steps of m64n80k16 (the first one zeroes the accumulator).
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 80, k = 16>, D[<f32>, <zero>]
// CHECK-COUNT-15: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 80, k = 16>, D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
// The O accumulator is 128 f32 per thread; P_j 20 x i32 (80 keys).
// CHECK: scf.for %{{.+}} = %c1{{.*}} -> (f32, f32, f32, f32, !llvm.struct<([[F128:(f32, ){127}f32]])>, {{(i32, ){19}i32}})
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 80, k = 16>
// O += P V: 5 k-steps of m64n256k16 with P from registers, 128 tied f32
// accumulators, V (MN-major, tnspB) by descriptor.
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {$0, {{.*}}, $127}, {$256, $257, $258, $259}, $260, p, 1, 1, 1;\0A}", "=f,{{(=f,)+}}0,{{.*}},127,r,r,r,r,l" {{.*}} -> !llvm.struct<([[F128]])>
// CHECK-COUNT-4: m64n256k16.f32.f16.f16
// CHECK-NOT: m64n256k16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "=r,{{.*}},19"
// CHECK: scf.yield
// The last block's P V after the loop.
// CHECK-COUNT-5: m64n256k16.f32.f16.f16
// O staged in the Q tile: 32 8-column chunks x 2 rows per thread, then 16 rows
// of 16-byte copies per thread (64 rows x 32 chunks / 128 threads).
// CHECK-COUNT-64: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 4 : i64} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-COUNT-16: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1099511627776xf16>, vector<8xf16>
// CHECK: gpu.return

// block-kv keeps working at head dim 256: 64-key tiles at 2 stages (Q 64 KiB
// + 2 x 64 KiB + 1 KiB), S m64n64k16, P_j 16 x i32.
// KV64: \22block_kv\22: 64
// KV64-SAME: \22dynamic_shared_memory_bytes\22: 197632
// KV64-SAME: \22stages\22: 2
// KV64-LABEL: gpu.module @attn_d256_f16_kernels
// KV64: <m = 64, n = 64, k = 16>, D[<f32>, <zero>]
// KV64: scf.for %{{.+}} = %c1{{.*}} -> (f32, f32, f32, f32, !llvm.struct<({{(f32, ){127}f32}})>, {{(i32, ){15}i32}})
// KV64: m64n256k16.f32.f16.f16

// 3 stages fit with 48-key tiles: Q 64 KiB + 3 x 48 KiB + 1 KiB.
// KV48: \22block_kv\22: 48
// KV48-SAME: \22dynamic_shared_memory_bytes\22: 214016
// KV48-SAME: \22stages\22: 3
// KV48-LABEL: gpu.module @attn_d256_f16_kernels
// KV48: num_barriers = 10
// KV48: <m = 64, n = 48, k = 16>, D[<f32>, <zero>]
// KV48: m64n256k16.f32.f16.f16
func.func @attn_d256_f16(%q: tensor<?x?x?x256xf16>, %k: tensor<?x?x?x256xf16>, %v: tensor<?x?x?x256xf16>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

// -----

// bf16, causal, GQA-shaped runtime sizes, lse: 64-key tiles (with split
// release and conditional rescaling, 1.01-1.04x as fast as 80 keys, which
// spill 20 bytes there).
// CHECK: \22block_kv\22: 64
// CHECK-SAME: \22causal\22: true
// CHECK-SAME: \22dtype\22: \22bf16\22
// CHECK-SAME: \22head_dim\22: 256
// CHECK-SAME: \22lse\22: true
// CHECK-SAME: \22stages\22: 2
// CHECK-LABEL: gpu.module @attn_d256_bf16_causal_lse_kernels
// CHECK: wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: m64n256k16.f32.bf16.bf16
// CHECK: llvm.nvvm.lg2.approx.f
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<1099511627776xf32>
func.func @attn_d256_bf16_causal_lse(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> (tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> (tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>
}

// -----

// A sliding window with a left edge: its second compare per masked score
// spills at 80 keys, so fa-tile-attention-for-chip takes 64 keys at d256
// (2 stages; as for any band, causal and right-edge-only ones too).
// CHECK: \22block_kv\22: 64
// CHECK-SAME: \22dynamic_shared_memory_bytes\22: 197632
// CHECK-SAME: \22stages\22: 2
// CHECK-SAME: \22window\22: [\0A{{ *}}100,\0A{{ *}}0\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_d256_f16_window_kernels
// CHECK: <m = 64, n = 64, k = 16>, D[<f32>, <zero>]
// CHECK: m64n256k16.f32.f16.f16
func.func @attn_d256_f16_window(%q: tensor<?x?x?x256xf16>, %k: tensor<?x?x?x256xf16>, %v: tensor<?x?x?x256xf16>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 100, 0>} : tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

// -----

// CHECK: \22block_kv\22: 64
// CHECK-SAME: \22window\22: [\0A{{ *}}-1,\0A{{ *}}64\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_d256_bf16_right_band_kernels
func.func @attn_d256_bf16_right_band(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: -1, 64>} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}
