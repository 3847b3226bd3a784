// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a varlen-layout=htd},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_varlen_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_varlen_kernel.ptx
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=THD < %t/grad_varlen_kernel.json

// The backward of packed variable-length sequences on sm_90a: the wgmma
// kernel with a CTA per (key block of the longest sequence, K/V head,
// sequence). Each CTA reads its sequence's query rows and keys from
// cu_seqlens_q / cu_seqlens_k (clamped into [0, T], as the forward's), skips
// itself when its key block is past its sequence's keys, and loads Q, dO,
// K, V and adds dQ at the sequence's rows of the batch-1 planes (tensor
// maps of dims (D, T, H)); masks, the causal diagonal (bottom-right per
// sequence) and the query blocks are the sequence's. Rows past a sequence
// load the next one's and add zeros (their lse is staged as +inf, so P = 0).
// varlen-layout=htd (below: MANIFEST, PTX) takes the op's batch-1 planes
// [1, H, T, D]; the default, thd (THD), FlashAttention's token-major
// [T, H, D] as the forward kernel's (lse, delta [Hq, T]), through the tensor
// maps' strides and the dK / dV and row kernels' addresses; dq_accum is the
// planes either way.

func.func @grad_varlen(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %o: tensor<1x?x?x128xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
}

// The row kernels run over the packed planes: one batch.
// MANIFEST: "grid": [
// MANIFEST: "Hq",
// MANIFEST-NEXT: 1
// MANIFEST: "kernel": "grad_varlen_kernel_preprocess"
// MANIFEST: "name": "delta",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 1,
// The kernel's grid: the longest sequence's key blocks, per K/V head and
// sequence.
// MANIFEST: "grid": [
// MANIFEST: "max_seqlen_k",
// MANIFEST-NEXT: 128
// MANIFEST: "Hkv",
// MANIFEST-NEXT: "B"
// MANIFEST: "name": "cu_seqlens_q",
// MANIFEST: "name": "cu_seqlens_k",
// MANIFEST: "name": "B",
// MANIFEST: "name": "Nk",
// MANIFEST: "name": "max_seqlen_k",
// MANIFEST: "dims": [
// MANIFEST-NEXT: "D",
// MANIFEST-NEXT: "Nq",
// MANIFEST-NEXT: "Hq"
// MANIFEST: "param": "q_map",
// MANIFEST: "param": "do_map",
// MANIFEST: "dims": [
// MANIFEST-NEXT: "D",
// MANIFEST-NEXT: "Nq",
// MANIFEST-NEXT: "Hq"
// MANIFEST: "param": "dq_accum_map",
// MANIFEST: "varlen": true,
// MANIFEST-NEXT: "varlen_layout": "htd"

// PTX: .visible .entry grad_varlen_kernel(
// The CTA's sequence: its two offsets from each array.
// PTX-COUNT-4: ld.global.{{[bs]}}32
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group

// THD: "kernel": "grad_varlen_kernel_preprocess"
// THD: "name": "do",
// THD-NEXT: "shape": [
// THD-NEXT: "Nq",
// THD-NEXT: "Hq",
// THD-NEXT: "D"
// THD: "name": "delta",
// THD-NEXT: "shape": [
// THD-NEXT: "Hq",
// THD-NEXT: "Nq"
// THD: "name": "dq_accum",
// THD-NEXT: "shape": [
// THD-NEXT: 1,
// THD: "kernel": "grad_varlen_kernel_postprocess"
// THD: "name": "dq",
// THD-NEXT: "shape": [
// THD-NEXT: "Nq",
// THD: "name": "dk",
// THD-NEXT: "shape": [
// THD-NEXT: "Nk",
// THD-NEXT: "Hkv",
// THD-NEXT: "D"
// q_map: a token's heads adjacent, rows Hq * D elements apart.
// THD: "param": "q_map",
// THD: "strides_bytes": [
// THD-NEXT: {
// THD-NEXT: "mul": [
// THD-NEXT: "Hq",
// THD-NEXT: "D",
// THD-NEXT: 2
// THD: "varlen": true,
// THD-NEXT: "varlen_layout": "thd"
