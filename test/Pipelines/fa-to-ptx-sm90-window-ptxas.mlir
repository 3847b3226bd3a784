// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_bf16_d128_window_lse_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/attn_bf16_d128_window_lse_kernel.json
// RUN: %ptxas -arch=sm_90a -v %t/attn_bf16_d128_window_lse_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=D128 --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_f16_d64_window_kernel.ptx -o %t/d64.cubin 2>&1 | FileCheck %s --check-prefix=D64 --implicit-check-not=warning
// The other schedules (one block per step; no producer warpgroup) assemble too.
// RUN: rm -rf %t2 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a overlap=false},fa-dump-kernel{dir=%t2})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t2/attn_bf16_d128_window_lse_kernel.ptx -o %t2/d128.cubin 2>&1 | FileCheck %s --check-prefix=D128 --implicit-check-not=warning
// RUN: rm -rf %t3 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a warp-specialize=false},fa-dump-kernel{dir=%t3})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t3/attn_bf16_d128_window_lse_kernel.ptx -o %t3/d128.cubin 2>&1 | FileCheck %s --check-prefix=D128 --implicit-check-not=warning

// Sliding windows at the measured configuration (3 stages, P in registers,
// fast softmax): no spills, no ptxas warning.
// D128: Compiling entry function 'attn_bf16_d128_window_lse_kernel' for 'sm_90a'
// D128: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D64: Compiling entry function 'attn_f16_d64_window_kernel' for 'sm_90a'
// D64: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// PTX: .target sm_90a
// PTX: .visible .entry attn_bf16_d128_window_lse_kernel(
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: lg2.approx.f32

// JSON: "causal": false,
// JSON: "lse": true,
// JSON: "window": [
// JSON-NEXT: 256,
// JSON-NEXT: 64
// JSON-NEXT: ]

func.func @attn_bf16_d128_window_lse(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v {window = array<i64: 256, 64>} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

func.func @attn_f16_d64_window(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 100, 0>} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
