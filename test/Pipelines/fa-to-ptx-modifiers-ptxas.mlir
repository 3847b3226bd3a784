// REQUIRES: ptxas
// softcap and the mask operand in the sm_90a and sm_80 kernels (issue 16):
// applied to every score fragment (docs/Attention.md's order), the mask a
// kernel parameter with its broadcast shape in the manifest.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SOFTCAP < %t/softcap_kernel.ptx
// RUN: FileCheck %s --check-prefix=ADD < %t/additive_kernel.json
// RUN: FileCheck %s --check-prefix=BOOL < %t/boolean_kernel.json
// RUN: FileCheck %s --check-prefix=BOOLPTX < %t/boolean_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/softcap_kernel.ptx -o %t/softcap.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a %t/additive_kernel.ptx -o %t/additive.cubin
// RUN: %ptxas -arch=sm_90a %t/boolean_kernel.ptx -o %t/boolean.cubin
// RUN: rm -rf %t80 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SOFTCAP < %t80/softcap_kernel.ptx
// RUN: FileCheck %s --check-prefix=ADD < %t80/additive_kernel.json
// RUN: %ptxas -arch=sm_80 %t80/softcap_kernel.ptx -o %t80/softcap.cubin
// RUN: %ptxas -arch=sm_80 %t80/additive_kernel.ptx -o %t80/additive.cubin
// RUN: %ptxas -arch=sm_80 %t80/boolean_kernel.ptx -o %t80/boolean.cubin

// SOFTCAP: tanh.approx.f32
// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// The mask between out and the sizes; broadcast dims are literal 1.
// ADD: "name": "out",
// ADD: "align_bytes": 2,
// ADD-NEXT: "dtype": "bf16",
// ADD-NEXT: "meaning": "additive mask
// ADD-NEXT: "name": "mask",
// ADD-NEXT: "shape": [
// ADD-NEXT: 1,
// ADD-NEXT: "Hq",
// ADD-NEXT: "Nq",
// ADD-NEXT: "Nk"
// ADD: "name": "B",

// BOOL: "align_bytes": 1,
// BOOL-NEXT: "dtype": "bool",
// BOOL-NEXT: "meaning": "boolean mask
// BOOL-NEXT: "name": "mask",
// BOOL-NEXT: "shape": [
// BOOL-NEXT: "B",
// BOOL-NEXT: 1,
// BOOLPTX: ld.global.b8

func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal, softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @additive(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %m: tensor<1x8x?x?xbf16>) -> tensor<?x8x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x8x?x?xbf16>) : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

// -----

func.func @boolean(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %m: tensor<?x1x?x?xi1>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v mask(%m : tensor<?x1x?x?xi1>) {window = array<i64: 256, 0>} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}
