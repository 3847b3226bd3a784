// Kernels of bench/check_kv_cache.py: per-sequence key lengths (kv_lens) and paged K/V
// pools [P, Hkv, S, D] (docs/Attention.md), both chips:
// fa-opt bench/kernels_kv_cache.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=CHIP},fa-dump-kernel{dir=OUT})'
// Names: kv_<dtype>_d<D>_<mask>_<layout>[_lse]; layout lens (contiguous cache + kv_lens),
// p<S> (pages of S rows + kv_lens), p<S>nolen (pages without kv_lens).

func.func @kv_f16_d64_full_p16(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x16x64xf16>, %v: tensor<?x?x16x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x64xf16>, tensor<?x?x16x64xf16>, tensor<?x?x16x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @kv_f16_d64_causal_p64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x64x64xf16>, %v: tensor<?x?x64x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x64xf16>, tensor<?x?x64x64xf16>, tensor<?x?x64x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @kv_f16_d64_full_lens(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %lens: tensor<?xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @kv_f16_d64_w96_p256(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x256x64xf16>, %v: tensor<?x?x256x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {window = array<i64: 96, 0>} : tensor<?x?x?x64xf16>, tensor<?x?x256x64xf16>, tensor<?x?x256x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @kv_f16_d128_full_p16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x16x128xf16>, %v: tensor<?x?x16x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x16x128xf16>, tensor<?x?x16x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_f16_d128_causal_p64(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x64x128xf16>, %v: tensor<?x?x64x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x128xf16>, tensor<?x?x64x128xf16>, tensor<?x?x64x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_f16_d128_full_lens(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %lens: tensor<?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_f16_d128_w96_p256(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x256x128xf16>, %v: tensor<?x?x256x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {window = array<i64: 96, 0>} : tensor<?x?x?x128xf16>, tensor<?x?x256x128xf16>, tensor<?x?x256x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_bf16_d64_full_p16(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x16x64xbf16>, %v: tensor<?x?x16x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x64xbf16>, tensor<?x?x16x64xbf16>, tensor<?x?x16x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @kv_bf16_d64_causal_p64(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x64x64xbf16>, %v: tensor<?x?x64x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x64xbf16>, tensor<?x?x64x64xbf16>, tensor<?x?x64x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @kv_bf16_d64_full_lens(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %lens: tensor<?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @kv_bf16_d64_w96_p256(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x256x64xbf16>, %v: tensor<?x?x256x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {window = array<i64: 96, 0>} : tensor<?x?x?x64xbf16>, tensor<?x?x256x64xbf16>, tensor<?x?x256x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @kv_bf16_d128_full_p16(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x16x128xbf16>, %v: tensor<?x?x16x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xbf16>, tensor<?x?x16x128xbf16>, tensor<?x?x16x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @kv_bf16_d128_causal_p64(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x64x128xbf16>, %v: tensor<?x?x64x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x64x128xbf16>, tensor<?x?x64x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @kv_bf16_d128_full_lens(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %lens: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @kv_bf16_d128_w96_p256(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x256x128xbf16>, %v: tensor<?x?x256x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {window = array<i64: 96, 0>} : tensor<?x?x?x128xbf16>, tensor<?x?x256x128xbf16>, tensor<?x?x256x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @kv_f16_d128_causal_p16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x16x128xf16>, %v: tensor<?x?x16x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x128xf16>, tensor<?x?x16x128xf16>, tensor<?x?x16x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_f16_d128_full_p128nolen(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x128x128xf16>, %v: tensor<?x?x128x128xf16>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x128x128xf16>, tensor<?x?x128x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_bf16_d128_causal_lens(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %lens: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @kv_f16_d128_full_p64(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x64x128xf16>, %v: tensor<?x?x64x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x64x128xf16>, tensor<?x?x64x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_f16_d128_full_p256(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x256x128xf16>, %v: tensor<?x?x256x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x128xf16>, tensor<?x?x256x128xf16>, tensor<?x?x256x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @kv_bf16_d64_full_p32(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x32x64xbf16>, %v: tensor<?x?x32x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) : tensor<?x?x?x64xbf16>, tensor<?x?x32x64xbf16>, tensor<?x?x32x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @kv_f16_d128_causal_p64_lse(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x64x128xf16>, %v: tensor<?x?x64x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) pages(%table : tensor<?x?xi32>) {causal} : tensor<?x?x?x128xf16>, tensor<?x?x64x128xf16>, tensor<?x?x64x128xf16> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @kv_f16_d64_full_lens_lse(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %lens: tensor<?xi32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}
