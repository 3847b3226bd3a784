// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip --convert-fa-to-nvgpu -verify-diagnostics
// RUN: not fa-opt %s -split-input-file --convert-fa-to-nvgpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=CONVERT

// What convert-fa-to-nvgpu (and fa-to-ptx) cannot place or name gets its own
// diagnostic, before the matcher's. The second RUN line runs the conversion
// alone on the untiled input: the placement checks still come first.

// An attention in a function of a nested module would not be tiled (and its
// kernel would land in the nested module, out of the pipeline's reach).
module {
  module @inner {
    func.func @attn(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
      // expected-error @+1 {{'fa.attention' op fa-tile-attention-for-chip: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'builtin.module' @inner (run the pipeline on that module: --pass-pipeline='builtin.module(builtin.module(...))')}}
      %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
      return %o : tensor<1x1x64x64xf16>
    }
  }
}
// CONVERT: 'fa.attention' op convert-fa-to-nvgpu: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'builtin.module' @inner

// -----

// Nor in a function nested in another symbol table.
gpu.module @g {
  func.func @attn(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
    // expected-error @+1 {{'fa.attention' op fa-tile-attention-for-chip: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'gpu.module' @g}}
    %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
    return %o : tensor<1x1x64x64xf16>
  }
}
// CONVERT: 'fa.attention' op convert-fa-to-nvgpu: must be in a func.func directly in the module the pipeline runs on, not in one nested in 'gpu.module' @g

// -----

// Nor outside any func.func.
gpu.module @g {
  gpu.func @k(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) {
    // expected-error @+1 {{'fa.attention' op fa-tile-attention-for-chip: must be in a func.func directly in the module the pipeline runs on, not outside any func.func (in 'gpu.func' @k)}}
    %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
    gpu.return
  }
}
// CONVERT: 'fa.attention' op convert-fa-to-nvgpu: must be in a func.func directly in the module the pipeline runs on, not outside any func.func (in 'gpu.func' @k)

// -----

// The conversion replaces the function by a kernel: it must have no callers.
// expected-error @+1 {{convert-fa-to-nvgpu: @attn is still referenced; the conversion replaces the function by a GPU kernel (launch it from the host through its manifest instead of calling it)}}
func.func @attn(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
func.func @caller(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-note @+1 {{referenced here}}
  %o = func.call @attn(%q, %k, %v) : (tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
// CONVERT: convert-fa-to-nvgpu expects the tiled form

// -----

// The kernel module is named <function>_kernels: taken here.
// expected-error @+1 {{convert-fa-to-nvgpu: the kernel module name 'attn_kernels' of @attn collides with an existing symbol; rename one of them}}
func.func @attn(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
// expected-note @+1 {{'attn_kernels' is defined here}}
func.func private @attn_kernels()

// -----

// A name that is not a PTX identifier is renamed (attn-1 -> attn_1); that
// name is taken by another function here.
// expected-error @+1 {{convert-fa-to-nvgpu: the PTX identifier (invalid characters replaced by '_') 'attn_1' of @attn-1 collides with an existing symbol; rename one of them}}
func.func @"attn-1"(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
// expected-note @+1 {{'attn_1' is defined here}}
func.func private @attn_1()

// -----

// Two names with one PTX identifier: the second kernel's module name is
// taken by the first one's.
func.func @"a.b"(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // The first kernel's gpu.module carries the attention's location.
  // expected-note @+1 {{'a_b_kernels' is defined here}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
// expected-error @+1 {{convert-fa-to-nvgpu: the kernel module name 'a_b_kernels' of @a-b collides with an existing symbol; rename one of them}}
func.func @"a-b"(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
