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

// -----

// kv_lens and pages: fp8 descales are not supported with them (the verifier
// would reject the quantized op), so the pass rejects the op.
func.func @kv_lens(%q: tensor<2x2x16x32xf16>, %lens: tensor<2xi32>) -> tensor<2x2x16x32xf16> {
  // expected-error @+1 {{'fa.attention' op fa-quantize-fp8 does not support kv_lens or pages (fp8 descales are not supported with them yet)}}
  %o = fa.attention %q, %q, %q kv_lens(%lens : tensor<2xi32>)
      : tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16> -> tensor<2x2x16x32xf16>
  return %o : tensor<2x2x16x32xf16>
}

// -----

func.func @pages(%q: tensor<2x2x16x32xf16>, %k: tensor<5x2x16x32xf16>, %t: tensor<2x2xi32>) -> tensor<2x2x16x32xf16> {
  // expected-error @+1 {{'fa.attention' op fa-quantize-fp8 does not support kv_lens or pages (fp8 descales are not supported with them yet)}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x2xi32>)
      : tensor<2x2x16x32xf16>, tensor<5x2x16x32xf16>, tensor<5x2x16x32xf16> -> tensor<2x2x16x32xf16>
  return %o : tensor<2x2x16x32xf16>
}

// -----

func.func @varlen(%q: tensor<1x2x16x32xf16>, %c: tensor<3xi32>) -> tensor<1x2x16x32xf16> {
  // expected-error @+1 {{'fa.attention' op fa-quantize-fp8 does not support varlen (fp8 inputs are not supported with it yet)}}
  %o = fa.attention %q, %q, %q varlen(%c, %c : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}
