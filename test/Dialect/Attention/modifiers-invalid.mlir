// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Without -verify-diagnostics the errors make fa-opt fail, not crash.
// RUN: not fa-opt %s -split-input-file > /dev/null 2>&1

// One case per verifier rule of the score_mod / mask_mod regions and of the
// coords(...) clause of fa.online_attention.

func.func @score_mod_args(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must have the block arguments (f32, index, index, index, index), got (f32, index, index, index)}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index):
    fa.yield %s : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_arg_type(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must have the block arguments (f32, index, index, index, index), got (f16, index, index, index, index)}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %t = arith.extf %s : f16 to f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_yield_type(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must yield one f32, got (f16)}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.truncf %s : f32 to f16
    fa.yield %t : f16
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_yield_count(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must yield one f32, got (f32, f32)}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s, %s : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_store(%q: tensor<1x1x8x8xf32>, %buf: memref<8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must be free of side effects: 'memref.store' may read or write memory}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    memref.store %s, %buf[%i] : memref<8xf32>
    fa.yield %s : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_load(%q: tensor<1x1x8x8xf32>, %buf: memref<8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must be free of side effects: 'memref.load' may read or write memory}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = memref.load %buf[%i] : memref<8xf32>
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_two_blocks(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{region #0 ('modifiers') failed to verify constraint: region with at most 1 blocks}}
  %o = "fa.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    cf.br ^bb1
  ^bb1:
    fa.yield %s : f32
  }, {
  }) : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @mask_mod_args(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region must have the block arguments (index, index, index, index), got (f32, index, index, index, index)}}
  %o = fa.attention %q, %q, %q mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.constant true
    fa.yield %t : i1
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @mask_mod_yield_type(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region must yield one i1, got (index)}}
  %o = fa.attention %q, %q, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    fa.yield %i : index
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

// The innermost op with effects is named, also in a nested region.
func.func @mask_mod_nested_store(%q: tensor<1x1x8x8xf32>, %buf: memref<8xi1>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region must be free of side effects: 'memref.store' may read or write memory}}
  %o = fa.attention %q, %q, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ule, %j, %i : index
    scf.if %c {
      memref.store %c, %buf[%i] : memref<8xi1>
    }
    fa.yield %c : i1
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @yield_outside(%x: f32) {
  // expected-error @+1 {{'fa.yield' op expects parent op to be one of 'fa.attention, fa.attention_grad, fa.online_attention'}}
  fa.yield %x : f32
}

// -----

func.func @step_regions_without_coords(%q: tensor<?x8xf32>, %m: tensor<?xf32>, %a: tensor<?x8xf32>) {
  // expected-error @+1 {{a score_mod or mask_mod region needs coords(%b, %h, %row0, %col0)}}
  %m1, %l1, %a1 = fa.online_attention %q, %q, %q into %m, %m, %a {scale = 0.125 : f32} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ule, %j, %i : index
    fa.yield %c : i1
  } : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>
  return
}

// -----

func.func @step_coords_without_regions(%q: tensor<?x8xf32>, %m: tensor<?xf32>, %a: tensor<?x8xf32>, %x: index) {
  // expected-error @+1 {{coords are only meaningful with a score_mod or mask_mod region}}
  %m1, %l1, %a1 = fa.online_attention %q, %q, %q into %m, %m, %a coords(%x, %x, %x, %x) {scale = 0.125 : f32}
      : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>
  return
}

// -----

func.func @step_partial_coords(%q: tensor<?x8xf32>, %m: tensor<?xf32>, %a: tensor<?x8xf32>, %x: index) {
  // expected-error @+1 {{coords need all of batch, head, row0 and col0}}
  %r:3 = "fa.online_attention"(%q, %q, %q, %m, %m, %a, %x, %x) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0>, scale = 0.125 : f32}> ({
  }, {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ule, %j, %i : index
    fa.yield %c : i1
  }) : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>, index, index) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>)
  return
}

// -----

func.func @step_score_mod_yield(%q: tensor<?x8xf32>, %m: tensor<?xf32>, %a: tensor<?x8xf32>, %x: index) {
  // expected-error @+1 {{the score_mod region must yield one f32, got (i1)}}
  %m1, %l1, %a1 = fa.online_attention %q, %q, %q into %m, %m, %a coords(%x, %x, %x, %x) {scale = 0.125 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi ule, %j, %i : index
    fa.yield %c : i1
  } : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>
  return
}

// -----

// fa ops (pure, but not scalar) are not allowed in a region.
func.func @nested_fa_op(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region must not contain 'fa.kv_block_range' (the region is inlined per score)}}
  %o = fa.attention %q, %q, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %r:4 = fa.kv_block_range rows [%i, %j) keys %j diagonal %b {block_kv = 4 : i64, window = array<i64: -1, 0>}
    %c = arith.cmpi ult, %r#0, %r#3 : index
    fa.yield %c : i1
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

// score_mod uses %x, which only mask_mod defines (the parser resolves the
// forward reference to it): refused while parsing, so that the regions are
// never destroyed with a use across them (a heap corruption fa-fuzz found
// when a later part of the op failed to parse).
func.func @sibling_value(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region uses a value defined in the mask_mod region (a region sees its own arguments and values defined above the op)}}
  %o = fa.attention %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.addf %s, %x : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %x = arith.constant 1.0 : f32
    %keep = arith.cmpi ult, %i, %j : index
    fa.yield %keep : i1
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}
