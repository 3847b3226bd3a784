//===- AttentionOps.h - fa dialect ops --------------------------*- C++ -*-===//
#ifndef FA_DIALECT_ATTENTION_IR_ATTENTIONOPS_H
#define FA_DIALECT_ATTENTION_IR_ATTENTIONOPS_H

#include "fa/Dialect/Attention/IR/AttentionDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"

#define GET_OP_CLASSES
#include "fa/Dialect/Attention/IR/AttentionOps.h.inc"

#endif // FA_DIALECT_ATTENTION_IR_ATTENTIONOPS_H
