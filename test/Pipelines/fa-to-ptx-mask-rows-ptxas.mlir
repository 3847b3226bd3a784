// REQUIRES: ptxas
// Masks of one row ([Bm, Hm, 1, Nk]: key padding) in the sm_90a and sm_80
// kernels: the manifest's mask shape has a literal 1 for its rows, every
// query row reads the same bytes; a boolean one is classified per key block
// (as a bounded mask_mod: a warp-ballot scan of the mask's bytes narrows the
// key range, wholly visible blocks skip the per-key test), an additive one
// is read per score. A full [Bm, Hm, Nq, Nk] boolean mask is not classified.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PAD < %t/padding_kernel.json
// RUN: FileCheck %s --check-prefix=SCAN < %t/padding_kernel.ptx
// RUN: FileCheck %s --check-prefix=SCAN < %t/padding_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=SMEM < %t/padding_kernel.json
// RUN: FileCheck %s --check-prefix=KEYBIAS < %t/keybias_kernel.json
// RUN: FileCheck %s --check-prefix=NOSCAN < %t/keybias_kernel.ptx
// RUN: FileCheck %s --check-prefix=NOSCAN < %t/full_rows_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/padding_kernel.ptx -o %t/padding.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=SCHED < %t/padding_kernel.json
// RUN: %ptxas -arch=sm_90a -v %t/padding_causal_kernel.ptx -o %t/padding_causal.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a %t/keybias_kernel.ptx -o %t/keybias.cubin
// RUN: %ptxas -arch=sm_90a %t/full_rows_kernel.ptx -o %t/full_rows.cubin
// RUN: rm -rf %t80 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PAD < %t80/padding_kernel.json
// RUN: FileCheck %s --check-prefix=SCAN80 < %t80/padding_kernel.ptx
// RUN: FileCheck %s --check-prefix=NOSCAN < %t80/keybias_kernel.ptx
// RUN: %ptxas -arch=sm_80 -v %t80/padding_kernel.ptx -o %t80/padding.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_80 -v %t80/padding_causal_kernel.ptx -o %t80/padding_causal.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_80 %t80/keybias_kernel.ptx -o %t80/keybias.cubin

// PAD: "meaning": "boolean mask [Bm, Hm, Nm, Nk]
// PAD-NEXT: "name": "mask",
// PAD-NEXT: "shape": [
// PAD-NEXT: "B",
// PAD-NEXT: 1,
// PAD-NEXT: 1,
// PAD-NEXT: "Nk"

// sm_90a: Q's load first, then the CTA's warps scan the blocks' mask bytes
// (ballots, the full-block bits and ranges meeting in shared memory), and
// each step looks its block up there.
// SCAN: cp.async.bulk.tensor
// SCAN: ld.global{{.*}}.s8
// SCAN: vote.sync.ballot.b32
// SCAN: st.shared
// SCAN: ld.shared
// SCAN: shfl.sync.bfly.b32
// SCAN: setmaxnreg.dec.sync.aligned.u32 24;
// The scan's 864 bytes (3 x 64 + 24 words) after the tiles.
// SMEM: "dynamic_shared_memory_bytes": 231264,
// At D = 128 document masking's schedule (no ping-pong, split release): no
// spills (16 bytes with ping-pong).
// SCHED: "ping_pong": false,
// SCHED: "split_release": true,

// sm_80: the tile's range narrowed by a ballot scan before the key loop.
// SCAN80: vote.sync.ballot.b32
// SCAN80: mma.sync.aligned.m16n8k16

// KEYBIAS: "meaning": "additive mask [Bm, Hm, Nm, Nk]
// KEYBIAS-NEXT: "name": "mask",
// KEYBIAS-NEXT: "shape": [
// KEYBIAS-NEXT: "B",
// KEYBIAS-NEXT: "Hq",
// KEYBIAS-NEXT: 1,
// KEYBIAS-NEXT: "Nk"

// NOSCAN-NOT: vote.sync.ballot
// NOSCAN: ret;

// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @padding(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %m: tensor<?x1x1x?xi1>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<?x1x1x?xi1>) : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @padding_causal(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %m: tensor<1x1x1x?xi1>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v mask(%m : tensor<1x1x1x?xi1>) {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

// -----

func.func @keybias(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %m: tensor<?x?x1x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<?x?x1x?xf32>) : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @full_rows(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %m: tensor<?x1x?x?xi1>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<?x1x?x?xi1>) : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
