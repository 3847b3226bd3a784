// RUN: fa-opt %s --fa-tile-attention --convert-fa-to-nvgpu="chip=sm_75" -verify-diagnostics

func.func @chip(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{unsupported chip 'sm_75' for convert-fa-to-nvgpu (supported: sm_80, sm_90a)}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
