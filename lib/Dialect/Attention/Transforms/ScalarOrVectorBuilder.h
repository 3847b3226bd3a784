//===- ScalarOrVectorBuilder.h - constants shaped like an operand -*- C++ -*-===//
//
// The bit-level f8E4M3FN expansions (fa-expand-f8e4m3fn-extf/-truncf) rewrite
// scalar and vector conversions alike: this builds types and constants with
// the shape of the converted value.
//
//===----------------------------------------------------------------------===//
#ifndef FA_LIB_DIALECT_ATTENTION_TRANSFORMS_SCALARORVECTORBUILDER_H
#define FA_LIB_DIALECT_ATTENTION_TRANSFORMS_SCALARORVECTORBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fa {
struct ScalarOrVectorBuilder {
  PatternRewriter &rewriter;
  Location loc;
  Type shape; // a scalar type or a vector type

  /// `elt`, or a vector of `elt` with the shape of `shape`.
  Type type(Type elt) const {
    if (auto vec = dyn_cast<VectorType>(shape))
      return vec.clone(elt);
    return elt;
  }
  /// A constant of type(ty's element), splat for vectors.
  Value constant(Type ty, TypedAttr attr) const {
    if (auto vec = dyn_cast<VectorType>(ty))
      attr = DenseElementsAttr::get(vec, cast<Attribute>(attr));
    return arith::ConstantOp::create(rewriter, loc, ty, attr);
  }
  Value i32(int64_t v) const {
    return constant(type(rewriter.getI32Type()), rewriter.getI32IntegerAttr(v));
  }
  Value f32(float v) const {
    return constant(type(rewriter.getF32Type()), rewriter.getF32FloatAttr(v));
  }
};
} // namespace mlir::fa

#endif // FA_LIB_DIALECT_ATTENTION_TRANSFORMS_SCALARORVECTORBUILDER_H
