//===- RaiseAttentionInternal.h - helpers shared by the raise files -*- C++ -*-===//
//
// Small predicates on ScalarExprs used by RaiseAttentionMatchers.cpp (the
// matchers) and RaiseAttentionBands.cpp (the positional proofs). Private to
// this directory.
//
//===----------------------------------------------------------------------===//
#ifndef FA_LIB_DIALECT_ATTENTION_TRANSFORMS_RAISEATTENTIONINTERNAL_H
#define FA_LIB_DIALECT_ATTENTION_TRANSFORMS_RAISEATTENTIONINTERNAL_H

#include "fa/Dialect/Attention/Transforms/RaiseAttention.h"

#include <cmath>

namespace mlir::fa::raise {

template <typename OpTy>
inline bool isOp(const ScalarExpr *e) {
  return e && e->kind == ScalarExpr::Kind::Op && isa<OpTy>(e->op);
}

/// A leaf that reads an element of a ranked tensor (not a scalar).
inline bool isTensorLeaf(const ScalarExpr *e) {
  return e && e->kind == ScalarExpr::Kind::Leaf && e->map &&
         isa<RankedTensorType>(e->tensor.getType());
}

/// -inf, or a finite value <= -1e30 (the lowest f32 / bf16, -1e38, ...) when
/// `finite` may be set.
inline bool isNegInfLike(const ScalarExpr *e, bool &finite) {
  std::optional<double> v = getConstantValue(e);
  if (!v)
    return false;
  if (std::isinf(*v) && *v < 0)
    return true;
  if (*v <= -1e30) {
    finite = true;
    return true;
  }
  return false;
}

/// True for the i1 constant true.
inline bool isTrueConstant(const ScalarExpr *e) {
  if (!e || e->kind != ScalarExpr::Kind::Constant)
    return false;
  auto i = dyn_cast<IntegerAttr>(e->constant);
  return i && i.getType().isInteger(1) && i.getValue().isOne();
}

} // namespace mlir::fa::raise

#endif // FA_LIB_DIALECT_ATTENTION_TRANSFORMS_RAISEATTENTIONINTERNAL_H
