// REQUIRES: ptxas
// The forward's mask operand in the backward kernels (both chips): the
// parameter `mask` after dv with its broadcast shape (a dim of static size 1
// is a literal 1: [B, 1, 1, Nk] is a key-padding mask), read per score
// (Common/ScoreModifiers' applyWithDerivative): a boolean one hides the key
// (P = 0, so dS = 0), an additive one is added to the (softcapped) score,
// which leaves dS's derivative as it is. The mask is the function's argument
// after do; the tensors regions read follow it.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PAD < %t/grad_pad_kernel.json
// RUN: FileCheck %s --check-prefix=BIAS < %t/grad_bias_kernel.json
// RUN: FileCheck %s --check-prefix=DOC < %t/grad_pad_doc_kernel.json
// RUN: FileCheck %s --check-prefix=BOOLPTX < %t/grad_pad_kernel.ptx
// RUN: FileCheck %s --check-prefix=ADDPTX < %t/grad_bias_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/grad_pad_kernel.ptx -o %t/pad.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/grad_bias_kernel.ptx -o %t/bias.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a %t/grad_pad_doc_kernel.ptx -o %t/doc.cubin
// RUN: rm -rf %t80 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PAD < %t80/grad_pad_kernel.json
// RUN: %ptxas -arch=sm_80 %t80/grad_pad_kernel.ptx -o %t80/pad.cubin
// RUN: %ptxas -arch=sm_80 -v %t80/grad_bias_kernel.ptx -o %t80/bias.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_80 %t80/grad_pad_doc_kernel.ptx -o %t80/doc.cubin

// PAD: "op": "attention_grad"
// PAD: "name": "dv"
// PAD: "dtype": "bool",
// PAD-NEXT: "meaning": "boolean mask [Bm, Hm, Nm, Nk]
// PAD-NEXT: "name": "mask",
// PAD-NEXT: "shape": [
// PAD-NEXT: "B",
// PAD-NEXT: 1,
// PAD-NEXT: 1,
// PAD-NEXT: "Nk"
// PAD: "name": "B"

// BIAS: "name": "dv"
// BIAS: "dtype": "f32",
// BIAS-NEXT: "meaning": "additive mask [Bm, Hm, Nm, Nk]
// BIAS-NEXT: "name": "mask",
// BIAS-NEXT: "shape": [
// BIAS-NEXT: 1,
// BIAS-NEXT: "Hq",
// BIAS-NEXT: "Nq",
// BIAS-NEXT: "Nk"
// BIAS: "softcap"

// The mask, then the document ids (argument 7) of the mask_mod.
// DOC: "name": "mask",
// DOC: "name": "arg7",

// BOOLPTX: .entry grad_pad_kernel(
// BOOLPTX: ld.global{{.*}}.b8
// ADDPTX: .entry grad_bias_kernel(
// ADDPTX: ld.global.b32
// ADDPTX: tanh.approx.f32

// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @grad_pad(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>, %m: tensor<?x1x1x?xi1>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do mask(%m : tensor<?x1x1x?xi1>) {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

// -----

func.func @grad_bias(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %m: tensor<1x?x?x?xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do mask(%m : tensor<1x?x?x?xf32>) {softcap = 30.0 : f32} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

// -----

func.func @grad_pad_doc(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %m: tensor<?x1x1x?xi1>, %docs: tensor<4096xi32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do mask(%m : tensor<?x1x1x?xi1>) {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<4096xi32>
    %dj = tensor.extract %docs[%j] : tensor<4096xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}
