// Kernels of bench/bench_varlen.py: packed variable-length sequences
// (varlen) at d64 / d128, bf16 and f16, causal and not, with lse, and the
// padded (batched) kernels they are compared with. Compile for sm_90a with
//   fa-opt bench/kernels_varlen.mlir \
//     "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=DIR})" -o /dev/null

func.func @varlen_bf16_d64_full(%q: tensor<1x?x?x64xbf16>, %k: tensor<1x?x?x64xbf16>, %v: tensor<1x?x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16> -> (tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>
}

func.func @padded_bf16_d64_full(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

func.func @varlen_bf16_d64_causal(%q: tensor<1x?x?x64xbf16>, %k: tensor<1x?x?x64xbf16>, %v: tensor<1x?x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16>, tensor<1x?x?x64xbf16> -> (tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x64xbf16>, tensor<1x?x?xf32>
}

func.func @padded_bf16_d64_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

func.func @varlen_bf16_d128_full(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16> -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>
}

func.func @padded_bf16_d128_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

func.func @varlen_bf16_d128_causal(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16> -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>
}

func.func @padded_bf16_d128_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

func.func @varlen_f16_d64_full(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x64xf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16> -> (tensor<1x?x?x64xf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x64xf16>, tensor<1x?x?xf32>
}

func.func @padded_f16_d64_full(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @varlen_f16_d64_causal(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x64xf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16> -> (tensor<1x?x?x64xf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x64xf16>, tensor<1x?x?xf32>
}

func.func @padded_f16_d64_causal(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @varlen_f16_d128_full(%q: tensor<1x?x?x128xf16>, %k: tensor<1x?x?x128xf16>, %v: tensor<1x?x?x128xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x128xf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16> -> (tensor<1x?x?x128xf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x128xf16>, tensor<1x?x?xf32>
}

func.func @padded_f16_d128_full(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @varlen_f16_d128_causal(%q: tensor<1x?x?x128xf16>, %k: tensor<1x?x?x128xf16>, %v: tensor<1x?x?x128xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<1x?x?x128xf16>, tensor<1x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16>, tensor<1x?x?x128xf16> -> (tensor<1x?x?x128xf16>, tensor<1x?x?xf32>)
  return %o, %l : tensor<1x?x?x128xf16>, tensor<1x?x?xf32>
}

func.func @padded_f16_d128_causal(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}
