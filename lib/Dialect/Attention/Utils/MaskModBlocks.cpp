//===- MaskModBlocks.cpp - which blocks a mask_mod hides ------------------===//
//
// Classifies a block of query rows x keys under a mask_mod region as empty
// (no key visible to any row), full (every key visible to every row) or
// partial, as i1 values: by interval evaluation of the region when every op
// in it can be bounded (index arithmetic, comparisons, boolean logic), else
// by evaluating the region at every (row, key) of the block.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fa;

namespace {
/// An index value known to lie in [lo, hi].
struct IndexBounds {
  Value lo, hi;
};
/// What an i1 value may be over the block.
struct TruthBounds {
  Value mayBeTrue, mayBeFalse;
};

/// Interval evaluation of a mask_mod body, emitted as IR at the builder's
/// insertion point. The arithmetic assumes no index overflow (|values| <
/// 2^62, as the window arithmetic does).
class MaskModBounder {
public:
  MaskModBounder(OpBuilder &b, Location loc, const MaskModBoundHooks &hooks)
      : b(b), loc(loc), hooks(hooks) {}

  FailureOr<MaskModBlockVisibility> run(Region &maskMod,
                                        ArrayRef<IndexBounds> args) {
    region = &maskMod;
    Block &block = maskMod.front();
    for (auto [arg, bounds] : llvm::zip(block.getArguments(), args))
      indices[arg] = bounds;
    for (Operation &op : block.without_terminator())
      if (failed(visit(op)))
        return failure();
    Value kept = cast<YieldOp>(block.getTerminator()).getValues().front();
    std::optional<TruthBounds> t = truth(kept);
    if (!t)
      return failure();
    return MaskModBlockVisibility{t->mayBeTrue, negate(t->mayBeFalse)};
  }

private:
  OpBuilder &b;
  Location loc;
  const MaskModBoundHooks &hooks;
  Region *region = nullptr;
  DenseMap<Value, IndexBounds> indices;
  DenseMap<Value, TruthBounds> truths;

  Value boolean(bool v) { return arith::ConstantIntOp::create(b, loc, v, 1); }
  Value negate(Value v) {
    return arith::XOrIOp::create(b, loc, v, boolean(true));
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value less(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value lessEq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y);
  }

  /// A value captured from above the region is one value over the block.
  bool isCaptured(Value v) {
    return !region->isAncestor(v.getParentRegion());
  }
  /// A captured value as the caller wants it used (hooks.captured).
  Value captured(Value v) {
    return hooks.captured ? hooks.captured(v) : v;
  }
  std::optional<IndexBounds> index(Value v) {
    if (isCaptured(v) && v.getType().isIndex()) {
      Value c = captured(v);
      if (!c)
        return std::nullopt;
      return IndexBounds{c, c};
    }
    auto it = indices.find(v);
    return it == indices.end() ? std::nullopt
                               : std::optional<IndexBounds>(it->second);
  }
  std::optional<TruthBounds> truth(Value v) {
    if (isCaptured(v) && v.getType().isInteger(1)) {
      Value c = captured(v);
      if (!c)
        return std::nullopt;
      return TruthBounds{c, negate(c)};
    }
    auto it = truths.find(v);
    return it == truths.end() ? std::nullopt
                              : std::optional<TruthBounds>(it->second);
  }

  LogicalResult visit(Operation &op);
  LogicalResult visitCmp(arith::CmpIOp op);
  LogicalResult visitSelect(arith::SelectOp op);
  template <typename OpT> LogicalResult monotone(OpT op);
  LogicalResult visitMul(arith::MulIOp op);
  LogicalResult visitLogic(Operation &op);
};
} // namespace

/// [f(lo), f(hi)] for an op non-decreasing in both operands (add, min, max)
/// or, with a positive constant divisor, in its dividend.
template <typename OpT> LogicalResult MaskModBounder::monotone(OpT op) {
  std::optional<IndexBounds> x = index(op.getLhs()), y = index(op.getRhs());
  if (!x || !y)
    return failure();
  indices[op.getResult()] = {OpT::create(b, loc, x->lo, y->lo),
                             OpT::create(b, loc, x->hi, y->hi)};
  return success();
}

LogicalResult MaskModBounder::visitMul(arith::MulIOp op) {
  APInt cst;
  Value other = op.getRhs();
  if (!matchPattern(op.getLhs(), m_ConstantInt(&cst))) {
    other = op.getLhs();
    if (!matchPattern(op.getRhs(), m_ConstantInt(&cst)))
      return failure(); // a product of two ranges: not bounded here
  }
  std::optional<IndexBounds> x = index(other);
  if (!x)
    return failure();
  Value c = arith::ConstantIndexOp::create(b, loc, cst.getSExtValue());
  Value lo = arith::MulIOp::create(b, loc, x->lo, c);
  Value hi = arith::MulIOp::create(b, loc, x->hi, c);
  indices[op.getResult()] = cst.isNegative() ? IndexBounds{hi, lo}
                                             : IndexBounds{lo, hi};
  return success();
}

LogicalResult MaskModBounder::visitCmp(arith::CmpIOp op) {
  std::optional<IndexBounds> x = index(op.getLhs()), y = index(op.getRhs());
  if (!x || !y)
    return failure();
  using P = arith::CmpIPredicate;
  P predicate = op.getPredicate();
  if (predicate == P::sgt || predicate == P::sge) { // y < x, y <= x
    std::swap(x, y);
    predicate = predicate == P::sgt ? P::slt : P::sle;
  }
  TruthBounds t;
  switch (predicate) {
  case P::slt: // x < y somewhere iff x.lo < y.hi; x >= y iff y.lo <= x.hi
    t = {less(x->lo, y->hi), lessEq(y->lo, x->hi)};
    break;
  case P::sle:
    t = {lessEq(x->lo, y->hi), less(y->lo, x->hi)};
    break;
  case P::eq:
  case P::ne: {
    // Equal somewhere iff the ranges overlap; unequal somewhere unless both
    // are the same single value.
    Value overlap = both(lessEq(x->lo, y->hi), lessEq(y->lo, x->hi));
    Value single = both(both(lessEq(x->hi, x->lo), lessEq(y->hi, y->lo)),
                        lessEq(x->lo, y->lo));
    single = both(single, lessEq(y->lo, x->lo));
    Value differs = negate(single);
    t = predicate == P::eq ? TruthBounds{overlap, differs}
                                   : TruthBounds{differs, overlap};
    break;
  }
  default: // unsigned: the operands may be negative
    return failure();
  }
  truths[op.getResult()] = t;
  return success();
}

LogicalResult MaskModBounder::visitLogic(Operation &op) {
  std::optional<TruthBounds> x = truth(op.getOperand(0)),
                             y = truth(op.getOperand(1));
  if (!x || !y)
    return failure();
  TruthBounds t;
  if (isa<arith::AndIOp>(op))
    t = {both(x->mayBeTrue, y->mayBeTrue), either(x->mayBeFalse, y->mayBeFalse)};
  else if (isa<arith::OrIOp>(op))
    t = {either(x->mayBeTrue, y->mayBeTrue), both(x->mayBeFalse, y->mayBeFalse)};
  else // xor: true where exactly one is
    t = {either(both(x->mayBeTrue, y->mayBeFalse),
                both(x->mayBeFalse, y->mayBeTrue)),
         either(both(x->mayBeTrue, y->mayBeTrue),
                both(x->mayBeFalse, y->mayBeFalse))};
  truths[op.getResult(0)] = t;
  return success();
}

LogicalResult MaskModBounder::visitSelect(arith::SelectOp op) {
  std::optional<TruthBounds> c = truth(op.getCondition());
  if (!c)
    return failure();
  // Either branch where the condition may take it.
  auto pick = [&](Value onlyTrue, Value onlyFalse, Value bothWays) -> Value {
    Value ifTrue = arith::SelectOp::create(b, loc, c->mayBeFalse, bothWays,
                                           onlyTrue);
    return arith::SelectOp::create(b, loc, c->mayBeTrue, ifTrue, onlyFalse);
  };
  if (std::optional<TruthBounds> x = truth(op.getTrueValue())) {
    std::optional<TruthBounds> y = truth(op.getFalseValue());
    if (!y)
      return failure();
    truths[op.getResult()] = {
        pick(x->mayBeTrue, y->mayBeTrue, either(x->mayBeTrue, y->mayBeTrue)),
        pick(x->mayBeFalse, y->mayBeFalse,
             either(x->mayBeFalse, y->mayBeFalse))};
    return success();
  }
  std::optional<IndexBounds> x = index(op.getTrueValue()),
                             y = index(op.getFalseValue());
  if (!x || !y)
    return failure();
  indices[op.getResult()] = {
      pick(x->lo, y->lo, arith::MinSIOp::create(b, loc, x->lo, y->lo)),
      pick(x->hi, y->hi, arith::MaxSIOp::create(b, loc, x->hi, y->hi))};
  return success();
}

LogicalResult MaskModBounder::visit(Operation &op) {
  if (op.getNumResults() != 1)
    return failure();
  Type type = op.getResult(0).getType();
  bool isBool = type.isInteger(1);
  // Integers other than i1 are bounded as index values (a cast between them
  // keeps the value: positions and the tensors' values are far from the
  // limits of the narrower type).
  bool isIndex = type.isSignlessIntOrIndex() && !isBool;
  if (!isIndex && !isBool)
    return failure();
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op) && isIndex) {
    std::optional<IndexBounds> x = index(op.getOperand(0));
    if (!x)
      return failure();
    indices[op.getResult(0)] = *x;
    return success();
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    if (!hooks.extract || extract.getIndices().size() != 1 || isBool)
      return failure();
    std::optional<IndexBounds> x = index(extract.getIndices()[0]);
    if (!x)
      return failure();
    auto [lo, hi] = hooks.extract(extract, x->lo, x->hi);
    if (!lo)
      return failure();
    indices[extract.getResult()] = {lo, hi};
    return success();
  }
  return TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](arith::ConstantOp cst) -> LogicalResult {
        auto value = dyn_cast<IntegerAttr>(cst.getValue());
        if (!value)
          return failure();
        if (isBool) {
          bool v = value.getValue().getBoolValue();
          truths[cst] = {boolean(v), boolean(!v)};
        } else {
          Value c = arith::ConstantIndexOp::create(
              b, loc, value.getValue().getSExtValue());
          indices[cst] = {c, c};
        }
        return success();
      })
      .Case([&](arith::AddIOp add) { return monotone(add); })
      .Case([&](arith::MinSIOp min) { return monotone(min); })
      .Case([&](arith::MaxSIOp max) { return monotone(max); })
      .Case([&](arith::SubIOp sub) -> LogicalResult {
        std::optional<IndexBounds> x = index(sub.getLhs()),
                                   y = index(sub.getRhs());
        if (!x || !y)
          return failure();
        indices[sub] = {arith::SubIOp::create(b, loc, x->lo, y->hi),
                        arith::SubIOp::create(b, loc, x->hi, y->lo)};
        return success();
      })
      .Case([&](arith::MulIOp mul) { return visitMul(mul); })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(
          [&](auto div) -> LogicalResult {
            APInt cst;
            if (!matchPattern(div.getRhs(), m_ConstantInt(&cst)) ||
                !cst.isStrictlyPositive())
              return failure();
            return monotone(div);
          })
      .Case([&](arith::CmpIOp cmp) -> LogicalResult {
        return visitCmp(cmp);
      })
      .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(
          [&](Operation *logic) -> LogicalResult {
            return isBool ? visitLogic(*logic) : failure();
          })
      .Case([&](arith::SelectOp select) { return visitSelect(select); })
      .Default([](Operation *) { return failure(); });
}

FailureOr<MaskModBlockVisibility> mlir::fa::boundMaskModOverBlock(
    OpBuilder &b, Location loc, Region &maskMod, Value batch, Value head,
    Value rowBegin, Value rowEnd, Value colBegin, Value colEnd,
    const MaskModBoundHooks &hooks) {
  // The body is emitted into a scratch block first: nothing is left behind
  // when some op cannot be bounded.
  OpBuilder::InsertionGuard guard(b);
  Block *scratch = new Block();
  std::unique_ptr<Block> owner(scratch);
  Block *target = b.getInsertionBlock();
  Block::iterator point = b.getInsertionPoint();
  b.setInsertionPointToStart(scratch);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<IndexBounds> args = {
      {batch, batch},
      {head, head},
      {rowBegin, arith::SubIOp::create(b, loc, rowEnd, one)},
      {colBegin, arith::SubIOp::create(b, loc, colEnd, one)}};
  FailureOr<MaskModBlockVisibility> result =
      MaskModBounder(b, loc, hooks).run(maskMod, args);
  if (failed(result))
    return failure(); // the scratch block and its ops are destroyed
  target->getOperations().splice(point, scratch->getOperations());
  return result;
}

MaskModBlockVisibility mlir::fa::evaluateMaskModOverBlock(
    OpBuilder &b, Location loc, Region &maskMod, Value batch, Value head,
    Value rowBegin, Value rowEnd, Value colBegin, Value colEnd) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value init[] = {arith::ConstantIntOp::create(b, loc, 0, 1),
                  arith::ConstantIntOp::create(b, loc, 1, 1)};
  // (any, all) over the rows, each row over the keys.
  auto rows = scf::ForOp::create(
      b, loc, rowBegin, rowEnd, one, init,
      [&](OpBuilder &rb, Location l, Value row, ValueRange acc) {
        auto cols = scf::ForOp::create(
            rb, l, colBegin, colEnd, one, acc,
            [&](OpBuilder &cb, Location cl, Value col, ValueRange inner) {
              IRMapping noCaptures;
              Value keep = inlineMaskMod(cb, cl, maskMod, batch, head, row,
                                         col, noCaptures);
              scf::YieldOp::create(
                  cb, cl,
                  ValueRange{arith::OrIOp::create(cb, cl, inner[0], keep),
                             arith::AndIOp::create(cb, cl, inner[1], keep)});
            });
        scf::YieldOp::create(rb, l, cols.getResults());
      });
  return {rows.getResult(0), rows.getResult(1)};
}

MaskModBlockVisibility mlir::fa::classifyMaskModBlock(
    OpBuilder &b, Location loc, Region &maskMod, Value batch, Value head,
    Value rowBegin, Value rowEnd, Value colBegin, Value colEnd) {
  FailureOr<MaskModBlockVisibility> bounded = boundMaskModOverBlock(
      b, loc, maskMod, batch, head, rowBegin, rowEnd, colBegin, colEnd);
  if (succeeded(bounded))
    return *bounded;
  return evaluateMaskModOverBlock(b, loc, maskMod, batch, head, rowBegin,
                                  rowEnd, colBegin, colEnd);
}
