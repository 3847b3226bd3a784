// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Without -verify-diagnostics the errors make fa-opt fail, not crash.
// RUN: not fa-opt %s -split-input-file > /dev/null 2>&1

// One case per verifier rule of fa.attention_grad's score_mod, mask_mod and
// score_mod_grad regions (the first two share fa.attention's checks).

func.func @score_mod_args(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must have the block arguments (f32, index, index, index, index), got (f32, index, index, index)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index):
    fa.yield %s : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @score_mod_yield(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod region must yield one f32, got (f32, f32)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s, %s : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @mask_mod_args(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region must have the block arguments (index, index, index, index), got (index, index, index, i32)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: i32):
    %t = arith.constant true
    fa.yield %t : i1
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @mask_mod_yield(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region must yield one i1, got (f32)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.constant 1.0 : f32
    fa.yield %t : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @grad_args(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod_grad region must have the block arguments (f32, index, index, index, index), got (f16, index, index, index, index)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } score_mod_grad {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %t = arith.extf %s : f16 to f32
    fa.yield %t, %t : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @grad_yield_count(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod_grad region must yield (f32, f32), got (f32)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @grad_yield_type(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod_grad region must yield (f32, f32), got (f32, f16)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.constant 1.0 : f16
    fa.yield %s, %d : f32, f16
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @grad_load(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>, %buf: memref<8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod_grad region must be free of side effects: 'memref.load' may read or write memory}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = memref.load %buf[%i] : memref<8xf32>
    fa.yield %s, %x : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @grad_nested_fa(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the score_mod_grad region must not contain 'fa.kv_block_range' (the region is inlined per score)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %r:4 = fa.kv_block_range rows [%i, %j) keys %j diagonal %i {block_kv = 16 : i64, window = array<i64: -1, 0>}
    %one = arith.constant 1.0 : f32
    fa.yield %s, %one : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @grad_without_score_mod(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{a score_mod_grad region needs the score_mod region it is the derivative of}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1.0 : f32
    fa.yield %s, %one : f32, f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @two_regions(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{must have no modifier region, or three (score_mod, mask_mod, score_mod_grad; an absent one empty), got 2}}
  %dq, %dk, %dv = "fa.attention_grad"(%q, %q, %q, %q, %l, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>}> ({
  }, {
  }) : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>) -> (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
  return %dq : tensor<1x1x8x8xf32>
}

// -----

func.func @wrong_order(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.constant true
    fa.yield %t : i1
  // expected-error @+1 {{expected ':'}}
  } score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}

// -----

// mask_mod names %j, which only score_mod_grad defines: the parser resolves
// the name to score_mod_grad's argument. Refused while parsing, before the
// malformed type list below makes the parse fail (then the regions were
// destroyed with a use across them: a heap corruption fa-fuzz found).
func.func @sibling_value(%q: tensor<1x1x8x8xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{the mask_mod region uses a value defined in the score_mod_grad region (a region sees its own arguments and values defined above the op)}}
  %dq, %dk, %dv = fa.attention_grad %q, %q, %q, %q, %l, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa.yield %s : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %jj: index):
    %keep = arith.cmpi ult, %i, %j : index
    fa.yield %keep : i1
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1.0 : f32
    fa.yield %s, %one : f32, f32
  } : tensor<1x1x8x8xf32>, f tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>,
      tensor<1x1x8x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8x8xf32>
      -> tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
  return %dq : tensor<1x1x8x8xf32>
}
