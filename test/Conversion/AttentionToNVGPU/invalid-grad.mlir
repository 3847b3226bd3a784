// RUN: fa-opt %s -split-input-file '--convert-fa-to-nvgpu=chip=sm_80' -verify-diagnostics
// RUN: fa-opt %s -split-input-file '--fa-to-ptx=chip=sm_90a' -verify-diagnostics

// What the backward kernel does not take is diagnosed on the op, and the
// function is left as it was.

func.func @f32(%q: tensor<1x4x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
               %o: tensor<1x4x16x64xf32>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x64xf32>) -> (tensor<1x4x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{backward kernel needs f16 or bf16 inputs, got 'f32'}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>
  return %dq, %dk, %dv : tensor<1x4x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>
}

// -----

func.func @d32(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>,
               %o: tensor<1x4x16x32xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x32xf16>) -> (tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) {
  // expected-error @+1 {{backward kernel supports head dim 64 or 128, got 32}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do {causal} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return %dq, %dk, %dv : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
}

// -----

// Only some results returned: the kernel writes all three.
func.func @partial(%q: tensor<1x4x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>,
                   %o: tensor<1x4x16x64xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x64xf16>) -> tensor<1x2x16x64xf16> {
  // expected-error @+1 {{convert-fa-to-nvgpu: the backward kernel replaces the whole function: it must take q, k, v, out, lse, do (then the mask, or with varlen cu_seqlens_q, cu_seqlens_k) as its first arguments (in that order, then only tensors its regions read), compute only this fa.attention_grad and return dq, dk, dv}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16xf32>, tensor<1x4x16x64xf16> -> tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
  return %dk : tensor<1x2x16x64xf16>
}

// -----

// Arguments in another order.
func.func @swapped(%q: tensor<1x4x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>,
                   %o: tensor<1x4x16x64xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x64xf16>) -> (tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) {
  // expected-error @+1 {{the backward kernel replaces the whole function}}
  %dq, %dk, %dv = fa.attention_grad %q, %v, %k, %o, %l, %do : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16xf32>, tensor<1x4x16x64xf16> -> tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
  return %dq, %dk, %dv : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
}

// -----

// Other work in the function (here a forward next to the backward).
func.func @mixed(%q: tensor<1x4x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>,
                 %o: tensor<1x4x16x64xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x64xf16>) -> (tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) {
  %o2 = fa.attention %q, %k, %v : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x4x16x64xf16>
  // expected-error @+1 {{the backward kernel replaces the whole function}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o2, %l, %do : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16xf32>, tensor<1x4x16x64xf16> -> tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
  return %dq, %dk, %dv : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
}

// -----

// fa.grad.block_kv: 64 or 128, and only where the mma.sync kernel runs.
// expected-error-re @+1 {{{{fa.grad.block_kv must be an integer, 64 or 128, got 96 : i64|fa.grad.block_kv applies to the mma.sync backward kernel only}}}}
func.func @block_kv(%q: tensor<1x4x16x128xf16>, %k: tensor<1x2x16x128xf16>, %v: tensor<1x2x16x128xf16>,
                    %o: tensor<1x4x16x128xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x128xf16>) -> (tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>) attributes {fa.grad.block_kv = 96 : i64} {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x4x16x128xf16>, tensor<1x4x16xf32>, tensor<1x4x16x128xf16> -> tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
  return %dq, %dk, %dv : tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
}

// -----

// fa.grad.stages: 2 or 3, and only where the wgmma kernel runs (its Q / dO
// ring).
// expected-error-re @+1 {{{{fa.grad.stages must be an integer, 2 or 3, got 4 : i64|fa.grad.stages applies to the wgmma backward kernel only}}}}
func.func @stages(%q: tensor<1x4x16x128xf16>, %k: tensor<1x2x16x128xf16>, %v: tensor<1x2x16x128xf16>,
                  %o: tensor<1x4x16x128xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x128xf16>) -> (tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>) attributes {fa.grad.stages = 4 : i64} {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x4x16x128xf16>, tensor<1x4x16xf32>, tensor<1x4x16x128xf16> -> tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
  return %dq, %dk, %dv : tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
}

// -----

// expected-error-re @+1 {{{{fa.grad.stages must be an integer, 2 or 3, got 2.000000e\+00 : f32|fa.grad.stages applies to the wgmma backward kernel only}}}}
func.func @stages_float(%q: tensor<1x4x16x128xf16>, %k: tensor<1x2x16x128xf16>, %v: tensor<1x2x16x128xf16>,
                        %o: tensor<1x4x16x128xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x128xf16>) -> (tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>) attributes {fa.grad.stages = 2.0 : f32} {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x4x16x128xf16>, tensor<1x4x16xf32>, tensor<1x4x16x128xf16> -> tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
  return %dq, %dk, %dv : tensor<1x4x16x128xf16>, tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
}
