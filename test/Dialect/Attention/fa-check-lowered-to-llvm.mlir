// RUN: fa-opt %s -split-input-file --fa-check-lowered-to-llvm -verify-diagnostics
// RUN: not fa-opt %s -split-input-file --fa-check-lowered-to-llvm=pipeline=my-pipeline 2>&1 | FileCheck %s --check-prefix=NAMED

// The diagnostics start with the pipeline's name.
// NAMED: error: 'func.func' op my-pipeline: could not lower this op to the llvm dialect
// NAMED: error: 'arith.addi' op my-pipeline: could not lower this op to the llvm dialect

// Everything in the llvm dialect (nested modules included): nothing reported.
module {
  module @inner {
    llvm.func @g() {
      llvm.return
    }
  }
  llvm.func @f(%x: i64) -> i64 {
    llvm.return %x : i64
  }
}

// -----

// Each op outside the llvm dialect is reported once, at the op (its body with it).
// expected-error @+1 {{'func.func' op fa-check-lowered-to-llvm: could not lower this op to the llvm dialect}}
func.func @f(%x: i64) -> i64 {
  %y = llvm.add %x, %x : i64
  return %y : i64
}
llvm.func @g(%x: i64) -> i64 {
  // expected-error @+1 {{'arith.addi' op fa-check-lowered-to-llvm: could not lower this op to the llvm dialect}}
  %y = arith.addi %x, %x : i64
  llvm.return %y : i64
}
