// Every diagnostic of the fa.sm90.* function attributes (SM90/Schedule.cpp):
// each names the attribute and the function, and for a combination the other
// switch and where it was set.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" -verify-diagnostics -o /dev/null
// The same diagnostics from convert-fa-to-nvgpu alone, on a function tiled by
// fa-tile-attention (which does not read the attributes):
// RUN: fa-opt %s -split-input-file --fa-tile-attention="block-q=128 block-kv=128" --convert-fa-to-nvgpu="chip=sm_90a" -verify-diagnostics -o /dev/null

// A wrong attribute type, zero and negative values, a size the wgmma cannot take, and an unknown (misspelled) attribute: fa-tile-attention-for-chip checks every fa.sm90.* attribute on sm_90a.
// expected-error @+1 {{'fa.sm90.block_kv' on function @bkv_bool must be an integer (n : i64), got true}}
func.func @bkv_bool(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.block_kv = true} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.block_kv' on function @bkv_zero must be a multiple of 16 from 16 to 256, got 0 : i64}}
func.func @bkv_zero(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.block_kv = 0 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.block_kv' on function @bkv_negative must be a multiple of 16 from 16 to 256, got -16 : i64}}
func.func @bkv_negative(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.block_kv = -16 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.block_kv' on function @bkv_100 must be a multiple of 16 from 16 to 256, got 100 : i64}}
func.func @bkv_100(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.block_kv = 100 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.stages' on function @stages_zero must be from 1 to 4, got 0 : i64}}
func.func @stages_zero(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.stages = 0 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.stages' on function @stages_five must be from 1 to 4, got 5 : i64}}
func.func @stages_five(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.stages = 5 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.stages' on function @stages_string must be an integer (n : i64), got "2"}}
func.func @stages_string(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.stages = "2"} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.exp2_poly_every' on function @poly_negative must be at least 0, got -1 : i64}}
func.func @poly_negative(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.exp2_poly_every = -1 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.ping_pong' on function @pp_int must be a bool (true or false), got 1 : i64}}
func.func @pp_int(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.ping_pong = 1 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.longest_first' on function @lf_auto must be a bool (true or false), got "auto"}}
func.func @lf_auto(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.longest_first = "auto"} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{unknown sm_90a schedule attribute 'fa.sm90.ping_pnog' on function @typo (known: fa.sm90.{warp_specialize, overlap, p_from_registers, warp_arrive, fast_softmax, rescale_before_pv, ping_pong, longest_first, rescale_threshold, exp2_poly_every, persistent, q_buffers, dynamic_tiles, split_kv, transpose_v, split_release, producer_registers, stages, block_kv})}}
func.func @typo(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.ping_pnog = false} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// Combinations: the attribute and the option or default it meets are both named.
// expected-error @+1 {{sm_90a schedule: persistent=true (attribute fa.sm90.persistent of function @persistent_no_ws) needs warp-specialize, but warp-specialize=false (attribute fa.sm90.warp_specialize of function @persistent_no_ws)}}
func.func @persistent_no_ws(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.persistent = true, fa.sm90.warp_specialize = false} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{sm_90a schedule: split-release=true (attribute fa.sm90.split_release of function @split_no_ws) needs warp-specialize, but warp-specialize=false (attribute fa.sm90.warp_specialize of function @split_no_ws)}}
func.func @split_no_ws(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.split_release = true, fa.sm90.warp_specialize = false} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{sm_90a schedule: overlap=true (default) needs at least 2 K/V stages, but stages=1 (attribute fa.sm90.stages of function @one_stage) (or set overlap=false)}}
func.func @one_stage(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.stages = 1 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{sm_90a schedule: overlap=true (attribute fa.sm90.overlap of function @one_stage_overlap) needs at least 2 K/V stages, but stages=1 (attribute fa.sm90.stages of function @one_stage_overlap) (or set overlap=false)}}
func.func @one_stage_overlap(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.stages = 1 : i64, fa.sm90.overlap = true} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// One stage builds without the pipelined consumers.
func.func @one_stage_ok(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.stages = 1 : i64, fa.sm90.overlap = false} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{'fa.sm90.q_buffers' on function @q_buffers_three must be from 1 to 2, got 3 : i64}}
func.func @q_buffers_three(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> attributes {fa.sm90.q_buffers = 3 : i64} {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
