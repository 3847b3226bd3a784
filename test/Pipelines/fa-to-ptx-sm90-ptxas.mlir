// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/attn_d128_f16_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=D128
// RUN: %ptxas -arch=sm_90a -v %t/attn_d64_bf16_lse_kernel.ptx -o %t/d64.cubin 2>&1 | FileCheck %s --check-prefix=D64
// RUN: %ptxas -arch=sm_90a -v %t/attn_d128_bf16_causal_kernel.ptx -o %t/d128c.cubin 2>&1 | FileCheck %s --check-prefix=CAUSAL
// The measured configuration (3 stages, P in registers, fast softmax): no
// spills and no ptxas warning (e.g. wgmma serialization).
// RUN: rm -rf %t3 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a stages=3},fa-dump-kernel{dir=%t3})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t3/attn_d128_f16_kernel.ptx -o %t3/d128.cubin 2>&1 | FileCheck %s --check-prefix=D128 --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t3/attn_d128_bf16_causal_kernel.ptx -o %t3/d128c.cubin 2>&1 | FileCheck %s --check-prefix=CAUSAL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t3/attn_d64_bf16_lse_kernel.ptx -o %t3/d64.cubin 2>&1 | FileCheck %s --check-prefix=D64 --implicit-check-not=warning
// wgmma needs the "a" target: the PTX is for sm_90a only.
// RUN: not %ptxas -arch=sm_90 %t/attn_d128_f16_kernel.ptx -o %t/plain.cubin 2>&1 | FileCheck %s --check-prefix=PLAIN

// D128: Compiling entry function 'attn_d128_f16_kernel' for 'sm_90a'
// D128: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D64: Compiling entry function 'attn_d64_bf16_lse_kernel' for 'sm_90a'
// D64: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CAUSAL: Compiling entry function 'attn_d128_bf16_causal_kernel' for 'sm_90a'
// CAUSAL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PLAIN: PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'

func.func @attn_d128_f16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @attn_d64_bf16_lse(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// -----

func.func @attn_d128_bf16_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
