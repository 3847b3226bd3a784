// REQUIRES: ptxas
// Attention written in linalg with an ALiBi bias (slope[h] * (j - i) from a
// slope tensor argument) and a causal select, f16 matmuls with the bias in f32:
// fa-raise-attention makes it fa.attention {causal} with a score_mod, which both
// chips' kernels compile (the slope tensor a kernel parameter, arg3); the
// pipelines' raise-attention option runs the raise first.
// RUN: rm -rf %t && fa-opt %s --pass-pipeline='builtin.module(func.func(fa-raise-attention),fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/sm90})' -o /dev/null
// RUN: rm -rf %t/sm80 && fa-opt %s --pass-pipeline='builtin.module(fa-to-ptx{chip=sm_80 raise-attention=1},fa-dump-kernel{dir=%t/sm80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/sm90/alibi_kernel.json
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/sm80/alibi_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/sm90/alibi_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/sm90/alibi_kernel.ptx -o %t/sm90.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// The sm_80 kernel: at most a few bytes, as the ALiBi written in MLIR spills at
// causal (4 bytes; bench/kernels_variants.mlir): since the slope table no longer
// clamps the key column, (j - i) converts to float once per row there too.
// RUN: %ptxas -arch=sm_80 -v %t/sm80/alibi_kernel.ptx -o %t/sm80.cubin 2>&1 | FileCheck %s --check-prefix=SM80SPILL
// SM80SPILL: {{[048]}} bytes spill stores, {{[048]}} bytes spill loads
// RUN: fa-opt %s --fa-raise-attention | FileCheck %s --check-prefix=RAISED
// The whole program through fa-to-gpu{raise-attention}: the attention a kernel
// launched from the host.
// RUN: fa-opt %s --pass-pipeline='builtin.module(fa-to-gpu{chip=sm_90a raise-attention=1})' | FileCheck %s --check-prefix=GPU
// GPU: gpu.binary @alibi_attention_kernels
// GPU: llvm.func @alibi_attention_launch(
// GPU: gpu.launch_func <%{{.+}} : !llvm.ptr> @alibi_attention_kernels::@alibi_attention_kernel
// GPU: llvm.func @alibi(
// GPU-NOT: linalg.

// RAISED: fa.attention %arg0, %arg1, %arg2 {causal, scale = 1.250000e-01 : f32} score_mod {
// RAISED: tensor.extract %arg3[%{{.+}}] : tensor<4xf32>
// RAISED-NOT: linalg.generic

// MANIFEST: "causal": true
// MANIFEST: "meaning": "argument 3 of the function, read by a modifier region, contiguous",
// MANIFEST-NEXT: "name": "arg3",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 4
// PTX: .entry alibi_kernel(
// PTX: cvt.rn.f32.s{{32|64}}
// NOSPILL: 0 bytes spill stores, 0 bytes spill loads
func.func @alibi(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>, %v: tensor<1x4x128x64xf16>, %slopes: tensor<4xf32>) -> tensor<1x4x128x64xf16> {
  %zero = arith.constant 0.000000e+00 : f16
  %ninf_c = arith.constant 0xFC00 : f16
  %s_e = tensor.empty() : tensor<1x4x128x128xf16>
  %s_f = linalg.fill ins(%zero : f16) outs(%s_e : tensor<1x4x128x128xf16>) -> tensor<1x4x128x128xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) outs(%s_f : tensor<1x4x128x128xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %acc, %0 : f16
    linalg.yield %1 : f16
  } -> tensor<1x4x128x128xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %slopes : tensor<1x4x128x128xf16>, tensor<4xf32>) outs(%s_e : tensor<1x4x128x128xf16>) {
  ^bb0(%x: f16, %slope: f32, %out: f16):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %x32 = arith.extf %x : f16 to f32
    %scale = arith.constant 1.250000e-01 : f32
    %y = arith.mulf %x32, %scale : f32
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %jj, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %z = arith.addf %y, %bias : f32
    %keep = arith.cmpi sle, %jj, %ii : i64
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %z, %ninf : f32
    %r16 = arith.truncf %r : f32 to f16
    linalg.yield %r16 : f16
  } -> tensor<1x4x128x128xf16>
  %r_e = tensor.empty() : tensor<1x4x128xf16>
  %mx_i = linalg.fill ins(%ninf_c : f16) outs(%r_e : tensor<1x4x128xf16>) -> tensor<1x4x128xf16>
  %mx = linalg.reduce { arith.maximumf } ins(%t : tensor<1x4x128x128xf16>) outs(%mx_i : tensor<1x4x128xf16>) dimensions = [3]
  %mxb = linalg.broadcast ins(%mx : tensor<1x4x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>) dimensions = [3]
  %sub = linalg.map { arith.subf } ins(%t, %mxb : tensor<1x4x128x128xf16>, tensor<1x4x128x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>)
  %ex = linalg.map { math.exp } ins(%sub : tensor<1x4x128x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>)
  %sm_i = linalg.fill ins(%zero : f16) outs(%r_e : tensor<1x4x128xf16>) -> tensor<1x4x128xf16>
  %sm = linalg.reduce { arith.addf } ins(%ex : tensor<1x4x128x128xf16>) outs(%sm_i : tensor<1x4x128xf16>) dimensions = [3]
  %smb = linalg.broadcast ins(%sm : tensor<1x4x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>) dimensions = [3]
  %p = linalg.map { arith.divf } ins(%ex, %smb : tensor<1x4x128x128xf16>, tensor<1x4x128x128xf16>) outs(%s_e : tensor<1x4x128x128xf16>)
  %o_e = tensor.empty() : tensor<1x4x128x64xf16>
  %o_f = linalg.fill ins(%zero : f16) outs(%o_e : tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x4x128x128xf16>, tensor<1x4x128x64xf16>) outs(%o_f : tensor<1x4x128x64xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %acc, %0 : f16
    linalg.yield %1 : f16
  } -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}
