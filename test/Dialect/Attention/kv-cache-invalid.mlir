// RUN: fa-opt %s --split-input-file --verify-diagnostics

// The rules of kv_lens(...) and pages(...) on fa.attention, one case each.

func.func @kv_lens_element_type(%q: tensor<2x4x8x32xf16>, %k: tensor<2x2x64x32xf16>, %lens: tensor<2xi64>) {
  // expected-error @+1 {{'fa.attention' op kv_lens element type must be i32, got 'i64'}}
  %o = fa.attention %q, %k, %k kv_lens(%lens : tensor<2xi64>)
      : tensor<2x4x8x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @kv_lens_rank(%q: tensor<2x4x8x32xf16>, %k: tensor<2x2x64x32xf16>, %lens: tensor<2x1xi32>) {
  // expected-error @+1 {{'fa.attention' op kv_lens must be a rank-1 tensor [B], got 'tensor<2x1xi32>'}}
  %o = fa.attention %q, %k, %k kv_lens(%lens : tensor<2x1xi32>)
      : tensor<2x4x8x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @kv_lens_batch(%q: tensor<2x4x8x32xf16>, %k: tensor<2x2x64x32xf16>, %lens: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op batch size of kv_lens (3) does not match query (2)}}
  %o = fa.attention %q, %k, %k kv_lens(%lens : tensor<3xi32>)
      : tensor<2x4x8x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

// kv_lens without pages keeps the key's batch rule.
func.func @kv_lens_key_batch(%q: tensor<2x4x8x32xf16>, %k: tensor<3x2x64x32xf16>, %lens: tensor<2xi32>) {
  // expected-error @+1 {{'fa.attention' op batch size of key (3) does not match query (2)}}
  %o = fa.attention %q, %k, %k kv_lens(%lens : tensor<2xi32>)
      : tensor<2x4x8x32xf16>, tensor<3x2x64x32xf16>, tensor<3x2x64x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

// A tensor is expected.
func.func @kv_lens_not_tensor(%q: tensor<2x4x8x32xf16>, %k: tensor<2x2x64x32xf16>, %lens: i32) {
  // expected-error @+1 {{'fa.attention' op operand #3 must be ranked tensor of any type values, but got 'i32'}}
  %o = fa.attention %q, %k, %k kv_lens(%lens : i32)
      : tensor<2x4x8x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @pages_element_type(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>, %t: tensor<2x4xindex>) {
  // expected-error @+1 {{'fa.attention' op pages element type must be i32, got 'index'}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x4xindex>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @pages_rank(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'fa.attention' op pages must be a rank-2 tensor [B, M], got 'tensor<8xi32>'}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<8xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @pages_batch(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>, %t: tensor<1x4xi32>) {
  // expected-error @+1 {{'fa.attention' op batch size of pages (1) does not match query (2)}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<1x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @pool_page_count(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>,
                           %v: tensor<8x2x16x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op page count of value (8) does not match key (9)}}
  %o = fa.attention %q, %k, %v pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<8x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @pool_heads(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>,
                      %v: tensor<9x1x16x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op head count of value (1) does not match key (2)}}
  %o = fa.attention %q, %k, %v pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x1x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @pool_page_size(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>,
                          %v: tensor<9x2x32x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op page size of value (32) does not match key (16)}}
  %o = fa.attention %q, %k, %v pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x2x32x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @page_size_dynamic(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x?x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op page size S (key dim 2) must be static with pages}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x?x32xf16>, tensor<9x2x?x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @page_size_multiple(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x24x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op page size S (key dim 2) must be a positive multiple of 16, got 24}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x24x32xf16>, tensor<9x2x24x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @page_size_zero(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x0x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op page size S (key dim 2) must be a positive multiple of 16, got 0}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x0x32xf16>, tensor<9x2x0x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

// With pages the mask covers the key capacity M * S = 64, not the page size.
func.func @paged_mask_keys(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>,
                           %m: tensor<2x4x8x16xi1>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op key length of mask (16) does not match key capacity M * S (64)}}
  %o = fa.attention %q, %k, %k mask(%m : tensor<2x4x8x16xi1>) pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @fp8_kv_lens(%q: tensor<2x4x8x32xf8E4M3FN>, %k: tensor<2x2x64x32xf8E4M3FN>,
                       %s: f32, %lens: tensor<2xi32>) {
  // expected-error @+1 {{'fa.attention' op fp8 descales with kv_lens or pages are not supported}}
  %o = fa.attention %q, %k, %k descale(%s, %s, %s) kv_lens(%lens : tensor<2xi32>)
      : tensor<2x4x8x32xf8E4M3FN>, tensor<2x2x64x32xf8E4M3FN>, tensor<2x2x64x32xf8E4M3FN> -> tensor<2x4x8x32xf16>
  return
}

// -----

func.func @fp8_pages(%q: tensor<2x4x8x32xf8E4M3FN>, %k: tensor<9x2x16x32xf8E4M3FN>,
                     %s: f32, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op fp8 descales with kv_lens or pages are not supported}}
  %o = fa.attention %q, %k, %k descale(%s, %s, %s) pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf8E4M3FN>, tensor<9x2x16x32xf8E4M3FN>, tensor<9x2x16x32xf8E4M3FN> -> tensor<2x4x8x32xf16>
  return
}

// -----

// The clauses have one order: kv_lens before pages.
func.func @clause_order(%q: tensor<2x4x8x32xf16>, %k: tensor<9x2x16x32xf16>,
                        %lens: tensor<2xi32>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{expected ':'}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x4xi32>) kv_lens(%lens : tensor<2xi32>)
      : tensor<2x4x8x32xf16>, tensor<9x2x16x32xf16>, tensor<9x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}

// -----

// Page ids are clamped into the pool: it cannot be empty.
func.func @empty_pool(%q: tensor<2x4x8x32xf16>, %k: tensor<0x2x16x32xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'fa.attention' op the page pool (key dim 0) must hold at least one page}}
  %o = fa.attention %q, %k, %k pages(%t : tensor<2x4xi32>)
      : tensor<2x4x8x32xf16>, tensor<0x2x16x32xf16>, tensor<0x2x16x32xf16> -> tensor<2x4x8x32xf16>
  return
}
