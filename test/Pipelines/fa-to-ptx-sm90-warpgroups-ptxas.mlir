// REQUIRES: ptxas
// Three consumer warpgroups (fa-to-ptx{block-q=192}: FlashAttention-3's
// head-dim-64 tile of 192 query rows): 512 threads, the producer warpgroup
// on 32 registers and the consumers on 160 (setmaxnreg: 128 x (32 + 3 x 160)
// = 65,536), the turn of the ping-pong going round the three warpgroups
// (named barriers 4-6: warpgroup w syncs on 4 + w, 256 threads; the one
// before it arrives), Q loaded as three 64-row boxes, the grid over 192-row
// blocks. Full attention runs persistent CTAs with two Q tiles and 4 stages
// (measured, as with two warpgroups); on 32 registers the producer's tile
// loop spills a few bytes (on 56 it does not, but 56 + 3 x 160 exceeds the
// register file), the consumers nothing: one tile per CTA (persistent=false)
// assembles without any spill. Causal kernels run one tile per CTA, 3 stages.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a block-q=192},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t/attn_d64_f16_full_kernel.json
// RUN: FileCheck %s --check-prefix=CAUSAL-JSON < %t/attn_d64_bf16_causal_lse_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_d64_bf16_causal_lse_kernel.ptx
// RUN: FileCheck %s --check-prefix=PERSISTENT < %t/attn_d64_f16_full_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/attn_d64_bf16_causal_lse_kernel.ptx -o %t/b.cubin 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/attn_d64_f16_full_kernel.ptx -o %t/a.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// A window with a left edge (two compares per masked score) spills a few
// bytes at 160 registers: it assembles.
// RUN: %ptxas -arch=sm_90a -v %t/attn_d64_f16_window_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=ASM --implicit-check-not=warning
// RUN: rm -rf %t/one && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a block-q=192 persistent=false},fa-dump-kernel{dir=%t/one})' -o /dev/null
// RUN: FileCheck %s --check-prefix=ONE-JSON < %t/one/attn_d64_f16_full_kernel.json
// RUN: %ptxas -arch=sm_90a -v %t/one/attn_d64_f16_full_kernel.ptx -o %t/d.cubin 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=warning

// JSON: "block": [
// JSON-NEXT: 512,
// JSON: "block_q": 192,
// JSON: "grid": [
// JSON-NEXT: {
// JSON-NEXT: "min": [
// JSON-NEXT: {
// JSON-NEXT: "mul": [
// JSON-NEXT: {
// JSON-NEXT: "ceil_div": [
// JSON-NEXT: "Nq",
// JSON-NEXT: 192
// JSON: "persistent": true,
// JSON: "q_buffers": 2,
// JSON: "stages": 4,

// CAUSAL-JSON: "block_q": 192,
// CAUSAL-JSON: "grid": [
// CAUSAL-JSON-NEXT: {
// CAUSAL-JSON-NEXT: "ceil_div": [
// CAUSAL-JSON-NEXT: "Nq",
// CAUSAL-JSON-NEXT: 192
// CAUSAL-JSON: "persistent": false,
// CAUSAL-JSON: "stages": 3,

// ONE-JSON: "persistent": false,
// ONE-JSON: "stages": 4,

// PTX: .visible .entry attn_d64_bf16_causal_lse_kernel(
// PTX: .maxntid 512, 1, 1
// PTX-DAG: mov.b32 %r{{[0-9]+}}, 12;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 32;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 160;
// PTX-DAG: bar.sync %r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16

// PERSISTENT: setmaxnreg.dec.sync.aligned.u32 32;
// PERSISTENT: setmaxnreg.inc.sync.aligned.u32 160;

// ZERO: Compiling entry function 'attn_d64_{{.+}}_kernel' for 'sm_90a'
// ZERO: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ASM: Compiling entry function 'attn_d64_{{.+}}_kernel' for 'sm_90a'
// ASM: bytes stack frame, {{[0-9]+}} bytes spill stores

func.func @attn_d64_f16_full(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

func.func @attn_d64_bf16_causal_lse(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// -----

func.func @attn_d64_f16_window(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 100, 0>} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
