// RUN: fa-opt %s --convert-fa-to-nvgpu -verify-diagnostics
// RUN: fa-opt %s --fa-to-ptx -verify-diagnostics

// A stray tile op is no kernel (found by fa-fuzz: fa-to-ptx exited 0 with the
// fa.kv_block_range left in its output).
// expected-error @+1 {{convert-fa-to-nvgpu expects exactly one tiled attention (scf.forall with fa.online_attention) per func.func, found 0}}
func.func @stray_range(%r0: index, %r1: index, %nk: index, %d: index) -> index {
  %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %nk diagonal %d
      {block_kv = 16 : i64, window = array<i64: -1, 0>}
  return %e : index
}
