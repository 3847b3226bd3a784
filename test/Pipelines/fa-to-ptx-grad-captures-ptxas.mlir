// REQUIRES: ptxas
// grad_captures in the backward kernels (both chips): the gradient of each
// captured tensor is a kernel parameter grad_argN (f32, the capture's shape)
// after the captures, zero-filled by the runtime; the scores' terms dS_t *
// coefficient are added by atomics where dS is formed: the per-head slope's
// (indices the same over a tile) summed over the thread's scores and the
// warp's lanes (shfl.sync.bfly) first, one add per warp; the relative-position
// table's one add per visible score.
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/grad_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t/grad_kernel.ptx
// RUN: %ptxas -arch=sm_90a %t/grad_kernel.ptx -o %t/grad.cubin
// RUN: rm -rf %t80 && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t80/grad_kernel.json
// RUN: FileCheck %s --check-prefix=PTX < %t80/grad_kernel.ptx
// RUN: %ptxas -arch=sm_80 %t80/grad_kernel.ptx -o %t80/grad.cubin

// MANIFEST: "op": "attention_grad"
// MANIFEST: "name": "arg6",
// MANIFEST: "name": "arg7",
// MANIFEST: "dtype": "f32",
// MANIFEST-NEXT: "meaning": "gradient of argument 6 (f32, its shape), zero-filled before the launch; receives score_mod's terms by atomic adds",
// MANIFEST-NEXT: "name": "grad_arg6",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 8
// MANIFEST: "name": "grad_arg7",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 255
// MANIFEST: "name": "B",

// PTX: .entry grad_kernel(
// PTX: shfl.sync.bfly.b32 {{.*}}, 16, 31,
// PTX: {{(atom|red)}}.global.add.f32

func.func @grad(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>, %slopes: tensor<8xf32>, %table: tensor<255xf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<8xf32>, tensor<255xf32>) {
  %dq, %dk, %dv, %ds, %dt = fa.attention_grad %q, %k, %v, %o, %lse, %do grad_captures(%slopes, %table : tensor<8xf32>, tensor<255xf16>) {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<8xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %c127 = arith.constant 127 : index
    %lo = arith.constant -127 : index
    %dc0 = arith.maxsi %d, %lo : index
    %dc = arith.minsi %dc0, %c127 : index
    %r = arith.addi %dc, %c127 : index
    %tb = tensor.extract %table[%r] : tensor<255xf16>
    %tbf = arith.extf %tb : f16 to f32
    %t0 = math.fma %sl, %df, %s : f32
    %t = arith.addf %t0, %tbf : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16>
    -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<8xf32>, tensor<255xf32>
  return %dq, %dk, %dv, %ds, %dt : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<8xf32>, tensor<255xf32>
}
