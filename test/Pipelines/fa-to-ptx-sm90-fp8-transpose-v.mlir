// REQUIRES: ptxas
// fp8 with transpose-v (docs/FP8.md, "The V layout decision"): the kernel
// takes V as stored ([B, Hkv, Nk, D] e4m3, its tensor map like K's), TMA
// brings each V tile into a staging tile, and the producer warpgroup (40
// registers, the consumers 232) transposes it into the V^T ring with
// ldmatrix.trans, byte permutes and stmatrix, then arrives (all 128 threads,
// after a proxy fence) on the stage's "V full" mbarrier. No pre-pass, no
// v_key_order in the manifest, no quantization kernels (they write V^T).
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a transpose-v=true},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/tv_d128_causal_lse_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/tv_d128_causal_lse_kernel.json
// RUN: not grep -q v_key_order %t/tv_d128_causal_lse_kernel.json
// RUN: not grep -q auxiliary_kernels %t/tv_d128_block_kernel.json
// RUN: FileCheck %s --check-prefix=D64 < %t/tv_d64_kernel.ptx
// ptxas: nothing spills in either role.
// RUN: %ptxas -arch=sm_90a -v %t/tv_d128_causal_lse_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=AS --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/tv_d128_block_kernel.ptx -o %t/blk.cubin 2>&1 | FileCheck %s --check-prefix=AS --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/tv_d64_kernel.ptx -o %t/d64.cubin 2>&1 | FileCheck %s --check-prefix=AS --implicit-check-not=warning
// The same function without the option reads v_t.
// RUN: rm -rf %t/pre && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/pre})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PRE < %t/pre/tv_d128_causal_lse_kernel.json
// RUN: FileCheck %s --check-prefix=PREPTX --implicit-check-not=stmatrix < %t/pre/tv_d128_block_kernel.ptx

// PTX: .visible .entry tv_d128_causal_lse_kernel(
// PTX: setmaxnreg.dec.sync.aligned.u32 40
// The staged V tile: 8 rounds of 4 matrices per warp at D = 128.
// PTX-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: prmt.b32
// PTX: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: mbarrier.arrive.shared.b64
// The producer warpgroup's named barrier (6 with two consumer warpgroups).
// PTX-NEXT: bar.sync 6, 128;
// PTX: setmaxnreg.inc.sync.aligned.u32 232
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3

// JSON: "meaning": "pointer to the CUtensorMap of v",
// JSON-NEXT: "name": "v_map",
// JSON-NEXT: "shape": [
// JSON-NEXT: "B",
// JSON-NEXT: "Hkv",
// JSON-NEXT: "Nk",
// JSON-NEXT: "D"
// JSON-NEXT: ],
// JSON-NEXT: "tensor": "v",
// JSON: "param": "v_map",
// JSON: "tensor": "v [B, Hkv, Nk, D] contiguous"
// JSON: "transpose_v": true

// At D = 64 (64-byte rows, the 64-byte swizzle of K's map) 4 rounds (LLVM
// may peel the loop: the body can appear twice).
// D64: .visible .entry tv_d64_kernel(
// D64-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// D64: prmt.b32
// D64: bar.sync 6, 128;
// D64: setmaxnreg.inc

// AS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// PRE: "tensor": "v_t",
// PRE: "transpose_v": false
// PRE: "v_key_order": [
// PREPTX: .visible .entry tv_d128_block_kernel(
// PREPTX: setmaxnreg.dec.sync.aligned.u32 24

func.func @tv_d128_causal_lse(%q: tensor<2x8x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>, %v: tensor<2x2x1000x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<2x8x1000x128xf16>, tensor<2x8x1000xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN> -> (tensor<2x8x1000x128xf16>, tensor<2x8x1000xf32>)
  return %o, %lse : tensor<2x8x1000x128xf16>, tensor<2x8x1000xf32>
}

// -----

func.func @tv_d128_block(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @tv_d64(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
