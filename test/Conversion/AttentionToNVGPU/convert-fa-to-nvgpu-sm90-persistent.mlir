// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a persistent=true stages=3 split-release=false" | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=OFF
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a persistent=true" | FileCheck %s --check-prefix=RING
// RUN: not fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a persistent=true warp-specialize=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWS

// Persistent CTAs (causal, longest first; 3 stages at d128 leave no room for
// a second Q tile: one, q_buffers = 1): a 1-D grid of min(tiles, SMs) CTAs;
// producer and consumers loop over tiles blockIdx.x, +gridDim.x below
// tiles = ceil(Nq/128) * Hq * B, carrying the running K/V block count and the
// CTA's tile count n.
// CHECK: \22grid\22: [\0A{{ *}}{\0A{{ *}}\22min\22: [\0A{{ *}}{\0A{{ *}}\22mul\22: [\0A{{ *}}{\0A{{ *}}\22ceil_div\22: [\0A{{ *}}\22Nq\22,\0A{{ *}}128\0A{{ *}}]\0A{{ *}}},\0A{{ *}}\22Hq\22,\0A{{ *}}\22B\22\0A{{ *}}]\0A{{ *}}},\0A{{ *}}\22num_sms\22\0A{{ *}}]\0A{{ *}}},\0A{{ *}}1,\0A{{ *}}1\0A{{ *}}]
// CHECK-SAME: \22persistent\22: true
// CHECK-SAME: \22q_buffers\22: 1
// CHECK-SAME: \22static_shared_memory_bytes\22: 88
// CHECK-SAME: \22tiles\22: {\0A{{ *}}\22mul\22: [\0A{{ *}}{\0A{{ *}}\22ceil_div\22: [\0A{{ *}}\22Nq\22,\0A{{ *}}128\0A{{ *}}]\0A{{ *}}},\0A{{ *}}\22Hq\22,\0A{{ *}}\22B\22\0A{{ *}}]
// CHECK-LABEL: gpu.func @attn_kernel(
// CHECK-SAME: %[[B:[^:]+]]: i32, %[[HQ:[^:]+]]: i32, %{{[^:]+}}: i32, %[[NQ:[^:]+]]: i32, %{{[^:]+}}: i32)
// CHECK-NOT: gpu.block_id  y
// CHECK: %[[NQI:.+]] = arith.index_cast %[[NQ]] : i32 to index
// CHECK: %[[NQP:.+]] = arith.addi %[[NQI]], %c127 : index
// CHECK: %[[NQB:.+]] = arith.divui %[[NQP]], %c128{{.*}} : index
// CHECK: %[[T0:.+]] = arith.muli %[[NQB]], %{{.+}} : index
// CHECK: %[[TILES:.+]] = arith.muli %[[T0]], %{{.+}} : index
// Longest first, by L2 sections of g = clamp(8 MiB / (Nk * 2 * D * 2), 1,
// Hq * B) planes (TileScheduler::kL2SectionBytes; d128 f16: 512 bytes a key).
// CHECK: %[[KVB:.+]] = arith.muli %{{.+}}, %c512{{.*}} : index
// CHECK: %[[KVB1:.+]] = arith.maxui %[[KVB]], %c1
// CHECK: %[[FIT:.+]] = arith.divui %c8388608{{.*}}, %[[KVB1]] : index
// CHECK: %[[FIT1:.+]] = arith.maxui %[[FIT]], %c1
// CHECK: %[[G:.+]] = arith.minui %[[FIT1]], %{{.+}} : index
// The Q-free mbarrier (1 + 3 stages) counts the 256 consumer threads.
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 11>
// CHECK: nvgpu.mbarrier.init %{{.+}}[%c10], %c256

// Producer: tile loop; section tile / (g * nqb) holds planes [s g, s g + n),
// n = min(g, planes - s g); within it, query block = nqb - 1 - within / n.
// It runs on 40 registers (the consumers on 232): on 24 the tile loop spills.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: %[[BX:.+]] = gpu.block_id  x
// CHECK-NEXT: %[[GX:.+]] = gpu.grid_dim  x
// CHECK: %{{.+}}:2 = scf.for %[[TILE:.+]] = %[[BX]] to %[[TILES]] step %[[GX]] iter_args(%[[BASE:.+]] = %c0{{.*}}, %[[N:.+]] = %c0{{.*}}) -> (index, index) {
// CHECK: %[[PLANES:.+]] = arith.muli
// CHECK: %[[PERSEC:.+]] = arith.muli %[[G]], %[[NQB]] : index
// CHECK-NEXT: %[[SEC:.+]] = arith.divui %[[TILE]], %[[PERSEC]] : index
// CHECK-NEXT: %[[FIRSTP:.+]] = arith.muli %[[SEC]], %[[G]] : index
// CHECK-NEXT: %[[WITHIN:.+]] = arith.remui %[[TILE]], %[[PERSEC]] : index
// CHECK-NEXT: %[[LEFT:.+]] = arith.subi %[[PLANES]], %[[FIRSTP]] : index
// CHECK-NEXT: %[[NSEC:.+]] = arith.minui %[[G]], %[[LEFT]] : index
// CHECK: %[[NQB1:.+]] = arith.subi %[[NQB]], %c1
// CHECK-NEXT: %[[QB:.+]] = arith.divui %[[WITHIN]], %[[NSEC]] : index
// CHECK-NEXT: arith.subi %[[NQB1]], %[[QB]] : index
// CHECK-NEXT: %[[INSEC:.+]] = arith.remui %[[WITHIN]], %[[NSEC]] : index
// CHECK-NEXT: arith.addi %[[FIRSTP]], %[[INSEC]] : index
// The K/V loop runs over the running count [base, base + blocks); Q goes
// after min(3, blocks) blocks (first tile: before any), waiting for Q-free
// phase n - 1 from the second tile on.
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[N]], %c0
// CHECK: %[[MIN:.+]] = arith.minsi %[[CNT:.+]], %c3
// CHECK: %[[QAT:.+]] = arith.select %[[FIRST]], %c0{{.*}}, %[[MIN]] : index
// CHECK: %[[ITEND:.+]] = arith.addi %[[BASE]], %[[CNT]] : index
// CHECK: %[[QATIT:.+]] = arith.addi %[[BASE]], %[[QAT]] : index
// CHECK: scf.for %[[IT:.+]] = %[[BASE]] to %[[ITEND]] step
// CHECK-NEXT: %[[ISQ:.+]] = arith.cmpi eq, %[[IT]], %[[QATIT]] : index
// CHECK-NEXT: scf.if %[[ISQ]] {
// CHECK: %[[NOTFIRST:.+]] = arith.cmpi ne, %[[N]], %c0
// CHECK: scf.if %[[NOTFIRST]] {
// CHECK: %[[NM1:.+]] = arith.subi %[[N]], %c1
// CHECK: %[[PQF:.+]] = arith.remui %[[NM1]], %c2
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.+}}[%c10], %{{.+}}, %{{.+}} :
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%c0{{.*}}], %c32768
// CHECK: nvgpu.tma.async.load
// Ring stage and release parity from the running count.
// CHECK: %[[ST:.+]] = arith.remui %[[IT]], %c3
// CHECK: arith.cmpi sge, %[[IT]], %c3
// CHECK: arith.divui %[[IT]], %c3
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: arith.muli %[[ST]], %c32768
// CHECK: nvgpu.tma.async.load
// CHECK: arith.cmpi sle, %[[ITEND]], %[[QATIT]] : index
// CHECK: scf.yield %[[ITEND]], %{{.+}} : index, index

// Consumers: the same tile loop; Q "full" parity = n % 2; block `begin` is
// iteration `base` of the running count (stage base % 3).
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[CBX:.+]] = gpu.block_id  x
// CHECK-NEXT: %[[CGX:.+]] = gpu.grid_dim  x
// CHECK: %{{.+}}:2 = scf.for %{{.+}} = %[[CBX]] to %[[TILES]] step %[[CGX]] iter_args(%[[CBASE:.+]] = %c0{{.*}}, %[[CN:.+]] = %c0{{.*}}) -> (index, index) {
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %tid.x;"
// CHECK: %[[QP:.+]] = arith.remui %[[CN]], %c2
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.+}}[%c0{{.*}}], %{{.+}}, %{{.+}} :
// CHECK: %[[ST0:.+]] = arith.remui %[[CBASE]], %c3
// CHECK: %[[B0:.+]] = arith.addi %c1{{.*}}, %[[ST0]] : index
// CHECK: arith.divui %[[CBASE]], %c3
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.+}}[%[[B0]]]
// Epilogue done: each thread fences and arrives on Q-free; the running count
// grows by the tile's blocks.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: %{{.+}} = nvgpu.mbarrier.arrive %{{.+}}[%c10]
// CHECK: %[[CCNT:.+]] = arith.subi
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[CBASE]], %[[CCNT]] : index
// CHECK: %[[NEXTN:.+]] = arith.addi %[[CN]], %c1
// CHECK: scf.yield %[[NEXT]], %[[NEXTN]] : index, index

// Off (default): the 3-D grid, no tile loop, no Q-free barrier.
// OFF: \22grid\22: [\0A{{ *}}{\0A{{ *}}\22ceil_div\22: [\0A{{ *}}\22Nq\22,\0A{{ *}}128\0A{{ *}}]\0A{{ *}}},\0A{{ *}}\22Hq\22,\0A{{ *}}\22B\22\0A{{ *}}]
// OFF-SAME: \22persistent\22: false
// OFF-LABEL: gpu.func @attn_kernel(
// OFF: gpu.block_id  y
// OFF: num_barriers = 10>
// OFF-NOT: nvgpu.mbarrier.init %{{.+}}[%c10]
// OFF-NOT: iter_args(%{{.+}} = %c0{{.*}}, %{{.+}} = %c0{{.*}}) -> (index, index)
// OFF: gpu.return

// A persistent d128 kernel with the measured ring: 2 stages, split release,
// two Q tiles (1 + 4 x 2 = 9 slots, Q free, Q tile 1 full and free: 12).
// RING: \22persistent\22: true
// RING-SAME: \22q_buffers\22: 2
// RING-SAME: \22split_release\22: true
// RING-SAME: \22stages\22: 2
// RING: num_barriers = 12>

// NOWS: error: sm_90a schedule: persistent=true (convert-fa-to-nvgpu option) needs warp-specialize, but warp-specialize=false (convert-fa-to-nvgpu option)

func.func @attn(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

// Not causal (no longest-first order): the query block is the fastest part of
// the tile index. The attribute switches it on for this function only.
// CHECK-LABEL: gpu.func @attn_full_kernel(
// CHECK: scf.for %[[TILE2:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: %[[QB2:.+]] = arith.remui %[[TILE2]], %{{.+}} : index
// CHECK-NEXT: %[[REST2:.+]] = arith.divui %[[TILE2]], %{{.+}} : index
// With the default ring of a persistent d64 kernel: 4 stages and two Q tiles
// (16 KiB each). Slots: 1 + 3 x 4 = 13, Q tile 0 free = 13, Q tile 1 full =
// 14, Q tile 1 free = 15 (256 consumer threads).
// OFF: \22persistent\22: true
// OFF-SAME: \22q_buffers\22: 2
// OFF-SAME: \22stages\22: 4
// OFF-LABEL: gpu.func @attn_full_kernel(
// OFF: num_barriers = 16>
// OFF: nvgpu.mbarrier.init %{{.+}}[%c13], %c256
// OFF: nvgpu.mbarrier.init %{{.+}}[%c14], %c1
// OFF: nvgpu.mbarrier.init %{{.+}}[%c15], %c256
// Producer: tile n's Q goes into Q tile n % 2 first thing in the tile, once
// tile n - 2's epilogue freed it (phase n / 2 - 1 of slot 13 + 2 (n % 2));
// its "full" slot is 14 (n % 2), its bytes at 16384 (n % 2).
// OFF: nvvm.setmaxregister  decrease 40
// OFF: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[PBASE:.+]] = %c0{{.*}}, %[[PN:.+]] = %c0{{.*}}) -> (index, index)
// OFF: %[[QAT0:.+]] = arith.addi %[[PBASE]], %c0{{.*}} : index
// OFF: arith.cmpi eq, %{{.+}}, %[[QAT0]] : index
// OFF: %[[PBUF:.+]] = arith.remui %[[PN]], %c2{{.*}} : index
// OFF: %[[USES:.+]] = arith.divui %[[PN]], %c2{{.*}} : index
// OFF: %[[REUSE:.+]] = arith.cmpi ne, %[[USES]], %c0{{.*}} : index
// OFF: scf.if %[[REUSE]] {
// OFF: %[[FREEOFF:.+]] = arith.muli %[[PBUF]], %c2{{.*}} : index
// OFF: %[[FREE:.+]] = arith.addi %c13{{.*}}, %[[FREEOFF]] : index
// OFF: arith.subi %[[USES]], %c1{{.*}} : index
// OFF: nvgpu.mbarrier.try_wait.parity %{{.+}}[%[[FREE]]]
// OFF: %[[FULL:.+]] = arith.muli %[[PBUF]], %c14 : index
// OFF: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%[[FULL]]], %c16384
// OFF: arith.muli %[[PBUF]], %c16384
// OFF: nvgpu.tma.async.load %{{.+}}, %{{.+}}[%[[FULL]]]
// Consumers: wait on Q tile n % 2's "full" slot, phase (n / 2) % 2; O is
// staged in that Q tile; the tile is handed back on its "free" slot.
// OFF: nvvm.setmaxregister  increase 232
// OFF: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %c0{{.*}}, %[[CN2:.+]] = %c0{{.*}}) -> (index, index)
// OFF: %[[CBUF:.+]] = arith.remui %[[CN2]], %c2{{.*}} : index
// OFF: %[[CFULL:.+]] = arith.muli %[[CBUF]], %c14{{.*}} : index
// OFF: %[[CUSE:.+]] = arith.divui %[[CN2]], %c2{{.*}} : index
// OFF: arith.remui %[[CUSE]], %c2{{.*}} : index
// OFF: nvgpu.mbarrier.try_wait.parity %{{.+}}[%[[CFULL]]]
// OFF: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// OFF: %[[CFREEOFF:.+]] = arith.muli %[[CBUF]], %c2{{.*}} : index
// OFF-NEXT: %[[CFREE:.+]] = arith.addi %c13{{.*}}, %[[CFREEOFF]] : index
// OFF-NEXT: nvgpu.mbarrier.arrive %{{.+}}[%[[CFREE]]]
func.func @attn_full(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> attributes {fa.sm90.persistent = true} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
