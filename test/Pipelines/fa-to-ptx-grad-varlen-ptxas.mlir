// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/grad_varlen_d128_bf16_causal_kernel.ptx -o %t/a.cubin 2>&1 | FileCheck %s

// The varlen backward kernel (fa-to-ptx-grad-varlen.mlir) assembles with
// setmaxnreg in effect (C7508), no serialized wgmma (C7512) and, causal at
// head dim 128, no spill (with a window, bench/kernels_backward_varlen.mlir,
// 4 bytes: the sequence's offsets live in registers).
// CHECK: Compiling entry function 'grad_varlen_d128_bf16_causal_kernel' for 'sm_90a'
// CHECK-NOT: C7508
// CHECK-NOT: C7512
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @grad_varlen_d128_bf16_causal(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %o: tensor<1x?x?x128xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
}
