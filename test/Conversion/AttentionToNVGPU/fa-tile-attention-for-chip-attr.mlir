// A function's fa.sm90.block_kv sets its K/V tile on sm_90a (over the option
// and the chip default); other functions keep the default; sm_80 ignores it.
// RUN: fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a" | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip="chip=sm_90a block-kv=64" | FileCheck %s --check-prefix=OPT
// RUN: fa-opt %s --fa-tile-attention-for-chip="chip=sm_80" | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @with_attr
// CHECK: fa.kv_block_range {{.*}}block_kv = 176
// CHECK-LABEL: func.func @without_attr
// CHECK: fa.kv_block_range {{.*}}block_kv = 128
// OPT-LABEL: func.func @with_attr
// OPT: fa.kv_block_range {{.*}}block_kv = 176
// OPT-LABEL: func.func @without_attr
// OPT: fa.kv_block_range {{.*}}block_kv = 64
// SM80-LABEL: func.func @with_attr
// SM80: fa.kv_block_range {{.*}}block_kv = 32
func.func @with_attr(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> attributes {fa.sm90.block_kv = 176 : i64} {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
func.func @without_attr(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
