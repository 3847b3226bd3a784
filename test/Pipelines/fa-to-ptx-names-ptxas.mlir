// REQUIRES: ptxas
// Kernels of functions whose names are not PTX identifiers compile, are
// written under their PTX identifiers (no '/' reaches a file name), and
// assemble. Before: LLVM ERROR (dash, space, slash) or PTX that ptxas
// rejected (dot, leading digit).
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t/sm80})' -o /dev/null
// RUN: env LC_ALL=C ls %t/sm80 | FileCheck %s --check-prefix=FILES
// RUN: for k in %t/sm80/*.ptx; do %ptxas -arch=sm_80 $k -o %t/k.cubin || exit 1; done
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/sm90})' -o /dev/null
// RUN: env LC_ALL=C ls %t/sm90 | FileCheck %s --check-prefix=FILES
// RUN: for k in %t/sm90/*.ptx; do %ptxas -arch=sm_90a $k -o %t/k.cubin || exit 1; done
// RUN: grep -h '^.visible .entry' %t/sm80/*.ptx %t/sm90/*.ptx | FileCheck %s --check-prefix=ENTRY

// FILES: _2attn_kernel.json
// FILES-NEXT: _2attn_kernel.ptx
// FILES-NEXT: attn_v2_kernel.json
// FILES-NEXT: attn_v2_kernel.ptx
// FILES-NEXT: has_space_kernel.json
// FILES-NEXT: has_space_kernel.ptx
// FILES-NEXT: heads_attn_kernel.json
// FILES-NEXT: heads_attn_kernel.ptx
// FILES-NEXT: my_attn_kernel.json
// FILES-NEXT: my_attn_kernel.ptx
// FILES-EMPTY:

// The manifest records the function as written.
// RUN: grep -h '"function"' %t/sm80/my_attn_kernel.json %t/sm90/my_attn_kernel.json | FileCheck %s --check-prefix=FUNC
// FUNC-COUNT-2: "function": "my-attn",

// ENTRY-COUNT-10: .visible .entry {{_2attn|attn_v2|has_space|heads_attn|my_attn}}_kernel(

func.func @"my-attn"(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @"has space"(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @"heads/attn"(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @"attn.v2"(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @"2attn"(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
