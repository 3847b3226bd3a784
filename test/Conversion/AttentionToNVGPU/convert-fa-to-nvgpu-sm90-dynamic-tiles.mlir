// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a dynamic-tiles=true" | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=OFF
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a dynamic-tiles=true persistent=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPERSIST
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a dynamic-tiles=true warp-specialize=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWS

// Dynamic tiles (causal d64): persistent CTAs (turned on by dynamic-tiles)
// claim tiles from the tile_counter parameter ([2] i32, before the sizes).
// CHECK: \22dynamic_tiles\22: true
// CHECK-SAME: \22meaning\22: \22the persistent CTAs' tile counter [2] i32: zero at launch, left zero by the kernel; one per stream\22,\0A{{ *}}\22name\22: \22tile_counter\22
// CHECK-SAME: \22persistent\22: true
// CHECK-SAME: \22q_buffers\22: 2
// CHECK-LABEL: gpu.func @attn_kernel(
// CHECK-SAME: %{{.+}}: memref<1099511627776xf16>, %[[CTR:[^:]+]]: memref<1099511627776xi32>, %{{[^:]+}}: i32,

// Producer (56 registers: it claims and decodes; the consumers get 224):
// tiles blockIdx.x, then gridDim.x + atomic add on counter[0], claimed once
// a tile's loads are issued, while the claim is below the tile count.
// CHECK: nvvm.setmaxregister  decrease 56
// CHECK: %[[BX:.+]] = gpu.block_id  x
// CHECK: %{{.+}}:3 = scf.while (%[[TILE:.+]] = %[[BX]], %{{.+}} = %c0{{.*}}, %{{.+}} = %c0{{.*}}) : (index, index, index) -> (index, index, index) {
// CHECK: %[[MORE:.+]] = arith.cmpi ult, %[[TILE]], %{{.+}} : index
// CHECK-NEXT: scf.condition(%[[MORE]])
// The tile's coordinates (query block, head, batch) go into its Q tile's
// three words before its Q load.
// CHECK: memref.store %{{.+}} : memref<1xi32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.+}} : memref<1xi32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.+}} : memref<1xi32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load
// CHECK: %[[OLD:.+]] = memref.atomic_rmw addi %c1_i32{{.*}}, %[[CTR]][%c0{{.*}}] : (i32, memref<1099511627776xi32>) -> i32
// CHECK: %[[OLDI:.+]] = arith.index_cast %[[OLD]] : i32 to index
// CHECK: arith.addi %{{.+}}, %[[OLDI]] : index
// CHECK: scf.yield
// The end: kEndOfTiles (INT32_MAX) in the next Q tile's query-block word, a
// plain arrival on its Q-full mbarrier; then the CTA counts itself out in
// counter[1] and the last one resets both words, fenced.
// CHECK: memref.store %c2147483647_i32
// CHECK: arith.muli %{{.+}}, %c14 : index
// CHECK-NEXT: nvgpu.mbarrier.arrive
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK: %[[OUT:.+]] = memref.atomic_rmw addi %c1_i32{{.*}}, %[[CTR]][%c1{{.*}}]
// CHECK: %[[LAST:.+]] = arith.cmpi eq
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK: memref.atomic_rmw assign %c0_i32{{.*}}, %[[CTR]][%c0{{.*}}]
// CHECK: memref.atomic_rmw assign %c0_i32{{.*}}, %[[CTR]][%c1{{.*}}]

// Consumers: wait on Q tile n % 2's "full" slot, read the tile's query
// block there; kEndOfTiles (above any query block) ends the loop.
// CHECK: nvvm.setmaxregister  increase 224
// CHECK: %{{.+}}:2 = scf.while (%{{.+}} = %c0{{.*}}, %[[N:.+]] = %c0{{.*}}) : (index, index) -> (index, index) {
// CHECK: arith.remui %[[N]], %c2
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: %[[QB:.+]] = memref.load %{{.+}} : memref<1xi32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[QBI:.+]] = arith.index_cast %[[QB]] : i32 to index
// CHECK: %[[GO:.+]] = arith.cmpi ult, %[[QBI]], %{{.+}} : index
// CHECK-NEXT: scf.condition(%[[GO]])

// Without the option: one tile per CTA for causal, no counter.
// OFF: \22dynamic_tiles\22: false
// OFF-NOT: tile_counter
// OFF: \22persistent\22: false
// OFF-NOT: memref.atomic_rmw

// NOPERSIST: error: sm_90a schedule: dynamic-tiles=true (convert-fa-to-nvgpu option) needs persistent, but persistent=false (convert-fa-to-nvgpu option)
// NOWS: error: sm_90a schedule: dynamic-tiles=true (convert-fa-to-nvgpu option) needs warp-specialize, but warp-specialize=false (convert-fa-to-nvgpu option)
func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
