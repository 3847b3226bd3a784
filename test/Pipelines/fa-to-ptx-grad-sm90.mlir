// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=IR
// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=NOCPASYNC
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_d128_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_d128_kernel.ptx
// RUN: FileCheck %s --check-prefix=STAGES3 < %t/grad_d128_stages3_kernel.json
// RUN: FileCheck %s --check-prefix=PTX3 < %t/grad_d128_stages3_kernel.ptx

// On sm_90a the backward is the wgmma kernel (SM90/BackwardKernel; here at
// head dim 128, at 64 in fa-to-ptx-grad.mlir): two warpgroups of 64 keys, S^T and dP^T with both
// operands in shared memory, dV and dK with P^T / dS^T from registers, dQ
// from dS^T read MN-major (transposed A), staged in four swizzled boxes of
// [64 rows x 32 f32] and added into dq_accum by one TMA reduce-add per box,
// issued by thread 0 through the tensor map dq_accum_map (the manifest's).
// All loads are TMA boxes issued by thread 0: K and V once (k_map, v_map: D / 64
// boxes of [128 rows x 64] each, under an mbarrier of their own), each step's Q
// and dO (q_map, do_map: D / 64 boxes of [64 rows x 64] each) into a ring of
// two buffers (fa.grad.stages = 3: three), an mbarrier each: the prologue
// fills the ring, step t refills its buffer for step t + stages.

// IR-LABEL: gpu.func @grad_d128_kernel
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// IR: nvgpu.mbarrier.init
// The prologue: K and V (mbarrier 2, 64 KiB), then both buffers (steps 0, 1).
// IR: nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c65536
// IR-COUNT-4: nvgpu.tma.async.load
// IR: nvgpu.mbarrier.arrive.expect_tx
// IR-COUNT-4: nvgpu.tma.async.load
// IR: nvgpu.mbarrier.arrive.expect_tx
// IR-COUNT-4: nvgpu.tma.async.load
// IR: gpu.barrier
// IR: nvgpu.mbarrier.try_wait.parity
// IR: scf.for
// IR: nvgpu.mbarrier.try_wait.parity
// IR: nvvm.wgmma.fence.aligned
// IR: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// IR: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// Two barriers per step (dS^T's, the dQ tile's); after the second, thread 0
// refills the step's buffer (step t + 2), then issues the dQ adds.
// IR: nvvm.fence.proxy
// IR: gpu.barrier
// IR: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// IR: gpu.barrier
// IR-NOT: gpu.barrier
// IR: nvgpu.mbarrier.arrive.expect_tx
// IR-COUNT-4: nvgpu.tma.async.load
// IR-COUNT-4: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [$0, {$2, $3, $4}], [$1];
// IR: cp.async.bulk.commit_group;
// IR-NOT: gpu.barrier
// IR: scf.yield
// IR-NOT: cp.reduce.async.bulk.global
// IR-NOT: nvgpu.device_async_copy
// IR-LABEL: gpu.func @grad_d128_stages3_kernel
// IR: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// IR-COUNT-16: nvgpu.tma.async.load
// IR: scf.for

// No cp.async anywhere: every tile comes by TMA.
// NOCPASYNC-NOT: nvgpu.device_async_copy

// MANIFEST: "block": [
// MANIFEST-NEXT: 256,
// The dQ tile: 64 rows x 512 bytes, unpadded (184,320 with padded rows).
// MANIFEST: "dynamic_shared_memory_bytes": 182272,
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
// PTX: .shared .align 8 .b8 __mbarrier[24];
// PTX-NOT: cp.async.cg.shared.global
// PTX-COUNT-12: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-NOT: cp.async.cg.shared.global
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group
// PTX-DAG: cp.async.bulk.wait_group.read 0

// Three buffers: 32,768 bytes more shared memory (215,040), three mbarriers,
// the prologue loads three steps.
// STAGES3: "dynamic_shared_memory_bytes": 215040,
// STAGES3: "stages": 3,
// PTX3: .shared .align 8 .b8 __mbarrier[32];
// PTX3-COUNT-20: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes

func.func @grad_d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}

func.func @grad_d128_stages3(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) attributes {fa.grad.stages = 3 : i64} {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}
