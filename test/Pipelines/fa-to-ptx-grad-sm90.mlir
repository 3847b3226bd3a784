// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=IR
// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=NOCPASYNC
// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=IR64
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_d128_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_d128_kernel.ptx
// RUN: FileCheck %s --check-prefix=STAGES3 < %t/grad_d128_stages3_kernel.json
// RUN: FileCheck %s --check-prefix=PTX3 < %t/grad_d128_stages3_kernel.ptx

// On sm_90a the backward is the wgmma kernel (SM90/BackwardKernel; here at
// head dim 128, at 64 in fa-to-ptx-grad.mlir), warp specialized as
// FlashAttention-3's: 384 threads, two consumer warpgroups of 64 keys
// (setmaxnreg 240) and a producer warpgroup (setmaxnreg 24) whose warp 0
// streams the TMA loads and whose warp 1 adds the dQ tiles. Consumers: S^T
// and dP^T with both operands in shared memory, dV and dK with P^T / dS^T
// from registers, dQ from dS^T read MN-major (transposed A), each
// warpgroup's half staged in swizzled boxes of [64 rows x 32 f32] and handed
// to the writer through named barriers (2 + w full, 4 + w free; 160
// threads), which adds it into dq_accum by one TMA reduce-add per box
// through the tensor map dq_accum_map (the manifest's). The loader: K and V
// once (k_map, v_map: D / 64 boxes of [128 rows x 64] each, under an
// mbarrier of their own), then each step's Q and dO (q_map, do_map) into a
// ring of two buffers (fa.grad.stages = 3: three), a "full" mbarrier each
// (its expect_tx) and a "released" one (one arrival per consumer warp).

// IR-LABEL: gpu.func @grad_d128_kernel
// IR-SAME: known_block_size = array<i32: 384, 1, 1>
// IR-SAME: nvvm.maxnreg = 168 : i32
// IR: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 5>
// Full (one arrival) x 2, K / V (one), released (8 consumer warps) x 2.
// IR: nvgpu.mbarrier.init %{{.*}}, %c1
// IR: nvgpu.mbarrier.init %{{.*}}, %c1
// IR: nvgpu.mbarrier.init %{{.*}}, %c1
// IR: nvgpu.mbarrier.init %{{.*}}, %c8
// IR: nvgpu.mbarrier.init %{{.*}}, %c8
// IR: gpu.barrier
// IR-NOT: gpu.barrier
// The producer: the loader (K and V, 64 KiB; then per step Q and dO, after
// the buffer's release from step t - 2), then the writer.
// IR: nvvm.setmaxregister  decrease 24
// IR: nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c65536
// IR-COUNT-4: nvgpu.tma.async.load
// IR: scf.for
// IR: nvgpu.mbarrier.try_wait.parity
// IR: nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c32768
// IR-COUNT-4: nvgpu.tma.async.load
// IR: scf.for
// IR: nvvm.barrier.arrive id = %c4_i32 number_of_threads = %c160_i32
// IR: nvvm.barrier.arrive id = %c5_i32 number_of_threads = %c160_i32
// IR: nvvm.barrier id = %c2_i32 number_of_threads = %c160_i32
// IR-COUNT-2: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [$0, {$2, $3, $4}], [$1];
// IR: nvvm.barrier id = %c3_i32 number_of_threads = %c160_i32
// IR-COUNT-2: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [$0, {$2, $3, $4}], [$1];
// IR: cp.async.bulk.commit_group;
// IR: cp.async.bulk.wait_group.read 0;
// IR: cp.async.bulk.wait_group 0;
// The consumers: step 0's S^T before the loop, each step the next one's.
// IR: nvvm.setmaxregister  increase 240
// IR: nvgpu.mbarrier.try_wait.parity
// IR: nvgpu.mbarrier.try_wait.parity
// IR: nvvm.wgmma.fence.aligned
// IR-COUNT-8: <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// IR: nvvm.wgmma.wait.group.sync.aligned 0
// IR: scf.for
// IR: nvvm.wgmma.fence.aligned
// IR-COUNT-8: <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// IR: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// IR: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// dS^T to shared memory, then the consumers' one barrier of the step.
// IR: nvvm.fence.proxy
// IR: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c256_i32{{[_0-9]*}}
// IR-COUNT-8: <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// dQ complete: the ring buffer released, the tile free, all of it stored,
// the next step's S^T issued, the tile handed over.
// IR: nvvm.wgmma.wait.group.sync.aligned 0
// IR: nvgpu.mbarrier.arrive
// IR: nvvm.barrier id = %{{.*}} number_of_threads = %c160_i32
// IR-COUNT-16: vector.store {{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// IR-NOT: vector.store
// IR: nvgpu.mbarrier.try_wait.parity
// IR: nvvm.wgmma.fence.aligned
// IR-COUNT-8: <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// IR-NOT: vector.store
// IR: nvvm.fence.proxy
// IR: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c160_i32
// IR: nvvm.wgmma.wait.group.sync.aligned 0
// IR-NOT: gpu.barrier
// IR: scf.yield
// After the loop: dK (scaled) and dV rounded into shared memory rows of D + 8
// = 136 elements (2 x 16 pairs of each per thread), over K and V (both
// warpgroups past their last product),
// then whole rows to global memory, 16 bytes a thread: 128 x 128 / 8 / 256
// = 8 chunks of each.
// IR: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c256_i32{{[_0-9]*}}
// IR-COUNT-64: vector.store {{.*}} {alignment = 4 : i64} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// IR-NEXT: arith.constant 1 : i32
// IR-NEXT: arith.constant 256 : i32
// IR-NEXT: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c256_i32{{[_0-9]*}}
// IR: vector.load {{.*}} {alignment = 16 : i64} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// IR-NEXT: vector.store %{{[0-9]+}}, %arg{{[0-9]+}}[%{{[0-9]+}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xf16>, vector<8xf16>
// IR-COUNT-15: vector.store %{{[0-9]+}}, %arg{{[0-9]+}}[%{{[0-9]+}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xf16>, vector<8xf16>
// IR-NOT: vector.store
// IR: gpu.return
// IR-NOT: cp.reduce.async.bulk.global
// IR-NOT: nvgpu.device_async_copy
// IR-LABEL: gpu.func @grad_d128_stages3_kernel
// IR: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 7>
// IR: scf.for
// IR-COUNT-4: nvgpu.tma.async.load
// IR: scf.for

// At D = 64 the next step's S^T is issued right after dQ's product, before
// dQ is waited for (wait_group 1), and runs under the dQ tile's stores.
// IR64-LABEL: gpu.func @grad_d64_kernel
// IR64: scf.for
// IR64: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c256_i32{{[_0-9]*}}
// IR64: nvvm.wgmma.fence.aligned
// IR64: nvgpu.mbarrier.try_wait.parity
// IR64: nvvm.wgmma.fence.aligned
// IR64-COUNT-4: <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// IR64-NEXT: nvvm.wgmma.commit.group.sync.aligned
// IR64-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// IR64: nvgpu.mbarrier.arrive
// IR64: nvvm.barrier id = %{{.*}} number_of_threads = %c160_i32
// IR64-COUNT-8: vector.store {{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// IR64-NEXT: nvvm.fence.proxy
// IR64-NEXT: arith.constant
// IR64-NEXT: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c160_i32
// IR64-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// IR64-NEXT: scf.yield

// No cp.async anywhere: every tile comes by TMA.
// NOCPASYNC-NOT: nvgpu.device_async_copy

// The row kernels' blocks (256 threads), then the kernel's.
// MANIFEST: "block": [
// MANIFEST-NEXT: 256,
// MANIFEST: "block": [
// MANIFEST-NEXT: 256,
// MANIFEST: "block": [
// MANIFEST-NEXT: 384,
// Two dS^T buffers (16,384 bytes each) and the dQ tile, 64 rows x 512 bytes.
// MANIFEST: "dynamic_shared_memory_bytes": 198656,
// MANIFEST: "ceil_div": [
// MANIFEST-NEXT: "Nk",
// MANIFEST-NEXT: 128
// MANIFEST: "op": "attention_grad",
// MANIFEST: "meaning": "pointer to the CUtensorMap of q: query
// MANIFEST-NEXT: "name": "q_map",
// MANIFEST: "tensor": "q",
// MANIFEST-NEXT: "type": "tensormap"
// MANIFEST: "name": "k_map",
// MANIFEST: "tensor": "k",
// MANIFEST-NEXT: "type": "tensormap"
// MANIFEST: "name": "v_map",
// MANIFEST: "meaning": "pointer to the CUtensorMap of do: gradient
// MANIFEST-NEXT: "name": "do_map",
// MANIFEST: "name": "delta",
// MANIFEST: "meaning": "pointer to the CUtensorMap of dq_accum
// MANIFEST-NEXT: "name": "dq_accum_map",
// MANIFEST: "tensor": "dq_accum",
// MANIFEST-NEXT: "type": "tensormap"
// MANIFEST-NOT: "stages"
// The maps in the parameters' order: q_map, k_map, v_map, do_map (f16, boxes
// of 64 x 64 and 64 x 128 rows), dq_accum_map (f32, boxes of 32 x 64); all
// 128-byte swizzled.
// MANIFEST: "tensor_maps": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "box": [
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 1
// MANIFEST: "tensorDataType": 6
// MANIFEST: "dims": [
// MANIFEST-NEXT: "D",
// MANIFEST-NEXT: "Nq",
// MANIFEST: "param": "q_map",
// MANIFEST: "swizzle": "128B",
// MANIFEST-NEXT: "tensor": "q [B, Hq, Nq, D] contiguous"
// MANIFEST: "box": [
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 128,
// MANIFEST: "dims": [
// MANIFEST-NEXT: "D",
// MANIFEST-NEXT: "Nk",
// MANIFEST: "param": "k_map",
// MANIFEST: "tensor": "k [B, Hkv, Nk, D] contiguous"
// MANIFEST: "param": "v_map",
// MANIFEST: "box": [
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 64,
// MANIFEST: "param": "do_map",
// MANIFEST: "tensor": "do [B, Hq, Nq, D] contiguous"
// MANIFEST: "box": [
// MANIFEST-NEXT: 32,
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 1
// MANIFEST: "tensorDataType": 7
// MANIFEST: "dtype": "f32",
// MANIFEST: "param": "dq_accum_map",
// MANIFEST: "swizzle": "128B",
// MANIFEST-NEXT: "tensor": "dq_accum [B, Hq, Nq, D] contiguous, f32"

// PTX: .target sm_90a
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .maxnreg 168
// PTX: .shared .align 8 .b8 __mbarrier[40];
// PTX-NOT: cp.async.cg.shared.global
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group
// PTX-DAG: cp.async.bulk.wait_group.read 0
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;

// Three buffers: 32,768 bytes more shared memory (231,424), three full and
// three released mbarriers.
// STAGES3: "dynamic_shared_memory_bytes": 231424,
// STAGES3: "stages": 3,
// PTX3: .shared .align 8 .b8 __mbarrier[56];

func.func @grad_d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}

func.func @grad_d128_stages3(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) attributes {fa.grad.stages = 3 : i64} {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}

func.func @grad_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}
