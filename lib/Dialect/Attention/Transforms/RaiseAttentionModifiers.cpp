//===- RaiseAttentionModifiers.cpp - score_mod / mask_mod from linalg -----===//
//
// The regions of a raised fa.attention: what fa-raise-attention read as a
// scalar expression of one score (an ALiBi bias, a finite masked_fill, a
// document mask) written back as ops in fa.attention's score_mod / mask_mod,
// the index space of the scores computed from the regions' (b, h, i, j).
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/RaiseAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::raise;

namespace {
/// Writes expressions as ops at a builder's insertion point, once per node.
class ExprEmitter {
public:
  ExprEmitter(OpBuilder &b, Location loc, ArrayRef<Value> dims,
              function_ref<bool(Value)> isAvailable)
      : b(b), loc(loc), dims(dims), isAvailable(isAvailable) {}

  /// `node` is written as `value` (the score argument).
  void bind(const ScalarExpr *node, Value value) { emitted[node] = value; }
  /// Reads of `tensor` are written as `value`.
  void bindTensor(Value tensor, Value value) {
    boundTensor = tensor;
    boundValue = value;
  }
  /// Reads of `tensor` fail.
  void forbidTensor(Value tensor) { forbidden = tensor; }

  FailureOr<Value> emit(const ScalarExpr *e);
  /// `v` converted to the float type `t` (null for other types).
  Value castTo(Value v, Type t);
  /// `v` as f32 (null unless a float).
  Value toF32(Value v);

private:
  FailureOr<Value> emitAffine(AffineExpr e);

  OpBuilder &b;
  Location loc;
  SmallVector<Value> dims;
  function_ref<bool(Value)> isAvailable;
  DenseMap<const ScalarExpr *, Value> emitted;
  Value boundTensor, boundValue, forbidden;
};
} // namespace

Value ExprEmitter::castTo(Value v, Type t) {
  Type from = v.getType();
  if (from == t)
    return v;
  auto f = dyn_cast<FloatType>(from), to = dyn_cast<FloatType>(t);
  if (!f || !to)
    return {};
  if (f.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, t, v);
  return arith::TruncFOp::create(b, loc, t, v);
}

Value ExprEmitter::toF32(Value v) { return castTo(v, b.getF32Type()); }

FailureOr<Value> ExprEmitter::emitAffine(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    if (d.getPosition() >= dims.size())
      return failure();
    return dims[d.getPosition()];
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return Value(arith::ConstantIndexOp::create(b, loc, c.getValue()));
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return failure();
  FailureOr<Value> l = emitAffine(bin.getLHS()), r = emitAffine(bin.getRHS());
  if (failed(l) || failed(r))
    return failure();
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return Value(arith::AddIOp::create(b, loc, *l, *r));
  case AffineExprKind::Mul:
    return Value(arith::MulIOp::create(b, loc, *l, *r));
  case AffineExprKind::FloorDiv:
    return Value(arith::FloorDivSIOp::create(b, loc, *l, *r));
  case AffineExprKind::CeilDiv:
    return Value(arith::CeilDivSIOp::create(b, loc, *l, *r));
  case AffineExprKind::Mod: {
    // Affine mod is non-negative for a positive divisor.
    Value rem = arith::RemSIOp::create(b, loc, *l, *r);
    Value shifted = arith::AddIOp::create(b, loc, rem, *r);
    return Value(arith::RemSIOp::create(b, loc, shifted, *r));
  }
  default:
    return failure();
  }
}

FailureOr<Value> ExprEmitter::emit(const ScalarExpr *e) {
  if (auto it = emitted.find(e); it != emitted.end())
    return it->second;
  Value result;
  switch (e->kind) {
  case ScalarExpr::Kind::Constant:
    result = arith::ConstantOp::create(b, loc, e->constant);
    break;
  case ScalarExpr::Kind::Index: {
    FailureOr<Value> v = emitAffine(e->index);
    if (failed(v))
      return failure();
    result = *v;
    break;
  }
  case ScalarExpr::Kind::Leaf: {
    if (boundTensor && e->tensor == boundTensor) {
      result = castTo(boundValue,
                      getElementTypeOrSelf(e->tensor.getType()));
      if (!result)
        return failure();
      break;
    }
    if (e->tensor == forbidden || !isAvailable(e->tensor))
      return failure();
    if (!isa<RankedTensorType>(e->tensor.getType())) {
      result = e->tensor; // a scalar defined above
      break;
    }
    if (!e->map)
      return failure();
    SmallVector<Value> indices;
    for (AffineExpr r : e->map.getResults()) {
      FailureOr<Value> v = emitAffine(r);
      if (failed(v))
        return failure();
      indices.push_back(*v);
    }
    result = tensor::ExtractOp::create(b, loc, e->tensor, indices);
    break;
  }
  case ScalarExpr::Kind::Op: {
    IRMapping mapping;
    for (auto [operand, x] : llvm::zip(e->op->getOperands(), e->operands)) {
      FailureOr<Value> v = emit(x);
      if (failed(v))
        return failure();
      mapping.map(operand, *v);
    }
    result = b.clone(*e->op, mapping)->getResult(0);
    break;
  }
  }
  emitted[e] = result;
  return result;
}

/// The block's index-space dims (batch..., i, j) from (b, h, i, j).
static SmallVector<Value> indexSpaceDims(OpBuilder &b, Location loc,
                                         const RegionIndexing &indexing,
                                         ValueRange bhij) {
  Value batch = bhij[0], head = bhij[1], i = bhij[2], j = bhij[3];
  switch (indexing.batch) {
  case RegionIndexing::Batch::BH:
    return {batch, head, i, j};
  case RegionIndexing::Batch::Unit:
    return {batch, i, j};
  case RegionIndexing::Batch::Flat: {
    Value heads = arith::ConstantIndexOp::create(b, loc, indexing.heads);
    Value flat = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, batch, heads), head);
    return {flat, i, j};
  }
  }
  return {};
}

LogicalResult mlir::fa::raise::buildScoreModRegion(
    OpBuilder &b, Location loc, Region &region, const RegionIndexing &indexing,
    const ScalarExpr *scores, const ScalarExpr *scaledScores, Value qk,
    const ScalarExpr *additive, function_ref<bool(Value)> isAvailable) {
  OpBuilder::InsertionGuard guard(b);
  Type index = b.getIndexType();
  Block *block = b.createBlock(&region, {},
                               {b.getF32Type(), index, index, index, index},
                               SmallVector<Location>(5, loc));
  Value score = block->getArgument(0);
  ExprEmitter emitter(b, loc,
                      indexSpaceDims(b, loc, indexing,
                                     block->getArguments().drop_front()),
                      isAvailable);
  if (scaledScores->kind == ScalarExpr::Kind::Leaf) {
    emitter.bindTensor(qk, score);
  } else {
    // The score argument is f32; the node it stands for may be narrower.
    Value cast = emitter.castTo(score, scaledScores->op->getResult(0).getType());
    if (!cast)
      return failure();
    emitter.bind(scaledScores, cast);
    emitter.forbidTensor(qk);
  }
  FailureOr<Value> t = emitter.emit(scores);
  if (failed(t))
    return failure();
  Value result = emitter.toF32(*t);
  if (!result)
    return failure();
  if (additive) {
    FailureOr<Value> m = emitter.emit(additive);
    if (failed(m))
      return failure();
    Value m32 = emitter.toF32(*m);
    if (!m32)
      return failure();
    result = arith::AddFOp::create(b, loc, result, m32);
  }
  fa::YieldOp::create(b, loc, result);
  return success();
}

LogicalResult mlir::fa::raise::buildMaskModRegion(
    OpBuilder &b, Location loc, Region &region, const RegionIndexing &indexing,
    ArrayRef<MaskCondition> conditions, function_ref<bool(Value)> isAvailable) {
  OpBuilder::InsertionGuard guard(b);
  Type index = b.getIndexType();
  Block *block = b.createBlock(&region, {}, {index, index, index, index},
                               SmallVector<Location>(4, loc));
  ExprEmitter emitter(b, loc,
                      indexSpaceDims(b, loc, indexing, block->getArguments()),
                      isAvailable);
  Value keep;
  for (const MaskCondition &c : conditions) {
    FailureOr<Value> v = emitter.emit(c.cond);
    if (failed(v))
      return failure();
    Value visible = *v;
    if (c.zero) {
      if (!isa<FloatType>(visible.getType()))
        return failure();
      Value zero = arith::ConstantOp::create(
          b, loc, b.getFloatAttr(visible.getType(), 0.0));
      visible = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                      visible, zero);
    } else if (!visible.getType().isInteger(1)) {
      return failure();
    } else if (c.hidesWhereTrue) {
      Value t = arith::ConstantIntOp::create(b, loc, 1, 1);
      visible = arith::XOrIOp::create(b, loc, visible, t);
    }
    keep = keep ? Value(arith::AndIOp::create(b, loc, keep, visible)) : visible;
  }
  if (!keep)
    keep = arith::ConstantIntOp::create(b, loc, 1, 1);
  fa::YieldOp::create(b, loc, keep);
  return success();
}
