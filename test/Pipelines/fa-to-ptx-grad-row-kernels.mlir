// REQUIRES: ptxas
// The backward's preprocess and postprocess kernels (Common/BackwardRowKernels,
// docs/Backward.md): built into the backward kernel's module on both chips,
// listed in its manifest's "auxiliary_kernels", assembled by ptxas.
// RUN: fa-opt %s '--convert-fa-to-nvgpu=chip=sm_80' | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_rows_d128_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_rows_d128_kernel.ptx
// RUN: FileCheck %s --check-prefix=BF16 < %t/grad_rows_d64_bf16_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/grad_rows_d128_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=ASM
// RUN: rm -rf %t80 && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t80})' -o /dev/null
// RUN: %ptxas -arch=sm_80 %t80/grad_rows_d64_bf16_kernel.ptx -o %t80/d64.cubin
// RUN: FileCheck %s --check-prefix=MANIFEST80 < %t80/grad_rows_d64_bf16_kernel.json

// D = 128: 16 threads per row, a CTA of 256 threads moves 64 rows in four
// passes. Rows past Nq are clamped to the last one (every lane loads and
// shuffles) and stored only when real.
// IR: gpu.module @grad_rows_d128_kernels
// IR: gpu.func @grad_rows_d128_kernel(
// IR: gpu.func @grad_rows_d128_kernel_preprocess(%{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf32>, %{{.*}}: memref<1099511627776xf32>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) kernel
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: arith.minui
// IR: vector.load {{.*}} {alignment = 16 : i64} : memref<1099511627776xf16>, vector<8xf16>
// IR: vector.load {{.*}} {alignment = 16 : i64} : memref<1099511627776xf16>, vector<8xf16>
// IR: arith.mulf {{.*}} : vector<8xf32>
// IR: vector.reduction <add>
// IR: gpu.shuffle  xor {{.*}}, %c8_i32
// IR: gpu.shuffle  xor {{.*}}, %c4_i32
// IR: gpu.shuffle  xor {{.*}}, %c2_i32
// IR: gpu.shuffle  xor {{.*}}, %c1_i32
// IR: scf.if
// IR: vector.store %{{.*}} {alignment = 16 : i64} : memref<1099511627776xf32>, vector<8xf32>
// IR: scf.if
// IR: memref.store
// IR-COUNT-3: vector.reduction <add>
// IR-NOT: vector.reduction
// IR: gpu.return
// IR: gpu.func @grad_rows_d128_kernel_postprocess(%{{.*}}: memref<1099511627776xf32>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) kernel
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: scf.if
// IR: vector.load {{.*}} : memref<1099511627776xf32>, vector<8xf32>
// IR: arith.truncf {{.*}} : vector<8xf32> to vector<8xf16>
// IR: vector.store
// IR-COUNT-3: arith.truncf
// IR-NOT: arith.truncf
// IR: gpu.return
// D = 64: 8 threads per row, two passes.
// IR: gpu.func @grad_rows_d64_bf16_kernel_preprocess(
// IR: gpu.shuffle  xor {{.*}}, %c4_i32
// IR-NOT: %c8_i32
// IR-COUNT-1: vector.reduction <add>
// IR-NOT: vector.reduction
// IR: gpu.func @grad_rows_d64_bf16_kernel_postprocess(

// MANIFEST: "auxiliary_kernels": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "block": [
// MANIFEST-NEXT: 256,
// MANIFEST-NEXT: 1,
// MANIFEST-NEXT: 1
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "grid": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "ceil_div": [
// MANIFEST-NEXT: "Nq",
// MANIFEST-NEXT: 64
// MANIFEST: "Hq",
// MANIFEST-NEXT: "B"
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "kernel": "grad_rows_d128_kernel_preprocess",
// MANIFEST-NEXT: "op": "attention_grad_preprocess",
// MANIFEST: "name": "do",
// MANIFEST: "name": "out",
// MANIFEST: "name": "delta",
// MANIFEST: "name": "dq_accum",
// MANIFEST: "name": "Nk",
// MANIFEST: "kernel": "grad_rows_d128_kernel_postprocess",
// MANIFEST-NEXT: "op": "attention_grad_postprocess",
// MANIFEST: "name": "dq_accum",
// MANIFEST: "name": "dq",
// MANIFEST: "name": "Nk",
// MANIFEST: "kernel": "grad_rows_d128_kernel",

// PTX: .visible .entry grad_rows_d128_kernel(
// PTX: .visible .entry grad_rows_d128_kernel_preprocess(
// PTX: .maxntid 256, 1, 1
// PTX: ld.global.v4.b32
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// PTX: st.global.v4.b32 {{.*}}{0f00000000, 0f00000000, 0f00000000, 0f00000000};
// PTX: .visible .entry grad_rows_d128_kernel_postprocess(
// PTX: ld.global.v4.b32
// PTX: cvt.rn.f16x2.f32
// PTX: st.global.v4.b32
// BF16: .visible .entry grad_rows_d64_bf16_kernel_postprocess(
// BF16: cvt.rn.bf16x2.f32
// BF16: st.global.v4.b32

// ASM-DAG: Compiling entry function 'grad_rows_d128_kernel_preprocess' for 'sm_90a'
// ASM-DAG: Compiling entry function 'grad_rows_d128_kernel_postprocess' for 'sm_90a'

// MANIFEST80: "kernel": "grad_rows_d64_bf16_kernel_preprocess",
// MANIFEST80: "kernel": "grad_rows_d64_bf16_kernel_postprocess",
// MANIFEST80: "chip": "sm_80",

func.func @grad_rows_d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %o: tensor<?x?x?x128xf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
}

func.func @grad_rows_d64_bf16(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %o: tensor<?x?x?x64xbf16>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}
