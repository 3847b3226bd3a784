//===- AttentionDialect.h - the fa dialect ----------------------*- C++ -*-===//
#ifndef FA_DIALECT_ATTENTION_IR_ATTENTIONDIALECT_H
#define FA_DIALECT_ATTENTION_IR_ATTENTIONDIALECT_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "fa/Dialect/Attention/IR/AttentionOpsDialect.h.inc"

#endif // FA_DIALECT_ATTENTION_IR_ATTENTIONDIALECT_H
