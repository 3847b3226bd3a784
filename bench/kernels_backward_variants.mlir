// The backward kernels of bench/check_backward_variants.py, generated from
// bench/kernels_variants.mlir by bench/gen_kernels_backward_variants.py (bf16, D 128;
// f16 D 64 copies named *_d64). Compiled per chip:
// fa-opt bench/kernels_backward_variants.mlir
//   '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=OUT})'

func.func @bvar_plain_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_plain_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_softcap_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_softcap_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal, softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_softcapmod_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.0333333351 : f32
    %cap = arith.constant 30.0 : f32
    %x = arith.mulf %s, %inv : f32
    %t = math.tanh %x fastmath<afn> : f32
    %r = arith.mulf %t, %cap : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_softcapmod_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.0333333351 : f32
    %cap = arith.constant 30.0 : f32
    %x = arith.mulf %s, %inv : f32
    %t = math.tanh %x fastmath<afn> : f32
    %r = arith.mulf %t, %cap : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_alibi_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %m = arith.constant -0.5 : f32
    %h1 = arith.addi %h, %c1 : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_alibi_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %m = arith.constant -0.5 : f32
    %h1 = arith.addi %h, %c1 : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_doc_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>, %docs: tensor<16384xi32>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<16384xi32>
    %dj = tensor.extract %docs[%j] : tensor<16384xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_doc_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>, %docs: tensor<16384xi32>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<16384xi32>
    %dj = tensor.extract %docs[%j] : tensor<16384xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_prefixlm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 2048 : index
    %inprefix = arith.cmpi slt, %j, %p : index
    %past = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inprefix, %past : i1
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_windowmod(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %past = arith.cmpi sle, %j, %i : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi sle, %d, %w : index
    %keep = arith.andi %past, %near : i1
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @bvar_alibi_causal_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %m = arith.constant -0.5 : f32
    %h1 = arith.addi %h, %c1 : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

func.func @bvar_doc_causal_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %o: tensor<?x?x?x64xf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf16>, %docs: tensor<16384xi32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<16384xi32>
    %dj = tensor.extract %docs[%j] : tensor<16384xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
  return %dq, %dk, %dv : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
}

