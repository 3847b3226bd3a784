// REQUIRES: ptxas
// FP8 (f8E4M3FN) attention on sm_90a (docs/FP8.md): both GEMMs as e4m3 wgmma
// with f32 accumulators, P converted to e4m3 in registers, V read as V^T,
// the per-tensor descales read from device memory; f16 / bf16 out.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp8_d128_causal_lse_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/fp8_d128_causal_lse_kernel.json
// RUN: FileCheck %s --check-prefix=PTX256 < %t/fp8_d256_bf16_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON256 < %t/fp8_d256_bf16_kernel.json
// ptxas: no spills at head dim 128 (nor any warning, e.g. wgmma serialization).
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d128_causal_lse_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=D128 --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d128_full_kernel.ptx -o %t/d128f.cubin 2>&1 | FileCheck %s --check-prefix=D128F --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=BLOCK < %t/fp8_d128_block_kernel.json
// RUN: FileCheck %s --check-prefix=HEAD < %t/fp8_d128_head_kernel.json
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d128_block_kernel.ptx -o %t/blk.cubin 2>&1 | FileCheck %s --check-prefix=D128B --implicit-check-not=warning
// Per-block descales: the module also holds the three quantization kernels
// (SM90/FP8Quantize), listed as auxiliary kernels; per tensor it has none.
// RUN: FileCheck %s --check-prefix=QJSON < %t/fp8_d128_block_kernel.json
// RUN: FileCheck %s --check-prefix=QPTX < %t/fp8_d128_block_kernel.ptx
// RUN: not grep -q auxiliary_kernels %t/fp8_d128_full_kernel.json
// RUN: not grep -q auxiliary_kernels %t/fp8_d128_head_kernel.json
// RUN: FileCheck %s --check-prefix=D64 < %t/fp8_d64_kernel.json
// RUN: FileCheck %s --check-prefix=D64PTX < %t/fp8_d64_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d64_kernel.ptx -o %t/d64.cubin 2>&1 | FileCheck %s --check-prefix=D64AS --implicit-check-not=warning
// Head dim 256 (128-key tiles beside O's 128 accumulators) fits the
// consumers' 240 registers by its measured schedule: no ping-pong without a
// mask band, the serial schedule with one (docs/FP8.md); per-tensor and
// per-block descales, causal or not, nothing spills.
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d256_bf16_kernel.ptx -o %t/d256.cubin 2>&1 | FileCheck %s --check-prefix=D256 --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=D256C < %t/fp8_d256_causal_lse_kernel.json
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d256_causal_lse_kernel.ptx -o %t/d256c.cubin 2>&1 | FileCheck %s --check-prefix=D256 --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d256_block_kernel.ptx -o %t/d256b.cubin 2>&1 | FileCheck %s --check-prefix=D256 --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a -v %t/fp8_d256_block_causal_kernel.ptx -o %t/d256bc.cubin 2>&1 | FileCheck %s --check-prefix=D256 --implicit-check-not=warning
// An option still sets them: the pipelined, ping-pong schedule (which spills).
// RUN: rm -rf %t/pp && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a overlap=true ping-pong=true},fa-dump-kernel{dir=%t/pp})' -o /dev/null
// RUN: FileCheck %s --check-prefix=D256PP < %t/pp/fp8_d256_causal_lse_kernel.json

// PTX: .target sm_90a
// PTX: .visible .entry fp8_d128_causal_lse_kernel(
// The measured register split of causal fp8 at D = 128 (per tensor / per
// head): 40 / 232 (1.03-1.14x 24 / 240, SM90/Schedule.cpp fp8FasterOn232).
// PTX: setmaxnreg.dec.sync.aligned.u32 40
// PTX: setmaxnreg.inc.sync.aligned.u32 232
// The descales: q and k folded into the softmax scale once per tile.
// PTX: ld.global.b32
// PTX: ld.global.b32
// S = Q K^T: e4m3 x e4m3, both operands from shared memory, k32.
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// P to e4m3 in registers, four per b32, round to nearest even, saturating.
// PTX: cvt.rn.satfinite.e4m3x2.f32
// O += P V: A from registers, B = V^T from shared memory (K-major, no
// transpose flag for 8-bit types).
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{[{](%r[0-9]+, ){63}%r[0-9]+[}]}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1;
// f16 output (16-byte stores of the staged tile).
// PTX: st.global.v4.b32

// JSON: "block_kv": 128,
// JSON: "dtype": "f8e4m3",
// JSON: "head_dim": 128,
// JSON: "out_dtype": "f16",
// JSON: "name": "q_map",
// JSON: "tensor": "v_t",
// JSON: "dtype": "f16",
// JSON-NEXT: "meaning": "output [B, Hq, Nq, D], contiguous, f16",
// JSON: "name": "lse",
// JSON: "name": "q_descale",
// JSON: "name": "k_descale",
// JSON: "name": "v_descale",
// JSON: "box": [
// JSON-NEXT: 128,
// JSON-NEXT: 64,
// JSON-NEXT: 1
// JSON: "tensorDataType": 0{{$}}
// JSON: "param": "q_map",
// V^T: boxes of D rows of 128 keys.
// JSON: "box": [
// JSON-NEXT: 128,
// JSON-NEXT: 128,
// JSON-NEXT: 1
// JSON: "param": "v_map",
// JSON: "tensor": "v_t [B, Hkv, D, ceil(Nk / 32) * 32] contiguous: v transposed, keys of each 32-key group in v_key_order, zero padded"
// JSON: "v_key_order": [
// JSON-NEXT: 0,
// JSON-NEXT: 1,
// JSON-NEXT: 8,
// JSON-NEXT: 9,
// JSON-NEXT: 2,

// PTX256: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTX256: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// JSON256: "block_kv": 128,
// JSON256: "dynamic_shared_memory_bytes": 230400,
// JSON256: "out_dtype": "bf16",
// JSON256: "overlap": true,
// JSON256: "ping_pong": false,
// JSON256: "stages": 2,
// D256C: "overlap": false,
// D256C: "ping_pong": false,
// D256PP: "overlap": true,
// D256PP: "ping_pong": true,

// D128: Compiling entry function 'fp8_d128_causal_lse_kernel' for 'sm_90a'
// D128: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128F: Compiling entry function 'fp8_d128_full_kernel' for 'sm_90a'
// D128F: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128B: Compiling entry function 'fp8_d128_block_kernel_quantize_v' for 'sm_90a'
// D128B: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128B: Compiling entry function 'fp8_d128_block_kernel_quantize_k' for 'sm_90a'
// D128B: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128B: Compiling entry function 'fp8_d128_block_kernel_quantize_q' for 'sm_90a'
// D128B: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128B: Compiling entry function 'fp8_d128_block_kernel' for 'sm_90a'
// D128B: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// QJSON: "auxiliary_kernels": [
// QJSON: "block": [
// QJSON-NEXT: 256,
// QJSON: "grid": [
// QJSON-NEXT: {
// QJSON-NEXT: "ceil_div": [
// QJSON-NEXT: "Nq",
// QJSON-NEXT: 128
// QJSON: "kernel": "fp8_d128_block_kernel_quantize_q",
// QJSON-NEXT: "op": "attention_fp8_quantize_q",
// QJSON: "meaning": "q8 [B, Hq, Nq, D] e4m3, written: q / q_descale, rounded to nearest even, saturated to 448",
// QJSON: "kernel": "fp8_d128_block_kernel_quantize_k",
// QJSON-NEXT: "op": "attention_fp8_quantize_k",
// QJSON: "kernel": "fp8_d128_block_kernel_quantize_v",
// QJSON-NEXT: "op": "attention_fp8_quantize_v",
// QJSON: "meaning": "v_t [B, Hkv, D, ceil(Nk / 32) * 32] e4m3, written: v / v_descale transposed, keys of each 32-key group in v_key_order, zero padded",
// The q kernel: 16-byte loads, the block max over the warp (5 butterfly
// shuffles) and the 8 warps (shared memory, a barrier), delta divided (not a
// reciprocal's multiply), each element divided by it, RNE + saturation, 8
// bytes stored per chunk.
// QPTX-LABEL: .visible .entry fp8_d128_block_kernel_quantize_q(
// QPTX: ld.global.v4.b32
// QPTX-COUNT-5: shfl.sync.bfly.b32
// QPTX: bar.sync 0;
// QPTX: div.rn.f32 {{.*}}, 0f43E00000;
// QPTX: max.f32 {{.*}}, 0f00800000;
// QPTX: div.rn.f32
// QPTX: cvt.rn.satfinite.e4m3x2.f32
// QPTX: st.global.v2.b32
// The v kernel: bytes into the transposed block, a barrier, 4-byte rows out.
// QPTX-LABEL: .visible .entry fp8_d128_block_kernel_quantize_v(
// QPTX: cvt.rn.satfinite.e4m3x2.f32
// QPTX: st.shared.b8
// QPTX: bar.sync 0;
// QPTX: ld.shared.b32
// QPTX: st.global.b32
// BLOCK: "meaning": "descale of q: [B, Hq, ceil(Nq / 128)] f32 (per block of 128 rows)",
// BLOCK-NEXT: "name": "q_descale",
// BLOCK-NEXT: "shape": [
// BLOCK-NEXT: "B",
// BLOCK-NEXT: "Hq",
// BLOCK-NEXT: {
// BLOCK-NEXT: "ceil_div": [
// BLOCK-NEXT: "Nq",
// BLOCK-NEXT: 128
// BLOCK: "meaning": "descale of k: [B, Hkv, ceil(Nk / 128)] f32 (per block of 128 rows)",
// BLOCK: "meaning": "descale of v: [B, Hkv, ceil(Nk / 128)] f32 (per block of 128 rows)",
// HEAD: "meaning": "descale of q: [B, Hq] f32 (per head)",
// HEAD: "meaning": "descale of k: [B, Hkv] f32 (per head)",
// HEAD: "meaning": "descale of v: [B, Hkv] f32 (per head)",
// D64: "box": [
// D64-NEXT: 64,
// D64-NEXT: 64,
// D64-NEXT: 1
// D64: "swizzle": 2,
// D64: "param": "q_map",
// D64: "swizzle": "64B",
// D64: "box": [
// D64-NEXT: 64,
// D64-NEXT: 128,
// D64-NEXT: 1
// D64: "swizzle": 2,
// D64: "param": "k_map",
// D64: "swizzle": "64B",
// D64: "box": [
// D64-NEXT: 128,
// D64-NEXT: 64,
// D64-NEXT: 1
// D64: "swizzle": 3,
// D64: "param": "v_map",
// D64: "swizzle": "128B",
// The S GEMM's descriptors: 64-byte swizzle (mode 2 in bits 62-63), 8-row
// stride 512 bytes (32 at bit 32), leading byte offset 16 (1 at bit 16):
// 0x8000002000010000.
// D64PTX: or.b64 {{.*}}, -9223371899415756800;
// D64PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// D64PTX: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
// D64AS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D256: Compiling entry function 'fp8_d256_{{[a-z_0-9]+}}_kernel' for 'sm_90a'
// D256: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @fp8_d128_causal_lse(%q: tensor<2x8x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>, %v: tensor<2x2x1000x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<2x8x1000x128xf16>, tensor<2x8x1000xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN> -> (tensor<2x8x1000x128xf16>, tensor<2x8x1000xf32>)
  return %o, %lse : tensor<2x8x1000x128xf16>, tensor<2x8x1000xf32>
}

// -----

func.func @fp8_d128_full(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @fp8_d256_bf16(%q: tensor<?x?x?x256xf8E4M3FN>, %k: tensor<?x?x?x256xf8E4M3FN>, %v: tensor<?x?x?x256xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// Per-block descales (blocks = the kernel's 128 x 128 tiles): [B, H, blocks]
// each; the k and v descales are read per key block.
func.func @fp8_d128_block(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

// Per-head descales: [B, H] each.
func.func @fp8_d128_head(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// -----

// Head dim 64: Q and K rows are 64 bytes, loaded and read with the 64-byte
// swizzle (tensor maps and wgmma descriptors must agree); V^T keeps 128-byte
// rows of keys.
func.func @fp8_d64(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

func.func @fp8_d256_causal_lse(%q: tensor<?x?x?x256xf8E4M3FN>, %k: tensor<?x?x?x256xf8E4M3FN>, %v: tensor<?x?x?x256xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<?x?x?x256xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN> -> (tensor<?x?x?x256xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x256xf16>, tensor<?x?x?xf32>
}

// -----

func.func @fp8_d256_block(%q: tensor<?x?x?x256xf8E4M3FN>, %k: tensor<?x?x?x256xf8E4M3FN>, %v: tensor<?x?x?x256xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

// -----

func.func @fp8_d256_block_causal(%q: tensor<?x?x?x256xf8E4M3FN>, %k: tensor<?x?x?x256xf8E4M3FN>, %v: tensor<?x?x?x256xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>} : tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN>, tensor<?x?x?x256xf8E4M3FN> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}
