// RUN: fa-opt %s --convert-fa-to-nvgpu -verify-diagnostics

// convert-fa-to-nvgpu consumes the tiled form only.
// expected-error @+1 {{convert-fa-to-nvgpu expects the tiled form: run fa-tile-attention first (fa-to-ptx does)}}
func.func @untiled(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
