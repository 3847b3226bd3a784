// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/sm90})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PAGED90 < %t/sm90/paged16_kernel.json
// RUN: FileCheck %s --check-prefix=PTX90 < %t/sm90/paged16_kernel.ptx
// RUN: FileCheck %s --check-prefix=LENS90 < %t/sm90/lens_kernel.json
// RUN: FileCheck %s --check-prefix=NOLEN < %t/sm90/paged256_nolen_kernel.json
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t/sm80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PAGED80 < %t/sm80/paged16_kernel.json
// RUN: FileCheck %s --check-prefix=PTX80 < %t/sm80/paged16_kernel.ptx

// kv_lens and pages (docs/Attention.md): the kernels take kv_lens [B] and
// page_table [B, max_pages] (i32) after the outputs, and a paged kernel the
// pool's sizes num_pages and max_pages after the launch sizes.
// PAGED90: "block_kv": 128,
// PAGED90: "kv_lens": true,
// PAGED90: "page_size": 16,
// PAGED90: "name": "k_map",
// PAGED90: "shape": [
// PAGED90-NEXT: "num_pages",
// PAGED90-NEXT: "Hkv",
// PAGED90-NEXT: 16,
// PAGED90-NEXT: "D"
// PAGED90: "name": "out",
// PAGED90: "name": "kv_lens",
// PAGED90: "tensor": "kv_lens",
// PAGED90: "name": "page_table",
// PAGED90: "shape": [
// PAGED90-NEXT: "B",
// PAGED90-NEXT: "max_pages"
// PAGED90: "name": "Nk",
// PAGED90: "name": "num_pages",
// PAGED90: "name": "max_pages",
// The pool as (D, S, num_pages * Hkv), boxes of one 16-row page of one head
// (the maps' keys are sorted: k's box follows q's param).
// PAGED90: "param": "q_map",
// PAGED90: "box": [
// PAGED90-NEXT: 64,
// PAGED90-NEXT: 16,
// PAGED90-NEXT: 1
// PAGED90: "dims": [
// PAGED90-NEXT: "D",
// PAGED90-NEXT: 16,
// PAGED90-NEXT: {
// PAGED90-NEXT: "mul": [
// PAGED90-NEXT: "num_pages",
// PAGED90-NEXT: "Hkv"
// PAGED90: "param": "k_map",

// The producer's first warp streams K/V: each lane reads one chunk's page
// id (one load), 8 shuffles hand the 8 pages of a block to lane 0, which
// issues its 16 boxes (8 pages x 2 sub-tiles of 64 columns); the consumers
// zero the last V block's rows past the sequence (generic stores, then the
// proxy fence before the wgmma reads them).
// PTX90: ld.global.b32
// PTX90-COUNT-8: shfl.sync.idx.b32
// PTX90-COUNT-16: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX90: fence.proxy.async.shared::cta
// PTX90: wgmma.mma_async

// LENS90: "kv_lens": true,
// LENS90-NOT: "page_size"
// LENS90: "name": "kv_lens",
// LENS90-NOT: "page_table"
// LENS90: "name": "Nk",
// LENS90-NOT: "num_pages"

// NOLEN-NOT: "kv_lens"
// NOLEN: "page_size": 256,
// NOLEN: "name": "page_table",
// NOLEN: "param": "q_map",
// NOLEN: "box": [
// NOLEN-NEXT: 64,
// NOLEN-NEXT: 128,

// PAGED80: "block_kv": 32,
// PAGED80: "kv_lens": true,
// PAGED80: "page_size": 16,
// PAGED80: "name": "kv_lens",
// PAGED80: "name": "page_table",
// PAGED80: "name": "max_pages",
// The cp.async copies zero-fill the rows past the sequence (src-size 0).
// PTX80: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};

func.func @paged16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x16x128xf16>, %v: tensor<?x?x16x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x128xf16>, tensor<?x?x16x128xf16>, tensor<?x?x16x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @lens(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %lens: tensor<?xi32>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) {window = array<i64: 96, 0>} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// -----

func.func @paged256_nolen(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x256x128xf16>, %v: tensor<?x?x256x128xf16>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x256x128xf16>, tensor<?x?x256x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
