// RUN: fa-opt %s --split-input-file --verify-diagnostics

func.func @diagonal_without_band(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x64x32xf16>,
                                 %v: tensor<1x2x64x32xf16>, %d: index) -> tensor<1x2x16x32xf16> {
  // expected-error @+1 {{'fa.attention' op diagonal(...) needs causal or a bounded window (it moves their band of visible keys)}}
  %o = fa.attention %q, %k, %v diagonal(%d)
      : tensor<1x2x16x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}

// -----

// A window unbounded on both sides is no band either.
func.func @diagonal_unbounded_window(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x64x32xf16>,
                                     %v: tensor<1x2x64x32xf16>, %d: index) -> tensor<1x2x16x32xf16> {
  // expected-error @+1 {{diagonal(...) needs causal or a bounded window}}
  %o = fa.attention %q, %k, %v diagonal(%d) {window = array<i64: -1, -1>}
      : tensor<1x2x16x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}

// -----

// The diagonal is an index.
func.func @diagonal_not_index(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x64x32xf16>,
                              %v: tensor<1x2x64x32xf16>, %d: i64) -> tensor<1x2x16x32xf16> {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%d' expects different type than prior uses: 'index' vs 'i64'}}
  %o = fa.attention %q, %k, %v diagonal(%d) {causal}
      : tensor<1x2x16x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}

// -----

// In generic form the operand type is checked by the verifier.
func.func @diagonal_not_index_generic(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x64x32xf16>,
                                      %v: tensor<1x2x64x32xf16>, %d: i64) -> tensor<1x2x16x32xf16> {
  // expected-error @+1 {{operand #3 must be index, but got 'i64'}}
  %o = "fa.attention"(%q, %k, %v, %d) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0>}>
      : (tensor<1x2x16x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, i64) -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}
