// The varlen backward kernels bench/check_backward_varlen.py checks and times:
// fa-opt bench/kernels_backward_varlen.mlir
// '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=OUT})'
// Packed sequences in batch-1 tensors [1, H, T, D] (htd), offsets [B + 1] i32.
func.func @vbwd_f16_d64_full(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>, %o: tensor<1x?x?x64xf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?xf32>, tensor<1x?x?x64xf16> -> tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>
  return %dq, %dk, %dv : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>
}

func.func @vbwd_f16_d64_causal(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>, %o: tensor<1x?x?x64xf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?xf32>, tensor<1x?x?x64xf16> -> tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>
  return %dq, %dk, %dv : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>
}

func.func @vbwd_f16_d64_w96_0(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>, %o: tensor<1x?x?x64xf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {window = array<i64: 96, 0>} : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?xf32>, tensor<1x?x?x64xf16> -> tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>
  return %dq, %dk, %dv : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>
}

func.func @vbwd_f16_d128_full(%q: tensor<1x?x?x128xf16>, %k: tensor<1x?x?x128xf16>, %v: tensor<1x?x?x128xf16>, %o: tensor<1x?x?x128xf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xf16> -> tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>
}

func.func @vbwd_f16_d128_causal(%q: tensor<1x?x?x128xf16>, %k: tensor<1x?x?x128xf16>, %v: tensor<1x?x?x128xf16>, %o: tensor<1x?x?x128xf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xf16> -> tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>
}

func.func @vbwd_f16_d128_w96_0(%q: tensor<1x?x?x128xf16>, %k: tensor<1x?x?x128xf16>, %v: tensor<1x?x?x128xf16>, %o: tensor<1x?x?x128xf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {window = array<i64: 96, 0>} : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xf16> -> tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>
}

func.func @vbwd_bf16_d64_full(%q: tensor<1x?x?x64xbf16>, %k: tensor<1x?x?x64xbf16>, %v: tensor<1x?x?x64xbf16>, %o: tensor<1x?x?x64xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x64xbf16> -> tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>
}

func.func @vbwd_bf16_d64_causal(%q: tensor<1x?x?x64xbf16>, %k: tensor<1x?x?x64xbf16>, %v: tensor<1x?x?x64xbf16>, %o: tensor<1x?x?x64xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x64xbf16> -> tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>
}

func.func @vbwd_bf16_d64_w96_0(%q: tensor<1x?x?x64xbf16>, %k: tensor<1x?x?x64xbf16>, %v: tensor<1x?x?x64xbf16>, %o: tensor<1x?x?x64xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {window = array<i64: 96, 0>} : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x64xbf16> -> tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>
}

func.func @vbwd_bf16_d128_full(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %o: tensor<1x?x?x128xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
}

func.func @vbwd_bf16_d128_causal(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %o: tensor<1x?x?x128xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal} : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
}

func.func @vbwd_bf16_d128_w96_0(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %o: tensor<1x?x?x128xbf16>, %lse: tensor<1x?x?xf32>, %do: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {window = array<i64: 96, 0>} : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>
}
