// Malformed fa.attention syntax: every case is a diagnostic, none a crash.
// RUN: fa-opt %s -split-input-file -verify-diagnostics
// `not` fails on a crash, so this also checks that fa-opt exits with an error.
// RUN: not fa-opt %s -split-input-file 2>&1 | FileCheck %s

// Missing operand.
// CHECK: error:{{.*}} expected ','
func.func @missing_operand(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ','}}
  %o = fa.attention %q, %k : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Extra operand.
// CHECK: error:{{.*}} expected ':'
func.func @extra_operand(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ':'}}
  %o = fa.attention %q, %k, %v, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// No operands at all.
// CHECK: error:{{.*}} expected SSA operand
func.func @no_operands(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected SSA operand}}
  %o = fa.attention : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Undefined operand.
// CHECK: error:{{.*}} use of undeclared SSA value name
func.func @undefined_operand(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  %o = fa.attention %q, %k, %x : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Missing types.
// CHECK: error:{{.*}} expected ':'
func.func @missing_types(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ':'}}
  %o = fa.attention %q, %k, %v
  return
}

// -----

// Missing an operand type.
// CHECK: error:{{.*}} expected ','
func.func @missing_operand_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ','}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Missing result type.
// CHECK: error:{{.*}} expected '->'
func.func @missing_result_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected '->'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}

// -----

// Garbage after the op.
// CHECK: error:{{.*}} custom op 'garbage' is unknown
func.func @garbage_after_op(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{custom op 'garbage' is unknown}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16> garbage
  return
}

// -----

// The attribute dictionary after the types.
// CHECK: error:{{.*}} expected operation name in quotes
func.func @attr_dict_after_types(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected operation name in quotes}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16> {causal}
  return
}

// -----

// Unterminated attribute dictionary.
// CHECK: error:{{.*}} expected '}' in attribute dictionary
func.func @unterminated_attr_dict(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected '}' in attribute dictionary}}
  %o = fa.attention %q, %k, %v {causal : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Duplicate attribute.
// CHECK: error:{{.*}} duplicate key 'scale' in dictionary attribute
func.func @duplicate_attribute(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{duplicate key 'scale' in dictionary attribute}}
  %o = fa.attention %q, %k, %v {scale = 0.1 : f32, scale = 0.2 : f32} : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Two result types for one bound value.
// CHECK: error:{{.*}} operation defines 2 results but was provided 1 to bind
func.func @two_types_one_value(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{operation defines 2 results but was provided 1 to bind}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<1x4x16xf32>)
  return
}

// -----

// One result type for two bound values.
// CHECK: error:{{.*}} operation defines 1 results but was provided 2 to bind
func.func @one_type_two_values(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{operation defines 1 results but was provided 2 to bind}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// One result type in parentheses: parentheses mean (out, lse).
// CHECK: error:{{.*}} expected ','
func.func @one_type_in_parens(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ','}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>)
  return
}

// -----

// Three result types.
// CHECK: error:{{.*}} expected ')'
func.func @three_result_types(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ')'}}
  %o = fa.attention %q, %k, %v : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> (tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
  return
}

// -----

// Mask without its type.
// CHECK: error:{{.*}} expected ':'
func.func @mask_without_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ':'}}
  %o = fa.attention %q, %k, %v mask(%m) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Mask type that disagrees with the value's.
// CHECK: error:{{.*}} use of value '%m' expects different type than prior uses: 'tensor<1x1x16x32xi1>' vs 'tensor<1x1x16x16xi1>'
func.func @mask_wrong_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%m' expects different type than prior uses: 'tensor<1x1x16x32xi1>' vs 'tensor<1x1x16x16xi1>'}}
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x16x32xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Two descale factors.
// CHECK: error:{{.*}} expected ','
func.func @two_descales(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ','}}
  %o = fa.attention %q, %k, %v descale(%d, %d) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Clauses out of order: mask comes before descale.
// CHECK: error:{{.*}} expected ':'
func.func @clauses_out_of_order(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ':'}}
  %o = fa.attention %q, %k, %v descale(%d, %d, %d) mask(%m : tensor<1x1x16x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Misspelled clause.
// CHECK: error:{{.*}} expected ':'
func.func @misspelled_clause(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{expected ':'}}
  %o = fa.attention %q, %k, %v masks(%m : tensor<1x1x16x16xi1>) : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Operand type that is not a tensor.
// CHECK: error:{{.*}} invalid kind of type specified: expected builtin.tensor, but found 'memref<1x4x16x32xf16>'
func.func @memref_operand_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'memref<1x4x16x32xf16>'}}
  %o = fa.attention %q, %k, %v : memref<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}

// -----

// Unranked operand type.
// CHECK: error:{{.*}} invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf16>'
func.func @unranked_operand_type(%q: tensor<1x4x16x32xf16>, %k: tensor<1x4x16x32xf16>, %v: tensor<1x4x16x32xf16>, %m: tensor<1x1x16x16xi1>, %d: f32) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<*xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16> -> tensor<1x4x16x32xf16>
  return
}
