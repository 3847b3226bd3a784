// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t})' | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_d128_f16_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_d64_bf16_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/attn_d128_f16_causal_kernel.json
// block-q / block-kv override the chip's block sizes (sm_80: 128 x 64).
// RUN: rm -rf %t64 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 block-q=64 block-kv=64},fa-dump-kernel{dir=%t64})' -o /dev/null
// RUN: FileCheck %s --check-prefix=BQ64 < %t64/attn_d128_f16_causal_kernel.json
// RUN: rm -rf %t16 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 rows-per-warp=16},fa-dump-kernel{dir=%t16})' -o /dev/null
// RUN: FileCheck %s --check-prefix=R16 < %t16/attn_d128_f16_causal_kernel.json
// R16: "block": [
// R16-NEXT: 256,
// R16: "rows_per_warp": 16,
// BQ64: "block": [
// BQ64-NEXT: 128,
// BQ64: "block_q": 64,
// BQ64: "grid": [
// BQ64-NEXT: {
// BQ64-NEXT: "ceil_div": [
// BQ64-NEXT: "Nq",
// BQ64-NEXT: 64
// BQ64-NEXT: ]
// BQ64-NEXT: },
// BQ64-NEXT: "Hq",

// IR: gpu.binary @attn_d128_f16_causal_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_80
// IR: gpu.binary @attn_d64_bf16_kernels

// PTX: .target sm_80
// PTX: .visible .entry {{attn_d128_f16_causal_kernel|attn_d64_bf16_kernel}}(
// PTX-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.{{f16.f16|bf16.bf16}}.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx.ftz.f32

// JSON: "block": [
// JSON-NEXT: 128,
// JSON: "block_kv": 32,
// JSON: "block_q": 128,
// JSON: "causal": true,
// JSON: "dynamic_shared_memory_bytes": 52352,
// JSON: "grid": [
// JSON-NEXT: {
// JSON-NEXT: "ceil_div": [
// JSON-NEXT: "Nq",
// JSON-NEXT: 128
// JSON-NEXT: ]
// JSON-NEXT: },
// JSON-NEXT: "Hq",
// JSON-NEXT: "B"
// JSON: "head_dim": 128,
// JSON: "kernel": "attn_d128_f16_causal_kernel",
// JSON: "name": "q",
// JSON: "name": "k",
// JSON: "name": "v",
// JSON: "name": "out",
// JSON: "name": "B",
// JSON-NEXT: "type": "i32"
// JSON: "name": "Hq",
// JSON: "name": "Hkv",
// JSON: "name": "Nq",
// JSON: "name": "Nk",
// JSON: "ptx": "attn_d128_f16_causal_kernel.ptx",

func.func @attn_d128_f16_causal(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @attn_d64_bf16(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
