// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-quantize-fp8=incoherent=true
// RUN: not fa-opt %s --split-input-file --fa-quantize-fp8=granularity=row 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not fa-opt %s --split-input-file '--fa-quantize-fp8=granularity=block block-q=0' 2>&1 | FileCheck %s --check-prefix=BLOCK

// OPTION: fa-quantize-fp8: granularity must be tensor, head or block, got 'row'
// BLOCK: fa-quantize-fp8 block sizes must be positive, got block-q = 0, block-kv = 128

// Already fp8: left as it is, with a remark.
func.func @already_fp8(%q: tensor<1x2x16x32xf8E4M3FN>, %d: f32) -> tensor<1x2x16x32xf16> {
  // expected-remark @+1 {{fa-quantize-fp8: inputs are f8E4M3FN already, left as they are}}
  %o = fa.attention %q, %q, %q descale(%d, %d, %d)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}

// -----

// The Walsh-Hadamard transform needs a power-of-two D.
func.func @incoherent_d48(%q: tensor<1x2x16x48xf16>) -> tensor<1x2x16x48xf16> {
  // expected-error @+1 {{incoherent processing (fa-quantize-fp8 incoherent=true) needs a power-of-two head dim D for the Walsh-Hadamard transform, got 48}}
  %o = fa.attention %q, %q, %q : tensor<1x2x16x48xf16>, tensor<1x2x16x48xf16>, tensor<1x2x16x48xf16> -> tensor<1x2x16x48xf16>
  return %o : tensor<1x2x16x48xf16>
}
