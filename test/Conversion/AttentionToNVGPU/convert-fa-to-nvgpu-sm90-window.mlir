// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3" | FileCheck %s --check-prefixes=CHECK,OV
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3 overlap=false" | FileCheck %s --check-prefixes=CHECK,NOOV
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=2 warp-specialize=false" | FileCheck %s --check-prefixes=CHECK,NOWS

// A sliding window with both edges (100 keys left, 16 right of the
// bottom-right diagonal). The key blocks [begin, end) and the fully visible
// [fullBegin, fullEnd) come from computeKVBlockRange (the tiled form's
// fa.kv_block_range) for the CTA's rows [q0, min(q0 + 128, Nq)); every loop
// runs over blocks j in [begin, end) and takes the ring stage and the mbarrier
// parity from the iteration count j - begin; TMA coordinates and masks use j.
// CHECK: \22causal\22: false
// CHECK-SAME: \22window\22: [\0A{{ *}}100,\0A{{ *}}16\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_window_kernels
// CHECK: %[[BEGIN:.+]] = arith.divsi %{{.+}}, %c128{{.*}} : index
// CHECK-NEXT: %[[HI:.+]] = arith.ceildivsi %{{.+}}, %c128{{.*}} : index
// CHECK-NEXT: %[[END:.+]] = arith.maxsi %[[HI]], %[[BEGIN]] : index
// CHECK: %[[FB:.+]] = arith.minsi %{{.+}}, %[[END]] : index
// CHECK: %[[FE:.+]] = arith.minsi %{{.+}}, %[[END]] : index

// Warp specialized: the producer streams blocks [begin, end) into the ring,
// stage (j - begin) % 3, waiting for a stage's release from the second round
// on.
// OV: scf.for %[[J:.+]] = %[[BEGIN]] to %[[END]] step
// OV-NEXT: %[[IT:.+]] = arith.subi %[[J]], %[[BEGIN]] : index
// OV: %[[ST:.+]] = arith.remui %[[IT]], %c3{{.*}} : index
// OV: arith.cmpi sge, %[[IT]], %c3{{.*}} : index
// OV: arith.divui %[[IT]], %c3{{.*}} : index
// OV: nvgpu.mbarrier.try_wait.parity
// OV: arith.muli %[[ST]], %c16384{{.*}} : index
// OV: arith.muli %[[J]], %c128{{.*}} : index
// OV: nvgpu.tma.async.load

// Pipelined consumers: nothing to do for an empty range; block `begin` is
// iteration 0 (stage 0); masked when outside [fullBegin, fullEnd) (or past
// Nk), with both edges: lim = min(Nk - 1, diag + 16) - colBase and
// lo = diag - 100 - colBase per row, one compare per score and edge.
// OV: %[[ANY:.+]] = arith.cmpi sgt, %[[END]], %[[BEGIN]] : index
// OV: scf.if %[[ANY]]
// OV: arith.muli %[[BEGIN]], %c128{{.*}} : index
// OV: arith.cmpi slt, %[[BEGIN]], %[[FB]] : index
// OV: arith.cmpi sge, %[[BEGIN]], %[[FE]] : index
// OV: scf.if
// OV: %[[RIGHT:.+]] = arith.addi %[[DIAG:.+]], %c16{{.*}} : index
// OV-NEXT: %[[LAST:.+]] = arith.minsi %{{.+}}, %[[RIGHT]] : index
// OV-NEXT: %[[LIM:.+]] = arith.subi %[[LAST]], %[[COL:.+]] : index
// OV-NEXT: %c100{{.*}} = arith.constant 100 : index
// OV-NEXT: %[[LEFT:.+]] = arith.subi %[[DIAG]], %c100{{.*}} : index
// OV-NEXT: %[[LO:.+]] = arith.subi %[[LEFT]], %[[COL]] : index
// OV: %[[LE:.+]] = arith.cmpi sle, %c0{{.*}}, %[[LIM]] : index
// OV-NEXT: %[[GE:.+]] = arith.cmpi sge, %c0{{.*}}, %[[LO]] : index
// OV-NEXT: %[[OK:.+]] = arith.andi %[[LE]], %[[GE]] : i1
// OV-NEXT: arith.select %[[OK]], %{{.+}}, %cst
// Steady state: blocks begin + 1 .. end - 1, S_j with P_{j-1} V_{j-1}.
// OV: %[[B1:.+]] = arith.addi %[[BEGIN]], %c1{{.*}} : index
// OV: scf.for %[[J2:.+]] = %[[B1]] to %[[END]] step
// OV: %[[JP:.+]] = arith.subi %[[J2]], %c1{{.*}} : index
// OV-NEXT: %[[IT2:.+]] = arith.subi %[[J2]], %[[BEGIN]] : index
// OV-NEXT: %[[ITP:.+]] = arith.subi %[[JP]], %[[BEGIN]] : index
// OV: arith.remui %[[IT2]], %c3{{.*}} : index
// OV: arith.remui %[[ITP]], %c3{{.*}} : index
// OV: arith.divui %[[IT2]], %c3{{.*}} : index
// OV: nvgpu.mbarrier.try_wait.parity
// OV: arith.divui %[[ITP]], %c3{{.*}} : index
// OV: nvgpu.mbarrier.try_wait.parity
// OV: arith.cmpi slt, %[[J2]], %[[FB]] : index
// OV: arith.cmpi sge, %[[J2]], %[[FE]] : index
// The last block's P V after the loop: block end - 1.
// OV: scf.yield {{.*}} : f32, f32, f32, f32, !llvm.struct<({{.*}})>, i32
// OV: %[[JL:.+]] = arith.subi %[[END]], %c1{{.*}} : index
// OV-NEXT: %[[ITL:.+]] = arith.subi %[[JL]], %[[BEGIN]] : index
// OV: arith.remui %[[ITL]], %c3{{.*}} : index

// Warp specialized, one block per step.
// NOOV: scf.for %[[J:.+]] = %[[BEGIN]] to %[[END]] step
// NOOV-NEXT: arith.subi %[[J]], %[[BEGIN]] : index
// NOOV: scf.for %[[J2:.+]] = %[[BEGIN]] to %[[END]] step %{{.+}} iter_args
// NOOV-NEXT: %[[IT2:.+]] = arith.subi %[[J2]], %[[BEGIN]] : index
// NOOV: arith.remui %[[IT2]], %c3{{.*}} : index
// NOOV: arith.divui %[[IT2]], %c3{{.*}} : index
// NOOV: nvgpu.mbarrier.try_wait.parity
// NOOV: arith.cmpi slt, %[[J2]], %[[FB]] : index
// NOOV: arith.cmpi sge, %[[J2]], %[[FE]] : index

// Without warp specialization thread 0 first issues blocks begin and
// begin + 1 (if in range) into stages 0 and 1, then refills the stage of
// block j with block j + 2.
// NOWS: %[[P0:.+]] = arith.addi %[[BEGIN]], %c0{{.*}} : index
// NOWS-NEXT: arith.cmpi slt, %[[P0]], %[[END]] : index
// NOWS: %[[P1:.+]] = arith.addi %[[BEGIN]], %c1{{.*}} : index
// NOWS-NEXT: arith.cmpi slt, %[[P1]], %[[END]] : index
// NOWS: scf.for %[[J:.+]] = %[[BEGIN]] to %[[END]] step %{{.+}} iter_args
// NOWS-NEXT: %[[IT:.+]] = arith.subi %[[J]], %[[BEGIN]] : index
// NOWS: arith.remui %[[IT]], %c2{{.*}} : index
// NOWS: arith.divui %[[IT]], %c2{{.*}} : index
// NOWS: nvgpu.mbarrier.try_wait.parity
// NOWS: arith.cmpi slt, %[[J]], %[[FB]] : index
// NOWS: arith.cmpi sge, %[[J]], %[[FE]] : index
// NOWS: gpu.barrier
// NOWS-NEXT: %c2{{.*}} = arith.constant 2 : index
// NOWS-NEXT: %[[NEXT:.+]] = arith.addi %[[J]], %c2{{.*}} : index
// NOWS-NEXT: arith.cmpi slt, %[[NEXT]], %[[END]] : index
func.func @attn_window(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 100, 16>} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// Only a right edge (64 keys past the diagonal): the range starts at block 0,
// blocks are masked only past fullEnd (or Nk), and one compare per score.
// CHECK: \22causal\22: false
// CHECK-SAME: \22window\22: [\0A{{ *}}-1,\0A{{ *}}64\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_window_right_kernels
// CHECK: %[[END:.+]] = arith.maxsi %{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK: %[[FB:.+]] = arith.minsi %{{.+}}, %[[END]] : index
// CHECK: %[[FE:.+]] = arith.minsi %{{.+}}, %[[END]] : index
// OV: scf.for %{{.+}} = %c0{{.*}} to %[[END]] step
// OV: %[[ANY:.+]] = arith.cmpi sgt, %[[END]], %c0{{.*}} : index
// CHECK-NOT: arith.cmpi slt, %{{.+}}, %[[FB]] : index
// CHECK: arith.cmpi sge, %{{.+}}, %[[FE]] : index
// CHECK: scf.if
// CHECK: %[[RIGHT:.+]] = arith.addi %{{.+}}, %c64{{.*}} : index
// CHECK-NEXT: %[[LAST:.+]] = arith.minsi %{{.+}}, %[[RIGHT]] : index
// CHECK-NEXT: %[[LIM:.+]] = arith.subi %[[LAST]], %{{.+}} : index
// CHECK: %[[LE:.+]] = arith.cmpi sle, %c0{{.*}}, %[[LIM]] : index
// CHECK-NEXT: arith.select %[[LE]], %{{.+}}, %cst
func.func @attn_window_right(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: -1, 64>} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Causal stays the window [-1, 0] in the manifest.
// CHECK: \22causal\22: true
// CHECK-SAME: \22window\22: [\0A{{ *}}-1,\0A{{ *}}0\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_causal_kernels
func.func @attn_causal(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
