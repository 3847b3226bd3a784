// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_80' | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_gqa_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_gqa_kernel.ptx
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SM90 < %t/grad_gqa_kernel.ptx

// fa.attention_grad becomes the FlashAttention-2 backward kernel (one
// function = one kernel, built from the op; docs/Backward.md). The function
// is replaced by the kernel and its manifest, which says what the runtime
// prepares (delta, a zeroed dq_accum) and how to launch it.

// IR-NOT: func.func @grad_gqa
// IR: gpu.module @grad_gqa_kernels
// IR: gpu.func @grad_gqa_kernel(%{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf32>, %{{.*}}: memref<1099511627776xf32>, %{{.*}}: memref<1099511627776xf32>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) kernel
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// Q, dO (and K, V) by cp.async (a thread's copies of a tile at one 32-bit
// shared address + immediates); the five products by ldmatrix + mma.sync.
// IR: "cp.async.cg.shared.global [$0], [$1], 16, $2;"
// IR: scf.for
// A step opens with the wait for its Q and dO (the only loads in flight) and
// a barrier; the next step's loads are issued after it, and no barrier closes
// the step (below).
// IR: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// IR-NEXT: gpu.barrier
// IR: "cp.async.cg.shared.global [$0+{{[0-9]+}}], [$1], 16, $2;"
// IR: nvgpu.ldmatrix {{.*}}transpose = false
// IR: nvgpu.mma.sync
// IR: tanh.approx.f32
// Warps in pairs: a warp's 32 keys x its half of the 64 queries. P^T goes to
// the P^T / dS^T tile (2 m-tiles x 2 row halves x 4 n-tiles: 16 pair
// stores), the pair meets at its barrier (64 threads), dV's A operands come
// from the registers (the warp's own half, D = 64) and from that tile (the
// partner's half), its B operands (dO) transposed; the pair meets again
// before dS^T replaces P^T, then the CTA before dK and dQ read all of dS^T.
// IR-COUNT-16: vector.store {{.*}} : memref<128x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// IR-NOT: gpu.barrier
// IR: nvvm.barrier id = %{{.*}} number_of_threads = %c64_i32
// IR: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x72xf16, #gpu.address_space<workgroup>>
// IR: nvgpu.ldmatrix {{.*}}transpose = true
// IR: nvvm.barrier id = %{{.*}} number_of_threads = %c64_i32
// IR-COUNT-16: vector.store {{.*}} : memref<128x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// IR-NEXT: gpu.barrier
// dQ: f32 atomic adds into dq_accum. Lanes 4 apart swap one value of each
// pair (select, shuffle xor 4, two selects) so that an add covers 4 rows x 8
// consecutive columns; the adds of each row are guarded by row < Nq. At D = 64
// a warp adds 32 columns of its 16 rows: 4 adds per row and pass.
// IR: %[[ODD:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c1{{[_0-9]*}} : index
// IR: %[[SENT:[0-9]+]] = arith.select %[[ODD]], %[[V0:[0-9]+]], %[[V1:[0-9]+]] : f32
// IR-NEXT: %[[GOT:[a-zA-Z_0-9]+]], %{{.*}} = gpu.shuffle xor %[[SENT]], %c4_i32, %c32_i32 : f32
// IR-NEXT: %[[FIRST:[0-9]+]] = arith.select %[[ODD]], %[[GOT]], %[[V0]] : f32
// IR-NEXT: %{{[0-9]+}} = arith.select %[[ODD]], %[[V1]], %[[GOT]] : f32
// IR-COUNT-3: gpu.shuffle xor
// IR-NOT: gpu.shuffle
// IR: scf.if
// IR: memref.atomic_rmw addf %[[FIRST]]
// IR-COUNT-3: memref.atomic_rmw addf
// IR-NEXT: }
// IR-NEXT: arith.constant 1 : index
// IR-NEXT: arith.addi
// IR-NEXT: arith.cmpi slt
// IR-NEXT: scf.if
// IR-NOT: gpu.barrier
// IR: scf.yield
// dK and dV stored once, after the loop: rounded into the K and V rows of
// shared memory (rows of D + 8 = 72), then whole rows to global memory, 16
// bytes a thread (128 x 64 / 8 / 256 = 4 chunks of each).
// IR: gpu.barrier
// IR-COUNT-32: vector.store {{.*}} {alignment = 4 : i64} : memref<512x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// IR-NEXT: gpu.barrier
// IR: vector.load {{.*}} {alignment = 16 : i64} : memref<512x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// IR-NEXT: vector.store %{{[0-9]+}}, %arg{{[0-9]+}}[%{{[0-9]+}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xf16>, vector<8xf16>
// IR-COUNT-7: vector.store %{{[0-9]+}}, %arg{{[0-9]+}}[%{{[0-9]+}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xf16>, vector<8xf16>
// IR-NOT: vector.store
// IR: gpu.return

// MANIFEST: "block": [
// MANIFEST-NEXT: 256,
// MANIFEST: "causal": true,
// MANIFEST: "function": "grad_gqa",
// MANIFEST: "grid": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "ceil_div": [
// MANIFEST-NEXT: "Nk",
// MANIFEST-NEXT: 128
// MANIFEST: "Hkv",
// MANIFEST-NEXT: "B"
// MANIFEST: "head_dim": 64,
// MANIFEST: "op": "attention_grad",
// MANIFEST: "name": "q",
// MANIFEST: "name": "k",
// MANIFEST: "name": "v",
// MANIFEST: "name": "do",
// MANIFEST: "dtype": "f32",
// MANIFEST: "name": "lse",
// MANIFEST: "meaning": "rowsum(do * out) over D [B, Hq, Nq], f32, computed before the launch",
// MANIFEST: "name": "delta",
// MANIFEST: "align_bytes": 16,
// MANIFEST-NEXT: "dtype": "f32",
// MANIFEST-NEXT: "meaning": "[B, Hq, Nq, D] f32, zero-filled before the launch; receives dq (scale applied) by atomic adds; dq = dq_accum in q's dtype",
// MANIFEST: "name": "dq_accum",
// MANIFEST: "name": "dk",
// MANIFEST: "name": "dv",
// MANIFEST: "name": "B",
// MANIFEST: "name": "Nk",
// MANIFEST: "softcap": 30,

// PTX: .target sm_80
// PTX: .entry grad_gqa_kernel
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: tanh.approx.f32
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: atom{{.*}}.add.f32
// SM90: .target sm_90a
// SM90: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// SM90: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16

func.func @grad_gqa(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>,
                    %o: tensor<?x8x?x64xf16>, %l: tensor<?x8x?xf32>, %do: tensor<?x8x?x64xf16>)
    -> (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal, softcap = 30.0 : f32} : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?xf32>, tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>
  return %dq, %dk, %dv : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>
}
