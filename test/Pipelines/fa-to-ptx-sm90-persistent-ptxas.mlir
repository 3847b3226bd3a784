// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_f16_d128_causal_lse_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/attn_f16_d128_causal_lse_kernel.json
// RUN: %ptxas -arch=sm_90a -v %t/attn_f16_d128_causal_lse_kernel.ptx -o %t/a.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_bf16_d64_full_kernel.ptx -o %t/b.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_bf16_d128_window_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_f16_d64_causal_kernel.ptx -o %t/d.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_bf16_d128_full_lse_kernel.ptx -o %t/e.cubin 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_f16_d64_full_kernel.ptx -o %t/f.cubin 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=DEFAULT < %t/attn_bf16_d128_full_lse_kernel.json
// RUN: fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a dynamic-tiles=true},fa-dump-kernel{dir=%t/dyn})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/dyn/attn_f16_d64_causal_kernel.ptx -o %t/g.cubin 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/dyn/attn_bf16_d64_full_kernel.ptx -o %t/h.cubin 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/dyn/attn_f16_d128_causal_lse_kernel.ptx -o %t/i.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=DYN < %t/dyn/attn_f16_d64_causal_kernel.ptx

// Persistent kernels assemble for sm_90a without warnings. The producer
// warpgroup runs its tile loop on 40 registers, the consumers on 232
// (setmaxnreg; on 24 the producer spilled 96 bytes). The kernels that are
// persistent by default (full attention at d64 / d128, two Q tiles) spill
// nothing; persistent causal and windowed kernels (opt-in, fa.sm90.persistent)
// spill a few bytes in the consumers at 232 registers (4-36).
// ASM: Compiling entry function 'attn_{{.+}}_kernel' for 'sm_90a'
// ASM: bytes stack frame, {{[0-9]+}} bytes spill stores
// ZERO: Compiling entry function 'attn_{{.+}}_kernel' for 'sm_90a'
// ZERO: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// Dynamic tiles (dynamic-tiles=true): the producer on 56 registers, the
// consumers on 224; no spill at d64 (causal d128 spills a few bytes in the
// consumers); the tile counter by relaxed atomics, fenced around the count.
// DYN: setmaxnreg.dec.sync.aligned.u32 {{.*}}56;
// DYN: setmaxnreg.inc.sync.aligned.u32 {{.*}}224;
// DYN: atom.global.add.u32
// DYN: membar.gl;
// DYN: atom.global.exch.b32
// DEFAULT: "persistent": true,
// DEFAULT: "q_buffers": 2,
// DEFAULT: "split_release": true,
// DEFAULT: "stages": 2,

// PTX: .target sm_90a
// PTX: .visible .entry attn_f16_d128_causal_lse_kernel(
// PTX-DAG: mov.u32 %r{{[0-9]+}}, %nctaid.x;
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: fence.proxy.async.shared::cta
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16

// The grid and the tile count as typed expressions (docs/Manifest.md).
// JSON: "grid": [
// JSON-NEXT: {
// JSON-NEXT: "min": [
// JSON-NEXT: {
// JSON-NEXT: "mul": [
// JSON-NEXT: {
// JSON-NEXT: "ceil_div": [
// JSON-NEXT: "Nq",
// JSON-NEXT: 128
// JSON-NEXT: ]
// JSON-NEXT: },
// JSON-NEXT: "Hq",
// JSON-NEXT: "B"
// JSON-NEXT: ]
// JSON-NEXT: },
// JSON-NEXT: "num_sms"
// JSON-NEXT: ]
// JSON-NEXT: },
// JSON-NEXT: 1,
// JSON-NEXT: 1
// JSON-NEXT: ],
// JSON: "persistent": true,
// JSON: "tiles": {
// JSON-NEXT: "mul": [
// JSON-NEXT: {
// JSON-NEXT: "ceil_div": [
// JSON-NEXT: "Nq",
// JSON-NEXT: 128
// JSON-NEXT: ]
// JSON-NEXT: },
// JSON-NEXT: "Hq",
// JSON-NEXT: "B"
// JSON-NEXT: ]
// JSON-NEXT: },

func.func @attn_f16_d128_causal_lse(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) attributes {fa.sm90.persistent = true} {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

// -----

func.func @attn_bf16_d64_full(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> attributes {fa.sm90.persistent = true} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

func.func @attn_bf16_d128_window(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> attributes {fa.sm90.persistent = true} {
  %o = fa.attention %q, %k, %v {window = array<i64: 256, 64>} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @attn_f16_d64_causal(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> attributes {fa.sm90.persistent = true} {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// Persistent by default (full attention): no attribute.
func.func @attn_bf16_d128_full_lse(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

func.func @attn_f16_d64_full(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
