// RUN: fa-opt %s '--fa-to-ptx=chip=sm_90a deterministic=1' -verify-diagnostics
// RUN: fa-opt %s '--fa-to-ptx=chip=sm_80 deterministic=1' -verify-diagnostics

// A deterministic backward (dQ added in a fixed order) cannot promise the same
// for the capture gradients, which atomics add in any order.
func.func @grad(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %slopes: tensor<8xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<8xf32>) {
  // expected-error @+1 {{convert-fa-to-nvgpu{deterministic}: the gradients of grad_captures are added by atomics in no fixed order, so they would not be deterministic; compile without deterministic or without grad_captures}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %do grad_captures(%slopes : tensor<8xf32>) {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<8xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %sl, %df, %s : f32
    fa.yield %t : f32
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<8xf32>
  return %dq, %dk, %dv, %ds : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<8xf32>
}
