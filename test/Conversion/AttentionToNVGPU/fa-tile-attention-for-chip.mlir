// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip="block-kv=64" | FileCheck %s --check-prefix=KV64
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip="block-q=64" | FileCheck %s --check-prefix=BQ64
// BQ64-LABEL: func.func @d64
// BQ64: arith.muli %{{.+}}, %c64
// BQ64-LABEL: func.func @d128
// BQ64: arith.muli %{{.+}}, %c64
// BQ64: fa.kv_block_range {{.*}}{block_kv = 32 : i64

// sm_80 tiles 128 query rows per block for both head dims, with 64 keys per
// step at head dim 64 and 32 at head dim 128; block-kv overrides.

// CHECK-LABEL: func.func @d64
// CHECK: scf.forall
// CHECK: arith.muli %{{.+}}, %c128
// CHECK: fa.kv_block_range {{.*}}{block_kv = 64 : i64, window = array<i64: -1, 0>}
// CHECK-NOT: fa.attention
// KV64-LABEL: func.func @d64
// KV64: fa.kv_block_range {{.*}}{block_kv = 64 : i64
func.func @d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// CHECK-LABEL: func.func @d128
// CHECK: fa.kv_block_range {{.*}}{block_kv = 32 : i64, window = array<i64: -1, 0>}
// KV64-LABEL: func.func @d128
// KV64: fa.kv_block_range {{.*}}{block_kv = 64 : i64
func.func @d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
