//===- AttentionDialect.cpp - the fa dialect ------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionDialect.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"

using namespace mlir;
using namespace mlir::fa;

#include "fa/Dialect/Attention/IR/AttentionOpsDialect.cpp.inc"

void FADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fa/Dialect/Attention/IR/AttentionOps.cpp.inc"
      >();
}
