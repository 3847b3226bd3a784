//===- Dialects.cpp - C API of the fa dialect -----------------------------===//
#include "fa-c/Dialects.h"

#include "fa/Dialect/Attention/IR/AttentionDialect.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FA, fa, mlir::fa::FADialect)
