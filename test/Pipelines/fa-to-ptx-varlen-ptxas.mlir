// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/varlen_d128_causal_kernel.ptx -o %t/a.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90a -v %t/varlen_d64_full_kernel.ptx -o %t/b.cubin 2>&1 | FileCheck %s
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a persistent=true},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/varlen_d64_full_kernel.ptx -o %t/c.cubin 2>&1 | FileCheck %s

// The varlen sm_90a kernels assemble for sm_90a without spills (also persistent).
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: bytes spill stores

func.func @varlen_d128_causal(%q: tensor<1x16x?x128xbf16>, %k: tensor<1x16x?x128xbf16>, %v: tensor<1x16x?x128xbf16>,
                              %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>) {
  %o, %l = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal}
      : tensor<1x16x?x128xbf16>, tensor<1x16x?x128xbf16>, tensor<1x16x?x128xbf16> -> (tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>)
  return %o, %l : tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>
}

// -----

func.func @varlen_d64_full(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>,
                           %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}
