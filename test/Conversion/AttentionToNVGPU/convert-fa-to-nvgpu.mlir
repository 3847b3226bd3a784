// RUN: fa-opt %s -split-input-file --fa-tile-attention="block-q=128 block-kv=64" --convert-fa-to-nvgpu | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention="block-q=64 block-kv=64" --convert-fa-to-nvgpu | FileCheck %s --check-prefix=BQ64
// RUN: fa-opt %s -split-input-file --fa-tile-attention="block-q=128 block-kv=64" --convert-fa-to-nvgpu="rows-per-warp=16" | FileCheck %s --check-prefix=R16

// The input is the tiled form (fa-tile-attention). block-q = 128 gives 4 warps
// of 32 rows by default (rows-per-warp=16: 8 warps of 16), block-q = 64 gives
// 4 warps of 16 rows; with Q fragments in registers, the Q tile is staged
// through the K/V rows of the buffer.

// CHECK: module attributes {fa.manifest.attn_d128_f16_kernels = {json = "{{.*}}attn_d128_f16_kernel.ptx{{.*}}", kernel = "attn_d128_f16_kernel"}, gpu.container_module}
// CHECK-NOT: func.func
// CHECK-LABEL: gpu.module @attn_d128_f16_kernels
// 4 warps x 32 rows; at head dim 128 Q stays in shared memory (rows [0, 128)),
// K and V follow (rows [128, 192), [192, 256)): 69632 bytes, dynamic.
// CHECK: gpu.func @attn_d128_f16_kernel(%[[Q:.+]]: memref<1099511627776xf16>, %{{.+}}: memref<1099511627776xf16>, %{{.+}}: memref<1099511627776xf16>, %{{.+}}: memref<1099511627776xf16>, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: %[[RAW:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[KS:.+]] = memref.view %[[RAW]][%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256x136xf16, #gpu.address_space<workgroup>>
// Q: 16 copies a thread from one 32-bit shared address, 8 rows (2176 bytes)
// apart as immediates, from the global window's address of q (LLVM hoisted
// each nvgpu copy's and ldmatrix's address out of the loop as a 64-bit
// register).
// CHECK: memref.extract_aligned_pointer_as_index %[[KS]]
// CHECK: memref.extract_aligned_pointer_as_index %[[Q]]
// CHECK: "cvta.to.global.u64 $0, $1;"
// CHECK: "cp.async.cg.shared.global [$0], [$1], 16, $2;"
// CHECK: "cp.async.cg.shared.global [$0+2176], [$1], 16, $2;"
// CHECK-COUNT-13: "cp.async.cg.shared.global [$0+{{[0-9]+}}], [$1], 16, $2;"
// CHECK: "cp.async.cg.shared.global [$0+32640], [$1], 16, $2;"
// CHECK-NEXT: nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 1 : i32}
// Q K^T: Q's fragments 16 rows (4352 bytes) apart, K's 16 columns (32
// bytes) apart, each an immediate of the lane's address.
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];"
// CHECK: llvm.bitcast %{{.+}} : i32 to vector<2xf16>
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+4352];"
// CHECK: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+32];"
// The next K tile: 8 copies a thread (64 rows x 16 chunks / 128 threads).
// CHECK: gpu.barrier
// CHECK-COUNT-8: "cp.async.cg.shared.global
// CHECK-NEXT: nvgpu.device_async_create_group
// At D = 128 the masked branch takes the rows' diagonals from %tid.x read
// again, in 32 bits (KernelConfig::masksFromThreadId).
// CHECK: scf.if
// CHECK: "mov.u32 $0, %tid.x;"
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : i32
// The thread's 16 scores of a row reduced by a balanced tree of maxnum (8, 4,
// 2, 1), not a chain of 15 dependent ones; then over the quad.
// CHECK: %[[M0:[0-9]+]] = llvm.intr.maxnum(%{{[0-9]+}}#0, %{{[0-9]+}}#1)
// CHECK-NEXT: %[[M1:[0-9]+]] = llvm.intr.maxnum(%{{[0-9]+}}#2, %{{[0-9]+}}#3)
// CHECK-COUNT-6: llvm.intr.maxnum(%{{[0-9]+}}#{{[0-9]+}}, %{{[0-9]+}}#{{[0-9]+}})
// CHECK-NEXT: llvm.intr.maxnum(%[[M0]], %[[M1]])
// CHECK-COUNT-6: llvm.intr.maxnum
// CHECK-NOT: llvm.intr.maxnum
// CHECK: gpu.shuffle  xor %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: llvm.intr.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: arith.truncf %{{.+}} : vector<2xf32> to vector<2xf16>
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4];"
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4+32];"
// The epilogue: O normalized and rounded into rows [0, 128) of the buffer
// (2 m-tiles x 2 rows x 16 pairs per thread), then whole rows to global
// memory, 16 bytes a thread (128 x 128 / 8 / 128 threads = 16 chunks).
// CHECK: gpu.barrier
// CHECK-COUNT-64: vector.store %{{.+}}, %[[KS]][%{{.+}}, %{{.+}}] {alignment = 4 : i64} : memref<256x136xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %[[KS]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<256x136xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1099511627776xf16>, vector<8xf16>
// CHECK-COUNT-15: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1099511627776xf16>, vector<8xf16>
// CHECK-NOT: vector.store
// CHECK: gpu.return
// BQ64-LABEL: gpu.module @attn_d128_f16_kernels
// BQ64: workgroup(%{{.+}} : memref<128x136xf16, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// R16-LABEL: gpu.module @attn_d128_f16_kernels
// R16: workgroup(%{{.+}} : memref<128x136xf16, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
func.func @attn_d128_f16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

// CHECK-LABEL: gpu.module @attn_d64_bf16_kernels
// CHECK: gpu.func @attn_d64_bf16_kernel({{.*}}memref<1099511627776xbf16>{{.*}}workgroup(%[[KS:.+]] : memref<256x72xbf16, #gpu.address_space<workgroup>>)
// CHECK: "cp.async.cg.shared.global [$0], [$1], 16, $2;"
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];"
// CHECK: llvm.bitcast %{{.+}} : i32 to vector<2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4];"
func.func @attn_d64_bf16(%q: tensor<2x8x100x64xbf16>, %k: tensor<2x2x77x64xbf16>, %v: tensor<2x2x77x64xbf16>) -> tensor<2x8x100x64xbf16> {
  %o = fa.attention %q, %k, %v : tensor<2x8x100x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x64xbf16> -> tensor<2x8x100x64xbf16>
  return %o : tensor<2x8x100x64xbf16>
}

// -----

// CHECK-LABEL: gpu.module @attn_d64_f16_lse_kernels
// CHECK: gpu.func @attn_d64_f16_lse_kernel({{.*}}, %[[LSE:.+]]: memref<1099511627776xf32>, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32) workgroup
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: memref.store %{{.+}}, %[[LSE]]
func.func @attn_d64_f16_lse(%q: tensor<1x4x64x64xf16>, %k: tensor<1x4x64x64xf16>, %v: tensor<1x4x64x64xf16>) -> (tensor<1x4x64x64xf16>, tensor<1x4x64xf32>) {
  %o, %lse = fa.attention %q, %k, %v : tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16> -> (tensor<1x4x64x64xf16>, tensor<1x4x64xf32>)
  return %o, %lse : tensor<1x4x64x64xf16>, tensor<1x4x64xf32>
}

// -----

// CHECK-LABEL: gpu.module @attn_d128_bf16_kernels
// CHECK: memref.view %{{.+}} : memref<?xi8, #gpu.address_space<workgroup>> to memref<256x136xbf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
func.func @attn_d128_bf16(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A sliding window: the kernel's key loop runs over the blocks of the tiled
// form's fa.kv_block_range (computed in the kernel by the same arithmetic),
// and the straddling blocks test both window edges.
// CHECK-LABEL: gpu.module @attn_window_kernels
// CHECK: arith.ceildivsi %{{.+}}, %c64{{.*}} : index
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %c1
// CHECK: arith.cmpi slt, %[[J]], %{{.+}} : index
// CHECK: arith.cmpi sge, %[[J]], %{{.+}} : index
// CHECK: scf.if
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : index
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : index
// CHECK: arith.andi
func.func @attn_window(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 100, 0>} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
