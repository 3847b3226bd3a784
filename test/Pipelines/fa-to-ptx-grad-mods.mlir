// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=ALIBI < %t/alibi_kernel.ptx
// RUN: FileCheck %s --check-prefix=SOFTCAP < %t/softcap_mod_kernel.ptx
// RUN: FileCheck %s --check-prefix=DOC < %t/doc_kernel.json
// RUN: FileCheck %s --check-prefix=DOCPTX < %t/doc_kernel.ptx
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=DOC < %t/doc_kernel.json
// RUN: FileCheck %s --check-prefix=SM80 < %t/softcap_mod_kernel.ptx
// RUN: fa-opt %s --fa-differentiate-score-mod '--convert-fa-to-nvgpu=chip=sm_90a' | FileCheck %s --check-prefix=IR

// The backward kernels apply the op's regions per score as the forward
// kernels do (Common/ScoreModifiers): score_mod through the derivative region
// fa-differentiate-score-mod builds (fa-to-ptx runs it): P from the modified
// score, dS times its derivative; mask_mod hides keys (P = 0). Tensors the
// regions read are kernel parameters arg<N> after dv, as in the forward.

// ALiBi: t = s + slope(h) (j - i): dt/ds = 1, so dS is not multiplied; the
// slope is an exp2 of the head, the bias a convert of the positions.
// ALIBI: .entry alibi_kernel(
// ALIBI: ex2.approx
// ALIBI: cvt.rn.f32.s32

// softcap as score_mod, 30 tanh(s / 30) with tanh.approx (afn): dS times
// 1 - tanh^2 (the chain rule of the region's ops).
// SOFTCAP: .entry softcap_mod_kernel(
// SOFTCAP: tanh.approx.f32
// SM80: .target sm_80
// SM80: tanh.approx.f32

// Document masking reads the captured ids: argument 6 of the function, the
// kernel parameter after dv.
// DOC: "name": "dv"
// DOC: "dtype": "i32"
// DOC-NEXT: "meaning": "argument 6 of the function, read by a modifier region, contiguous"
// DOC-NEXT: "name": "arg6"
// DOC-NEXT: "shape": [
// DOC-NEXT: 4096
// DOC: "name": "B"
// Block sparsity: mask_mod is bounded by interval arithmetic (a scan of the
// ids), so each CTA first narrows its query blocks to those where some of its
// keys may be visible (a ballot per 32 blocks); ALiBi has no mask_mod.
// DOCPTX: .entry doc_kernel(
// DOCPTX: ld.param.b64 {{.*}}[doc_kernel_param_9]
// DOCPTX: vote.sync.ballot.b32
// DOCPTX: ld.global.b32
// ALIBI-NOT: vote.sync.ballot

// IR: gpu.func @alibi_kernel
// IR: math.exp2
// IR: gpu.func @softcap_mod_kernel
// IR: tanh.approx.f32
// IR: gpu.func @doc_kernel

func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %m = arith.constant -0.5 : f32
    %h1 = arith.addi %h, %c1 : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @softcap_mod(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.0333333351 : f32
    %cap = arith.constant 30.0 : f32
    %x = arith.mulf %s, %inv : f32
    %t = math.tanh %x fastmath<afn> : f32
    %r = arith.mulf %t, %cap : f32
    fa.yield %r : f32
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

func.func @doc(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>, %docs: tensor<4096xi32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<4096xi32>
    %dj = tensor.extract %docs[%j] : tensor<4096xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}
