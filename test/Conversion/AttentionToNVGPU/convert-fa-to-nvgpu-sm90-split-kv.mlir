// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a split-kv=true" | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=OFF
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a split-kv=true persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a split-kv=true dynamic-tiles=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DYNAMIC

// In-kernel split-KV (d128, lse): the workspaces split_o, split_lse and the
// arrival counters split_counter before the sizes, the size num_splits after
// them, num_splits CTAs per tile in grid z; one tile per CTA (the measured
// persistent default is off with it).
// CHECK: \22grid\22: [\0A{{ *}}{\0A{{ *}}\22ceil_div\22: [\0A{{ *}}\22Nq\22,\0A{{ *}}128\0A{{ *}}]\0A{{ *}}},\0A{{ *}}\22Hq\22,\0A{{ *}}{\0A{{ *}}\22mul\22: [\0A{{ *}}\22B\22,\0A{{ *}}\22num_splits\22\0A{{ *}}]
// The measured plan: one wave of CTAs, chunks of at least 2 key blocks, at most 128.
// CHECK-SAME: \22num_splits_plan\22: {\0A{{ *}}\22max\22: [\0A{{ *}}1,\0A{{ *}}{\0A{{ *}}\22ceil_div\22
// CHECK-SAME: \22floor_div\22: [\0A{{ *}}\22num_sms\22,\0A{{ *}}{\0A{{ *}}\22max\22: [\0A{{ *}}1,\0A{{ *}}{\0A{{ *}}\22mul\22: [\0A{{ *}}\22B\22,\0A{{ *}}\22Hq\22
// CHECK-SAME: 128\0A{{ *}}]
// CHECK-SAME: \22name\22: \22split_o\22,\0A{{ *}}\22shape\22: [\0A{{ *}}\22num_splits\22,\0A{{ *}}\22B\22,\0A{{ *}}\22Hq\22,\0A{{ *}}\22Nq\22,\0A{{ *}}\22D\22\0A{{ *}}],\0A{{ *}}\22tensor\22: \22split_o\22
// CHECK-SAME: \22name\22: \22split_lse\22
// CHECK-SAME: \22name\22: \22split_counter\22,\0A{{ *}}\22shape\22: [\0A{{ *}}\22B\22,\0A{{ *}}\22Hq\22,\0A{{ *}}{\0A{{ *}}\22ceil_div\22: [\0A{{ *}}\22Nq\22,\0A{{ *}}128
// CHECK-SAME: \22name\22: \22Nk\22
// CHECK-SAME: \22name\22: \22num_splits\22
// CHECK-SAME: \22persistent\22: false
// CHECK-SAME: \22split_kv\22: true
// CHECK-LABEL: gpu.func @attn_kernel(
// CHECK-SAME: %[[OUT:[^:]+]]: memref<1099511627776xf16>, %[[LSE:[^:]+]]: memref<1099511627776xf32>, %[[SO:[^:]+]]: memref<1099511627776xf32>, %[[SL:[^:]+]]: memref<1099511627776xf32>, %[[CTR:[^:]+]]: memref<1099511627776xi32>, %{{[^:]+}}: i32, %{{[^:]+}}: i32, %{{[^:]+}}: i32, %{{[^:]+}}: i32, %{{[^:]+}}: i32, %[[S:[^:]+]]: i32)

// blockIdx.z = batch * num_splits + chunk; the chunk's blocks
// [begin + chunk * per, min(+ per, end)), per = ceil(blocks / num_splits),
// shared by the producer and the consumers.
// CHECK: %[[SI:.+]] = arith.index_cast %[[S]] : i32 to index
// CHECK: %[[BZ:.+]] = gpu.block_id  z
// CHECK-NEXT: %[[CHUNK:.+]] = arith.remui %[[BZ]], %[[SI]] : index
// CHECK-NEXT: %{{.+}} = arith.divui %[[BZ]], %[[SI]] : index
// CHECK: %[[PER:.+]] = arith.divui %{{.+}}, %[[SI]] : index
// CHECK-NEXT: %[[SKIP:.+]] = arith.muli %[[CHUNK]], %[[PER]] : index
// CHECK: %[[BEGIN:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: %[[END:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]]
// CHECK: nvvm.setmaxregister  increase 240

// Epilogue: the tile and chunk again from opaque blockIdx reads; one chunk:
// the plain epilogue (O staged, copied out).
// CHECK: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %ctaid.z;"
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[SI]], %c1{{.*}} : index
// CHECK: scf.if %[[ONE]] {
// CHECK: vector.store %{{.+}}, %[[OUT]]
// CHECK: } else {
// Several: O / l in f32 pairs and the lse into the workspaces, a release
// fence, the consumers' barrier (id 5), one arrival on the tile's counter
// whose old value goes to the others through shared memory.
// CHECK: vector.store %{{.+}}, %[[SO]][%{{.+}}] {alignment = 8 : i64} : memref<1099511627776xf32>, vector<2xf32>
// CHECK: memref.store %{{.+}}, %[[SL]][%{{.+}}] : memref<1099511627776xf32>
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: nvvm.barrier id = %c5_i32 number_of_threads = %c256_i32
// CHECK: %[[OLD:.+]] = memref.atomic_rmw addi %c1_i32{{.*}}, %[[CTR]][%[[IDX:.+]]] : (i32, memref<1099511627776xi32>) -> i32
// CHECK: memref.store %[[OLD]], %[[WORD:.+]][%c0{{.*}}] : memref<1xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.barrier id = %c5_i32{{.*}} number_of_threads = %c256_i32
// CHECK: %[[TICKET:.+]] = memref.load %[[WORD]]
// The last of the tile's CTAs: an acquire fence, the counter back to 0, then
// per row and 4 columns the chunks' max lse, the weights and the sum.
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : index
// CHECK: scf.if %[[LAST]] {
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: memref.store %c0_i32, %[[CTR]][%[[IDX]]]
// CHECK: scf.for
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %cst{{.*}}) -> (f32) {
// CHECK: memref.load %[[SL]]
// CHECK: arith.maximumf
// CHECK: scf.for {{.+}} -> (f32, vector<4xf32>) {
// CHECK: memref.load %[[SL]]
// CHECK: nvvm.ex2.approx
// CHECK: vector.load %[[SO]][%{{.+}}] {alignment = 16 : i64} : memref<1099511627776xf32>, vector<4xf32>
// CHECK: vector.fma
// CHECK: arith.truncf %{{.+}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store %{{.+}}, %[[OUT]][%{{.+}}] {alignment = 8 : i64} : memref<1099511627776xf16>, vector<4xf16>
// CHECK: memref.store %{{.+}}, %[[LSE]]

// OFF-NOT: split_o
// OFF-NOT: num_splits_plan
// OFF: \22split_kv\22: false
// OFF-NOT: memref.atomic_rmw

// PERSIST: error: sm_90a schedule: split-kv=true (convert-fa-to-nvgpu option) runs one tile per CTA, but persistent=true (convert-fa-to-nvgpu option)
// DYNAMIC: error: sm_90a schedule: split-kv=true (convert-fa-to-nvgpu option) runs one tile per CTA, but dynamic-tiles=true (convert-fa-to-nvgpu option)
func.func @attn(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}
