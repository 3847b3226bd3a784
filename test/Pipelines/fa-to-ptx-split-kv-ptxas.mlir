// REQUIRES: ptxas
// RUN: rm -rf %t && fa-opt %S/../../bench/kernels_split_kv.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a split-kv=true},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: for f in %t/*.ptx; do %ptxas -arch=sm_90a -v $f -o %t/a.cubin 2>&1 | grep 'spill stores'; done | FileCheck %s
// RUN: rm -rf %t && fa-opt %S/../../bench/kernels_kv_cache.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a split-kv=true},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: for f in %t/*.ptx; do %ptxas -arch=sm_90a -v $f -o %t/a.cubin 2>&1 | grep 'spill stores'; done | FileCheck %s --check-prefix=KV

// The in-kernel split-KV kernels (bench/kernels_split_kv.mlir: d64, d128,
// d256, full, causal, a window, with and without lse; the 24 kv_lens / paged
// ones of bench/kernels_kv_cache.mlir) assemble for sm_90a without spills:
// the epilogue re-reads blockIdx instead of holding what derives from it
// across the key loop, and the paged ones give the producer 40 registers.
// CHECK-COUNT-7: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: bytes spill stores
// KV-COUNT-24: 0 bytes spill stores, 0 bytes spill loads
// KV-NOT: bytes spill stores
