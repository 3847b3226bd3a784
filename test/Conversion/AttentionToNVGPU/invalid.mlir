// RUN: fa-opt %s -split-input-file --convert-fa-to-nvgpu -verify-diagnostics

func.func @d32(%q: tensor<1x1x64x32xf16>, %k: tensor<1x1x64x32xf16>, %v: tensor<1x1x64x32xf16>) -> tensor<1x1x64x32xf16> {
  // expected-error @+1 {{sm_80 kernel supports head dim 64 or 128, got 32}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16> -> tensor<1x1x64x32xf16>
  return %o : tensor<1x1x64x32xf16>
}

// -----

func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{sm_80 kernel needs f16 or bf16 inputs, got 'f32'}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

func.func @f32out(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{sm_80 kernel needs query, key, value and out of one element type}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

func.func @window(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{sm_80 kernel does not support mask, descale, window or softcap yet}}
  %o = fa.attention %q, %k, %v {window = array<i64: 16, 0>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @dv(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  // expected-error @+1 {{sm_80 kernel needs the value head dim (128) equal to the query head dim (64)}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}

// -----

// expected-error @+1 {{convert-fa-to-nvgpu expects exactly one fa.attention per func.func, found 2}}
func.func @two(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> (tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  %o2 = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o, %o2 : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
}
