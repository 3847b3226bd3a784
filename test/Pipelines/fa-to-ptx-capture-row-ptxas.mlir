// REQUIRES: ptxas
// A score_mod reading a captured tensor at (b, h, i) alone (ALiBi's slope
// table, as fa.flex writes `slopes[h] * (kv_idx - q_idx)`): the key position
// is not clamped for it, so (j - i) stays `base + constant` and converts to
// float once per row, as with the slope computed in the region: four
// conversions in the kernel (not one per score: 256, with 208 bytes of
// spills and 0.55x our plain kernel on the H100 through fa.flex), no spill.
// A table read at the key position (docs[j]) keeps the clamp.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: grep -c "cvt.rn.f32.s" %t/slope_table_kernel.ptx | FileCheck %s --check-prefix=CVT
// CVT: {{^4$}}
// RUN: %ptxas -arch=sm_90a -v %t/slope_table_kernel.ptx -o %t/slope.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// NOSPILL: 0 bytes spill stores, 0 bytes spill loads
// The clamp is a min per score: dozens more than the slope table's kernel has.
// RUN: %python -c "import sys; n = [open(f).read().count('min.s64') for f in sys.argv[1:]]; sys.exit(0 if n[0] > n[1] + 32 else 1)" %t/key_table_kernel.ptx %t/slope_table_kernel.ptx
// RUN: fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t/sm80})' -o /dev/null
// RUN: %ptxas -arch=sm_80 %t/sm80/slope_table_kernel.ptx -o %t/slope80.cubin

func.func @slope_table(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %slopes: tensor<16xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<16xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @key_table(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %bias: tensor<4096xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %bias[%j] : tensor<4096xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
