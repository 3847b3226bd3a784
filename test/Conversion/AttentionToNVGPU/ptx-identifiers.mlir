// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_80 --convert-fa-to-nvgpu=chip=sm_80 | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a | FileCheck %s

// A function name that is not a PTX identifier (PTX: [a-zA-Z][a-zA-Z0-9_$]*
// or [_$%][a-zA-Z0-9_$]+) names its kernel after getPTXIdentifier: each other
// character becomes '_', a leading digit gets a '_' before it. Valid names
// stay as they are (test/Golden holds their PTX). Before, a dash, space or
// slash aborted in the NVPTX back end (LLVM ERROR: Symbol name with
// unsupported characters), and a dot or leading digit gave PTX that ptxas
// rejected.

// -----

// CHECK-LABEL: gpu.module @my_attn_kernels {
// CHECK: gpu.func @my_attn_kernel(
// CHECK-NOT: func.func
func.func @"my-attn"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}

// -----

// CHECK-LABEL: gpu.module @my_attn_kernels {
// CHECK: gpu.func @my_attn_kernel(
// CHECK-NOT: func.func
func.func @"my attn"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}

// -----

// CHECK-LABEL: gpu.module @heads_attn_kernels {
// CHECK: gpu.func @heads_attn_kernel(
// CHECK-NOT: func.func
func.func @"heads/attn"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}

// -----

// CHECK-LABEL: gpu.module @attn_v2_kernels {
// CHECK: gpu.func @attn_v2_kernel(
// CHECK-NOT: func.func
func.func @"attn.v2"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}

// -----

// CHECK-LABEL: gpu.module @_2attn_kernels {
// CHECK: gpu.func @_2attn_kernel(
// CHECK-NOT: func.func
func.func @"2attn"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}

// -----

// CHECK-LABEL: gpu.module @attn$1_kernels {
// CHECK: gpu.func @attn$1_kernel(
// CHECK-NOT: func.func
func.func @"attn$1"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}

// -----

// CHECK-LABEL: gpu.module @ok_Name9_kernels {
// CHECK: gpu.func @ok_Name9_kernel(
// CHECK-NOT: func.func
func.func @"ok_Name9"(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %v: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  return %o : tensor<1x1x?x64xf16>
}
