// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_80 -v %t/grad_d64_f16_causal_kernel.ptx -o %t/a.cubin 2>&1 | FileCheck %s --check-prefix=D64
// RUN: %ptxas -arch=sm_80 -v %t/grad_d64_bf16_window_softcap_kernel.ptx -o %t/b.cubin 2>&1 | FileCheck %s --check-prefix=D64SC
// RUN: %ptxas -arch=sm_80 -v %t/grad_d128_f16_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=D128
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/grad_d128_f16_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: %ptxas -arch=sm_90a -v %t/grad_d64_f16_causal_kernel.ptx -o %t/d.cubin 2>&1 | FileCheck %s --check-prefix=SM90D64
// RUN: %ptxas -arch=sm_90a -v %t/grad_d128_f16_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=SM90WARN
// RUN: %ptxas -arch=sm_90a -v %t/grad_d64_f16_causal_kernel.ptx -o %t/d.cubin 2>&1 | FileCheck %s --check-prefix=SM90WARN

// The backward kernels assemble for both chips; nothing spills but the
// mma.sync kernel at head dim 128 (sm_80).
// D64: Compiling entry function 'grad_d64_f16_causal_kernel' for 'sm_80'
// D64: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D64SC: Compiling entry function 'grad_d64_bf16_window_softcap_kernel' for 'sm_80'
// D64SC: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128: Compiling entry function 'grad_d128_f16_kernel' for 'sm_80'
// D128: Used {{[0-9]+}} registers
// SM90: Compiling entry function 'grad_d128_f16_kernel' for 'sm_90a'
// SM90: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SM90: Used {{[0-9]+}} registers
// The warp-specialized wgmma kernels: setmaxnreg takes effect (C7508: "ignored;
// unable to determine register count at entry" without the kernel's .maxnreg),
// and no wgmma is serialized (C7512: too few registers, C7514: an accumulator
// read while its wgmma may run, e.g. a copy across the loop's back edge).
// SM90WARN-NOT: C7508
// SM90WARN-NOT: C7512
// SM90WARN-NOT: C7514
// The wgmma kernel at head dim 64: nothing spills, and no register that a
// wgmma reads is written after its fence (ptxas would inject an arrive).
// SM90D64-NOT: C7519
// SM90D64: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @grad_d64_f16_causal(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

// -----

func.func @grad_d64_bf16_window_softcap(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %o: tensor<?x?x?x64xbf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {window = array<i64: 100, 20>, softcap = 50.0 : f32} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}

// -----

func.func @grad_d128_f16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}
