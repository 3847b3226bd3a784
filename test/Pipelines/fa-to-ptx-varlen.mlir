// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t/varlen_causal_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/varlen_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=FULL < %t/varlen_full_kernel.json
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a varlen-layout=htd},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=HTD < %t/varlen_causal_kernel.json
// RUN: FileCheck %s --check-prefix=HTDPTX < %t/varlen_causal_kernel.ptx
// RUN: not fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a varlen-layout=bshd})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a persistent=true},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PERS < %t/varlen_full_kernel.json
// RUN: FileCheck %s --check-prefix=PERSPTX < %t/varlen_full_kernel.ptx

// The sm_90a kernel of fa.attention with varlen(...) (docs/Attention.md,
// docs/Manifest.md): the grid's batch is the sequence and its query blocks
// are the longest sequence's (max_seqlen_q); each CTA reads its sequence's
// offsets, exits when its block lies past the sequence's rows, loads Q and
// K/V with TMA from the sequence's first packed row and stores only its rows.
// By default (varlen-layout=thd) q, k, v and out are token-major [T, H, D]
// (FlashAttention's varlen layout: the tensor maps' rows are H * D elements
// apart, their planes D) and lse is [H, T]; varlen-layout=htd keeps the op's
// [1, H, T, D].

// JSON: "grid": [
// JSON-NEXT: {
// JSON-NEXT: "ceil_div": [
// JSON-NEXT: "max_seqlen_q",
// JSON-NEXT: 128
// JSON: "Hq",
// JSON-NEXT: "B"
// JSON: "name": "out",
// JSON-NEXT: "shape": [
// JSON-NEXT: "Nq",
// JSON-NEXT: "Hq",
// JSON-NEXT: "D"
// JSON: "name": "lse",
// JSON-NEXT: "shape": [
// JSON-NEXT: "Hq",
// JSON-NEXT: "Nq"
// JSON: "name": "cu_seqlens_q",
// JSON-NEXT: "shape": [
// JSON-NEXT: {
// JSON-NEXT: "add": [
// JSON-NEXT: "B",
// JSON-NEXT: 1
// JSON: "name": "cu_seqlens_k",
// JSON: "name": "B",
// JSON: "name": "Nk",
// JSON: "name": "max_seqlen_q",
// JSON: "persistent": false,
// JSON: "dims": [
// JSON-NEXT: "D",
// JSON-NEXT: "Nq",
// JSON-NEXT: "Hq"
// JSON: "strides_bytes": [
// JSON-NEXT: {
// JSON-NEXT: "mul": [
// JSON-NEXT: "Hq",
// JSON-NEXT: "D",
// JSON-NEXT: 2
// JSON: "mul": [
// JSON-NEXT: "D",
// JSON-NEXT: 2
// JSON: "tensor": "q [Nq, Hq, D] contiguous (packed sequences, token-major)"
// JSON: "dims": [
// JSON-NEXT: "D",
// JSON-NEXT: "Nk",
// JSON-NEXT: "Hkv"
// JSON: "strides_bytes": [
// JSON-NEXT: {
// JSON-NEXT: "mul": [
// JSON-NEXT: "Hkv",
// JSON: "varlen": true,
// JSON-NEXT: "varlen_layout": "thd"

// HTD: "name": "out",
// HTD-NEXT: "shape": [
// HTD-NEXT: 1,
// HTD-NEXT: "Hq",
// HTD-NEXT: "Nq",
// HTD: "name": "lse",
// HTD-NEXT: "shape": [
// HTD-NEXT: 1,
// HTD: "dims": [
// HTD-NEXT: "D",
// HTD-NEXT: "Nq",
// HTD-NEXT: "Hq"
// HTD: "strides_bytes": [
// HTD-NEXT: {
// HTD-NEXT: "mul": [
// HTD-NEXT: "D",
// HTD-NEXT: 2
// HTD: "mul": [
// HTD-NEXT: "Nq",
// HTD: "varlen_layout": "htd"

// persistent=true (not the default for varlen, docs/SM90.md): the tiles of
// the longest sequence's blocks per head and sequence, min(tiles, SMs) CTAs;
// each tile reads its sequence's offsets, and both the producer and the
// consumers skip a tile past its sequence's rows (an scf.if around the tile).
// PERS: "grid": [
// PERS-NEXT: {
// PERS-NEXT: "min": [
// PERS-NEXT: {
// PERS-NEXT: "mul": [
// PERS-NEXT: {
// PERS-NEXT: "ceil_div": [
// PERS-NEXT: "max_seqlen_q",
// PERS: "persistent": true,
// PERS: "varlen": true
// (The consumers' code comes first in the PTX, then the producer's.)
// PERSPTX: setmaxnreg.dec.sync.aligned.u32
// PERSPTX: setmaxnreg.inc.sync.aligned.u32
// PERSPTX: ld.global.b32
// PERSPTX: wgmma.mma_async
// PERSPTX: ld.global.b32
// PERSPTX: cp.async.bulk.tensor.3d

// BAD: convert-fa-to-nvgpu: option varlen-layout must be thd or htd, got 'bshd'


// The offsets of sequence blockIdx.z (two loads each), clamped, and the exit
// of a block past the sequence's rows before any barrier.
// PTX: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// PTX: ld.global.b32 %r{{[0-9]+}}, [%rd[[CQ:[0-9]+]]];
// PTX: max.s32
// PTX: ld.global.s32 %rd{{[0-9]+}}, [%rd[[CQ]]+4];
// PTX: setp.ge.s64 %p{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// PTX-NEXT: @%p{{[0-9]+}} bra
// PTX: ld.global.b32 %r{{[0-9]+}}, [%rd[[CK:[0-9]+]]];
// PTX: ld.global.s32 %rd{{[0-9]+}}, [%rd[[CK]]+4];
// PTX: mbarrier.init
// PTX: cp.async.bulk.tensor.3d
// The output rows: token-major, ((qs + row) * Hq + head) * D, 16 bytes a
// thread; htd, (head * Nq + qs + row) * D.
// PTX: mul.lo.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// PTX: st.global.v4.b32
// HTDPTX: cp.async.bulk.tensor.3d
// HTDPTX: st.global.v4.b32
func.func @varlen_causal(%q: tensor<1x8x?x128xbf16>, %k: tensor<1x2x?x128xbf16>, %v: tensor<1x2x?x128xbf16>,
                         %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x8x?x128xbf16>, tensor<1x8x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x8x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16> -> (tensor<1x8x?x128xbf16>, tensor<1x8x?xf32>)
  return %o, %l : tensor<1x8x?x128xbf16>, tensor<1x8x?xf32>
}

// -----

// Not causal, no lse, static packed lengths: still one tile per CTA (the
// persistent schedule, the default of the padded kernel, does not take
// varlen yet).
// FULL: "grid": [
// FULL-NEXT: {
// FULL-NEXT: "ceil_div": [
// FULL-NEXT: "max_seqlen_q",
// FULL-NOT: "name": "lse"
// FULL: "name": "cu_seqlens_q"
// FULL: "persistent": false
// FULL: "varlen": true
func.func @varlen_full(%q: tensor<1x4x1000x64xf16>, %k: tensor<1x4x1200x64xf16>, %v: tensor<1x4x1200x64xf16>,
                       %cq: tensor<5xi32>, %ck: tensor<5xi32>) -> tensor<1x4x1000x64xf16> {
  %o = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<5xi32>, tensor<5xi32>)
      : tensor<1x4x1000x64xf16>, tensor<1x4x1200x64xf16>, tensor<1x4x1200x64xf16> -> tensor<1x4x1000x64xf16>
  return %o : tensor<1x4x1000x64xf16>
}
