// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_d128_f16_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/attn_d64_bf16_lse_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/attn_d128_f16_causal_kernel.json
// P goes to the P V wgmma in registers: no generic-to-async proxy fence.
// RUN: not grep -q fence.proxy.async %t/attn_d128_f16_causal_kernel.ptx

// IR: gpu.binary @attn_d128_f16_causal_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90a
// IR: gpu.binary @attn_d64_bf16_lse_kernels

// PTX: .version 8.0
// PTX: .target sm_90a
// PTX: .visible .entry {{attn_d128_f16_causal_kernel|attn_d64_bf16_lse_kernel}}(
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.{{f16.f16|bf16.bf16}}
// PTX-DAG: wgmma.commit_group.sync.aligned
// PTX-DAG: wgmma.wait_group.sync.aligned 0
// The P V wgmma with A (P, f16x2/bf16x2) in 4 registers per k-step, B (V)
// MN-major by descriptor (tnspB = 1), emitted as inline PTX.
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n{{64|128}}k16.f32.{{f16.f16|bf16.bf16}} {%r{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// fast softmax: row max by max.f32, exp2(s * c - m) as one fma.
// PTX-DAG: max.f32
// PTX-DAG: fma.rn.f32
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: st.global.v4.b32
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240
// PTX-DAG: mbarrier.arrive.shared.b64

// JSON: "chip": "sm_90a"
// 32 KiB of Q + 3 stages x (K + V) x 128 keys x 128 x 2 bytes + 1 KiB (the default 3 stages).
// JSON: "dynamic_shared_memory_bytes": 230400
// JSON: "grid": [
// JSON-NEXT: {
// JSON-NEXT: "ceil_div": [
// JSON-NEXT: "Nq",
// JSON-NEXT: 128
// JSON-NEXT: ]
// JSON-NEXT: },
// JSON-NEXT: "Hq",
// JSON: "type": "tensormap"
// JSON: "tensor_maps": [
// JSON: "box": [
// JSON-NEXT: 64,
// JSON-NEXT: 64,
// JSON-NEXT: 1
// JSON: "dims": [
// JSON-NEXT: "D",
// JSON-NEXT: "Nq",
// JSON-NEXT: {
// JSON-NEXT: "mul": [
// JSON-NEXT: "B",
// JSON-NEXT: "Hq"
// JSON-NEXT: ]
// JSON-NEXT: }
// JSON-NEXT: ],
// JSON: "oob_fill": "zero",
// JSON: "param": "q_map",
// JSON: "swizzle": "128B"
// JSON: "param": "k_map",

func.func @attn_d128_f16_causal(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

func.func @attn_d64_bf16_lse(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
