// The sm_90a schedule's measured defaults for kernels with score modifiers
// (bench/results/variants_h200_2026-12-04_s28): a score_mod region turns
// rescale-before-pv on; one whose score goes through arithmetic alone (a
// per-row exp2 of the head index is not per score) also gives the producer
// 56 registers at D = 128, one with a tanh of the score keeps 24; softcap
// alone at D = 128 turns ping-pong off (on at D = 64), and so does a mask_mod
// reading a captured tensor, with split release, and a score_mod whose bias
// the kernel splits off the score (ALiBi: s + bias, at D = 128;
// bench/results/variants_h200_2026-12-04_s30); options and attributes still
// override.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a producer-registers=24 ping-pong=true rescale-before-pv=false" | FileCheck %s --check-prefix=OPT

// CHECK: \22ping_pong\22: false,\0A  \22producer_registers\22: 56,\0A  \22ptx\22: \22alibi_kernel.ptx\22,{{.*}}\22rescale_before_pv\22: true
// OPT: \22ping_pong\22: true,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22alibi_kernel.ptx\22,{{.*}}\22rescale_before_pv\22: false
func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %m = arith.constant -0.5 : f32
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The bias split at D = 64 (not measured there): ping-pong stays on.
// CHECK: \22ping_pong\22: true,{{.*}}\22ptx\22: \22alibi_d64_kernel.ptx\22
func.func @alibi_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %t = arith.addf %s, %df : f32
    fa.yield %t : f32
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// A score_mod that scales the score before adding the bias adds no bias to
// the score itself: not split, ping-pong stays on.
// CHECK: \22ping_pong\22: true,{{.*}}\22ptx\22: \22scaled_bias_kernel.ptx\22
func.func @scaled_bias(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %t = math.fma %s, %two, %df : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The score plus a term computed from the score: no bias to split, ping-pong
// stays on.
// CHECK: \22ping_pong\22: true,{{.*}}\22ptx\22: \22score_term_kernel.ptx\22
func.func @score_term(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %half = arith.constant 0.5 : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %x = math.fma %s, %half, %df : f32
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// CHECK: \22ping_pong\22: true,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22tanh_mod_kernel.ptx\22,{{.*}}\22rescale_before_pv\22: true
func.func @tanh_mod(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.0333333351 : f32
    %cap = arith.constant 30.0 : f32
    %x = arith.mulf %s, %inv : f32
    %t = math.tanh %x fastmath<afn> : f32
    %r = arith.mulf %t, %cap : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// CHECK: \22ping_pong\22: false,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22softcap_d128_kernel.ptx\22,{{.*}}\22rescale_before_pv\22: false
// OPT: \22ping_pong\22: true,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22softcap_d128_kernel.ptx\22,{{.*}}\22rescale_before_pv\22: false
func.func @softcap_d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// CHECK: \22ping_pong\22: true,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22softcap_d64_kernel.ptx\22,{{.*}}\22rescale_before_pv\22: false
func.func @softcap_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// A mask_mod that reads a captured tensor (document masking) at D = 128:
// split release on, ping-pong off.
// CHECK: \22ping_pong\22: false,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22doc_kernel.ptx\22,{{.*}}\22split_release\22: true
// OPT: \22ping_pong\22: true,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22doc_kernel.ptx\22,{{.*}}\22split_release\22: true
func.func @doc(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %docs: tensor<4096xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<4096xi32>
    %dj = tensor.extract %docs[%j] : tensor<4096xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A mask_mod of positions alone (prefix-LM) keeps both.
// CHECK: \22ping_pong\22: true,\0A  \22producer_registers\22: 24,\0A  \22ptx\22: \22prefixlm_kernel.ptx\22,{{.*}}\22split_release\22: false
func.func @prefixlm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 2048 : index
    %inprefix = arith.cmpi slt, %j, %p : index
    %past = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inprefix, %past : i1
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
