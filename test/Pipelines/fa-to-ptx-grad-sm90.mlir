// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_d128_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_d128_kernel.ptx

// On sm_90a the backward is the wgmma kernel (SM90/BackwardKernel; here at
// head dim 128, at 64 in fa-to-ptx-grad.mlir): two warpgroups of 64 keys, S^T and dP^T with both
// operands in shared memory, dV and dK with P^T / dS^T from registers, dQ
// from dS^T read MN-major (transposed A), staged in four swizzled boxes of
// [64 rows x 32 f32] and added into dq_accum by one TMA reduce-add per box,
// issued by thread 0 through the tensor map dq_accum_map (the manifest's).

// IR: gpu.func @grad_d128_kernel
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: nvgpu.device_async_copy
// IR: scf.for
// IR: nvvm.wgmma.fence.aligned
// IR: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// IR: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// IR: nvvm.fence.proxy
// IR: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// IR-COUNT-4: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [$0, {$2, $3, $4}], [$1];
// IR: cp.async.bulk.commit_group;
// IR-NOT: cp.reduce.async.bulk.global

// MANIFEST: "block": [
// MANIFEST-NEXT: 256,
// The dQ tile: 64 rows x 512 bytes, unpadded (184,320 with padded rows).
// MANIFEST: "dynamic_shared_memory_bytes": 182272,
// MANIFEST: "ceil_div": [
// MANIFEST-NEXT: "Nk",
// MANIFEST-NEXT: 128
// MANIFEST: "op": "attention_grad",
// MANIFEST: "name": "delta",
// MANIFEST: "meaning": "pointer to the CUtensorMap of dq_accum
// MANIFEST-NEXT: "name": "dq_accum_map",
// MANIFEST: "tensor": "dq_accum",
// MANIFEST-NEXT: "type": "tensormap"
// MANIFEST: "tensor_maps": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "box": [
// MANIFEST-NEXT: 32,
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 1
// MANIFEST: "tensorDataType": 7
// MANIFEST: "dims": [
// MANIFEST-NEXT: "D",
// MANIFEST-NEXT: "Nq",
// MANIFEST: "dtype": "f32",
// MANIFEST: "param": "dq_accum_map",
// MANIFEST: "swizzle": "128B",
// MANIFEST-NEXT: "tensor": "dq_accum [B, Hq, Nq, D] contiguous, f32"

// PTX: .target sm_90a
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group
// PTX-DAG: cp.async.bulk.wait_group.read 0

func.func @grad_d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}
