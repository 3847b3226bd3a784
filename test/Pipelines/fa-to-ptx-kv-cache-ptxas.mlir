// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/paged16_d128_kernel.ptx -o %t/a.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90a -v %t/paged64_d64_causal_kernel.ptx -o %t/b.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90a -v %t/lens_d128_window_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_80 -v %t/paged64_d64_causal_kernel.ptx -o %t/d.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_80 -v %t/lens_d128_window_kernel.ptx -o %t/e.cubin 2>&1 | FileCheck %s --check-prefix=ASSEMBLES
// RUN: %ptxas -arch=sm_80 -v %t/paged128_d128_kernel.ptx -o %t/f.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_80 -v %t/paged16_d128_kernel.ptx -o %t/g.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL

// The kv_lens / paged kernels assemble for their chips and spill nothing,
// but the sm_80 kernel at head dim 128 with kv_lens and a two-edge window
// (per-score masks of both edges, at the edge of 255 registers: ptxas for
// sm_80 spills a few bytes of it, 4 at the time of writing).
// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ASSEMBLES: Used {{[0-9]+}} registers

func.func @paged16_d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x16x128xf16>, %v: tensor<?x?x16x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x16x128xf16>, tensor<?x?x16x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @paged64_d64_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x64x64xbf16>, %v: tensor<?x?x64x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x64x64xbf16>, tensor<?x?x64x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

func.func @lens_d128_window(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %lens: tensor<?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) {window = array<i64: 96, 0>} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @paged128_d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x128x128xf16>, %v: tensor<?x?x128x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x128x128xf16>, tensor<?x?x128x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
