// The fp8 (f8E4M3FN) sm_90a kernels of bench/bench_fp8.py: per-tensor descales (f16 / bf16
// out), and per-head / per-block (128 x 128 blocks, the kernel's tiles) descales (f16 out).
// fa-opt bench/kernels_fp8.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=OUT})'

func.func @attn_fp8_f16_d64_full(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_fp8_bf16_d64_full(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @attn_fp8_f16_d64_full_lse(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_f16_d64_causal(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_fp8_bf16_d64_causal(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @attn_fp8_f16_d64_causal_lse(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_f16_d128_full(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_fp8_bf16_d128_full(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @attn_fp8_f16_d128_full_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_f16_d128_causal(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_fp8_bf16_d128_causal(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @attn_fp8_f16_d128_causal_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_head_f16_d64_full(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_fp8_head_f16_d64_full_lse(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_head_f16_d64_causal(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_fp8_head_f16_d64_causal_lse(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {causal} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_head_f16_d128_full(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_fp8_head_f16_d128_full_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_head_f16_d128_causal(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_fp8_head_f16_d128_causal_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?xf32>, %kd: tensor<?x?xf32>, %vd: tensor<?x?xf32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {causal} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_block_f16_d64_full(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_fp8_block_f16_d64_full_lse(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_block_f16_d64_causal(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_fp8_block_f16_d64_causal_lse(%q: tensor<?x?x?x64xf8E4M3FN>, %k: tensor<?x?x?x64xf8E4M3FN>, %v: tensor<?x?x?x64xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>} : tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN>, tensor<?x?x?x64xf8E4M3FN> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_block_f16_d128_full(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_fp8_block_f16_d128_full_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_block_f16_d128_causal(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_fp8_block_f16_d128_causal_lse(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {causal, descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

func.func @attn_fp8_block_bf16_d128_full(%q: tensor<?x?x?x128xf8E4M3FN>, %k: tensor<?x?x?x128xf8E4M3FN>, %v: tensor<?x?x?x128xf8E4M3FN>, %qd: tensor<?x?x?xf32>, %kd: tensor<?x?x?xf32>, %vd: tensor<?x?x?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {descale_block = array<i64: 128, 128>} : tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN>, tensor<?x?x?x128xf8E4M3FN> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
