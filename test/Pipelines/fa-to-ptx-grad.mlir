// RUN: fa-opt %s -split-input-file '--fa-to-ptx=chip=sm_80' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--fa-to-ptx=chip=sm_90a' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_80' -verify-diagnostics
// RUN: not fa-opt %s -split-input-file '--fa-to-ptx=chip=sm_80' -o /dev/null 2>&1 | FileCheck %s

// fa.attention_grad has no GPU kernel yet: fa-to-ptx rejects it with a
// diagnostic on the op (and leaves no half-lowered module), alone or next to a
// forward it could compile.
// CHECK: error: 'fa.attention_grad' op fa-to-ptx: the backward pass has no GPU lowering yet (only fa-to-cpu lowers fa.attention_grad)
func.func @grad(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>,
                %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) -> tensor<1x4x16x32xf16> {
  // expected-error-re @+1 {{'fa.attention_grad' op {{fa-to-ptx|convert-fa-to-nvgpu}}: the backward pass has no GPU lowering yet (only fa-to-cpu lowers fa.attention_grad)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return %dq : tensor<1x4x16x32xf16>
}

// -----

func.func @fwd(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>) -> tensor<1x4x16x32xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16> -> tensor<1x4x16x32xf16>
  return %o : tensor<1x4x16x32xf16>
}
func.func @grad(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>,
                %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) -> tensor<1x2x16x32xf16> {
  // expected-error-re @+1 {{'fa.attention_grad' op {{fa-to-ptx|convert-fa-to-nvgpu}}: the backward pass has no GPU lowering yet}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return %dk : tensor<1x2x16x32xf16>
}
