//===- Passes.h - fa dialect passes -----------------------------*- C++ -*-===//
#ifndef FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_H
#define FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fa {

#define GEN_PASS_DECL
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"

} // namespace mlir::fa

#endif // FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_H
