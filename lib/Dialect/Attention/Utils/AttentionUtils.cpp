//===- AttentionUtils.cpp - scalar pieces of the attention math -----------===//
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;

static Value f32Constant(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(value)));
}

static Value negInf(OpBuilder &b, Location loc) {
  return f32Constant(b, loc, -std::numeric_limits<double>::infinity());
}

static Value indexSize(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  return getValueOrCreateConstantIndexOp(
      b, loc, tensor::getMixedSize(b, loc, tensor, dim));
}

AttentionShape mlir::fa::getAttentionShape(OpBuilder &b, Location loc,
                                           AttentionOp op) {
  AttentionShape shape;
  shape.queryHeads = indexSize(b, loc, op.getQuery(), 1);
  shape.kvHeads = indexSize(b, loc, op.getKey(), 1);
  shape.headRatio =
      arith::DivUIOp::create(b, loc, shape.queryHeads, shape.kvHeads);
  shape.queryLength = indexSize(b, loc, op.getQuery(), 2);
  shape.keyLength = indexSize(b, loc, op.getKey(), 2);
  // The op's diagonal(...) override (set by row tiling), else bottom-right
  // alignment.
  shape.diagonal = op.getDiagonal()
                       ? op.getDiagonal()
                       : Value(arith::SubIOp::create(b, loc, shape.keyLength,
                                                     shape.queryLength));
  return shape;
}

Value mlir::fa::getKVHead(OpBuilder &b, Location loc, Value queryHead,
                          const AttentionShape &shape) {
  return arith::DivUIOp::create(b, loc, queryHead, shape.headRatio);
}

bool mlir::fa::canFoldLog2eIntoScale(AttentionOp op) {
  return !op.getSoftcap() && !(op.getMask() && !op.isBooleanMask());
}

Value mlir::fa::getScoreScale(OpBuilder &b, Location loc, AttentionOp op,
                              bool log2e) {
  double scale = op.getEffectiveScale();
  if (log2e)
    scale *= M_LOG2E;
  Value result = f32Constant(b, loc, scale);
  if (Value qd = op.getQDescale())
    result = arith::MulFOp::create(
        b, loc, result, arith::MulFOp::create(b, loc, qd, op.getKDescale()));
  return result;
}

Value mlir::fa::extendToF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value mlir::fa::truncateFromF32(OpBuilder &b, Location loc, Value v,
                                Type type) {
  if (type.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

Value mlir::fa::isInsideWindow(OpBuilder &b, Location loc, AttentionOp op,
                               Value row, Value col,
                               const AttentionShape &shape) {
  auto [left, right] = op.getEffectiveWindow();
  if (left < 0 && right < 0)
    return Value();
  // delta = col - (row + diagonal): signed distance from the diagonal.
  Value delta = arith::SubIOp::create(
      b, loc, col, arith::AddIOp::create(b, loc, row, shape.diagonal));
  Value inside;
  auto conjoin = [&](Value cond) {
    inside = inside ? arith::AndIOp::create(b, loc, inside, cond) : cond;
  };
  if (left >= 0)
    conjoin(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, delta,
        arith::ConstantIndexOp::create(b, loc, -left)));
  if (right >= 0)
    conjoin(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle, delta,
        arith::ConstantIndexOp::create(b, loc, right)));
  return inside;
}

Value mlir::fa::applyScoreModifiers(OpBuilder &b, Location loc, AttentionOp op,
                                    Value s, Value scoreScale, Value maskElt,
                                    Value row, Value col,
                                    const AttentionShape &shape,
                                    Value postScale) {
  s = arith::MulFOp::create(b, loc, s, scoreScale);
  if (std::optional<APFloat> softcap = op.getSoftcap()) {
    Value cap = f32Constant(b, loc, softcap->convertToDouble());
    Value t = math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, s, cap));
    s = arith::MulFOp::create(b, loc, t, cap);
  }
  Value keep;
  if (maskElt) {
    if (maskElt.getType().isInteger(1))
      keep = maskElt;
    else
      s = arith::AddFOp::create(b, loc, s, extendToF32(b, loc, maskElt));
  }
  if (Value inside = isInsideWindow(b, loc, op, row, col, shape))
    keep = keep ? arith::AndIOp::create(b, loc, keep, inside) : inside;
  if (postScale)
    s = arith::MulFOp::create(b, loc, s, postScale);
  if (keep)
    s = arith::SelectOp::create(b, loc, keep, s, negInf(b, loc));
  return s;
}

AffineMap mlir::fa::getMaskBroadcastMap(AttentionOp op, unsigned numLoops) {
  MLIRContext *ctx = op.getContext();
  auto maskType = cast<RankedTensorType>(op.getMask().getType());
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < 4; ++d) {
    bool broadcast = d < 2 && maskType.getDimSize(d) == 1 &&
                     op.getQueryType().getDimSize(d) != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(d, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

Value mlir::fa::safeRowMax(OpBuilder &b, Location loc, Value rowMax) {
  Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         rowMax, negInf(b, loc));
  return arith::SelectOp::create(b, loc, isNegInf, f32Constant(b, loc, 0.0),
                                 rowMax);
}

Value mlir::fa::normalizeOutput(OpBuilder &b, Location loc, AttentionOp op,
                                Value acc, Value rowSum) {
  Value zero = f32Constant(b, loc, 0.0);
  Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        rowSum, zero);
  // Divide by 1 instead of 0 so no NaN is ever computed, then select 0.
  Value denom = arith::SelectOp::create(b, loc, isEmpty,
                                        f32Constant(b, loc, 1.0), rowSum);
  Value o = arith::DivFOp::create(b, loc, acc, denom);
  if (Value vd = op.getVDescale())
    o = arith::MulFOp::create(b, loc, o, vd);
  return arith::SelectOp::create(b, loc, isEmpty, zero, o);
}

Value mlir::fa::logSumExp(OpBuilder &b, Location loc, Value safeMax,
                          Value rowSum) {
  return arith::AddFOp::create(b, loc, safeMax,
                               math::LogOp::create(b, loc, rowSum));
}
