// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a deterministic=1},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/causal_kernel.json
// RUN: FileCheck %s --check-prefix=SM90 < %t/causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=SEARCH < %t/window_kernel.ptx
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 deterministic=1},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/causal_kernel.json
// RUN: FileCheck %s --check-prefix=SM80 < %t/causal_kernel.ptx
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PLAIN < %t/causal_kernel.json

// fa-to-ptx{deterministic}: the backward kernels add dQ key block by key
// block. A counter per (batch, query head, query block) in dq_semaphore
// (zeroed by the runtime) says whose turn it is: thread 0 spins on an
// acquire load until it equals the CTA's turn, the CTA adds (sm_90a: TMA
// reduce-adds, waited for; sm_80: atomics), fences, and thread 0 increments
// the counter with a release.

// MANIFEST: "deterministic": 1
// MANIFEST: "name": "dv"
// MANIFEST: "dtype": "i32"
// MANIFEST-NEXT: "meaning": "[B, Hq, ceil(Nq / block-q)] i32, zero-filled before the launch
// MANIFEST-NEXT: "name": "dq_semaphore"
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: "B",
// MANIFEST-NEXT: "Hq",
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "ceil_div": [
// MANIFEST-NEXT: "Nq",
// MANIFEST-NEXT: 64
// MANIFEST: "name": "B"

// Causal: turns from the last key block down, the grid running the key
// blocks backwards (blockIdx.x counted from nctaid.x), so a CTA waits only
// for CTAs launched before it.
// SM90: .target sm_90a
// SM90: %nctaid.x
// SM90: ld.acquire.gpu.global.u32
// SM90: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group
// SM90: cp.async.bulk.wait_group 0;
// SM90-NEXT: fence.proxy.async.global;
// SM90-NEXT: fence.acq_rel.gpu;
// SM90: red.release.gpu.global.add.u32

// SM80: .target sm_80
// SM80: %nctaid.x
// SM80: ld.acquire.gpu.global.u32
// SM80: atom.global.add.f32
// SM80: fence.acq_rel.gpu;
// SM80: red.release.gpu.global.add.u32

// The window (200 left, causal right edge) takes descending turns too: the
// last key block that sees a query block is found by a binary search over
// the key blocks (the same range formula as the CTAs use).
// SEARCH: %nctaid.x
// SEARCH: ld.acquire.gpu.global.u32

// PLAIN-NOT: dq_semaphore
// PLAIN-NOT: "deterministic"

func.func @causal(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

func.func @window(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {window = array<i64: 200, 0>} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}
