// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-rotate-qk

func.func @d6(%q: tensor<1x2x8x6xf32>) -> tensor<1x2x8x6xf32> {
  // expected-error @+1 {{fa-rotate-qk needs a power-of-two head dim D for the Walsh-Hadamard transform, got 6}}
  %o = fa.attention %q, %q, %q : tensor<1x2x8x6xf32>, tensor<1x2x8x6xf32>, tensor<1x2x8x6xf32> -> tensor<1x2x8x6xf32>
  return %o : tensor<1x2x8x6xf32>
}

// -----

func.func @fp8(%q: tensor<1x2x8x16xf8E4M3FN>, %d: f32) -> tensor<1x2x8x16xf32> {
  // expected-remark @+1 {{fa-rotate-qk: f8E4M3FN inputs are left as they are (rotate before quantizing)}}
  %o = fa.attention %q, %q, %q descale(%d, %d, %d) : tensor<1x2x8x16xf8E4M3FN>, tensor<1x2x8x16xf8E4M3FN>, tensor<1x2x8x16xf8E4M3FN> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
