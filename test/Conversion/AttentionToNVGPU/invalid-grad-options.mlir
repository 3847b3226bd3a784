// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_80 rows-per-warp=16' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_80 host-launch' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_75' -verify-diagnostics

func.func @grad(%q: tensor<1x4x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>,
                %o: tensor<1x4x16x64xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x64xf16>) -> (tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) {
  // expected-error-re @+1 {{{{option rows-per-warp does not apply to the backward kernel|the backward kernel has no host launch yet \(fa-to-gpu\); compile it with fa-to-ptx and launch it through its manifest|unsupported chip 'sm_75' for convert-fa-to-nvgpu}}}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16xf32>, tensor<1x4x16x64xf16> -> tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
  return %dq, %dk, %dv : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
}
