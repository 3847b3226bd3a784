// Kernels of bench/check_varlen_modifiers.py: packed variable-length sequences
// (varlen) with softcap, a score_mod (ALiBi from a slope table) and a mask_mod
// (document ids read at the positions within each sequence), causal, bf16,
// D = 128, forward with lse and backward. Compile for sm_90a with
//   fa-opt bench/kernels_varlen_modifiers.mlir \
//     "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=DIR})" -o /dev/null

func.func @vmod_fwd(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>, %slopes: tensor<8xf32>, %docs: tensor<4096xi32>)
    -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal, softcap = 30.0 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<8xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %sl, %df, %s : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<4096xi32>
    %dj = tensor.extract %docs[%j] : tensor<4096xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16> -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>
}

func.func @vmod_bwd(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %o: tensor<1x?x?x128xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>, %slopes: tensor<8xf32>, %docs: tensor<4096xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal, softcap = 30.0 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<8xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %t = math.fma %sl, %df, %s : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<4096xi32>
    %dj = tensor.extract %docs[%j] : tensor<4096xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
}
