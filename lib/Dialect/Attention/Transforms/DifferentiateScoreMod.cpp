//===- DifferentiateScoreMod.cpp - score_mod_grad from score_mod ----------===//
//
// Builds the score_mod_grad region of fa.attention_grad, (s, b, h, i, j) ->
// (t, dt/ds), from its score_mod by forward-mode differentiation: the body is
// cloned op by op and every op that depends on %s is followed by the ops of
// its tangent (the tangent of %s is 1, of everything else 0). A tangent that
// is zero is never materialized, and a factor 1 is folded away, so a score_mod
// that only adds a bias to %s gets the constant 1 as its derivative.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::fa {
#define GEN_PASS_DEF_FADIFFERENTIATESCOREMODPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
/// The clone of one score_mod body and the tangents of its values. Tangents
/// are keyed by the cloned values; a value without one has tangent 0 (a null
/// Value below stands for that 0).
struct TangentBuilder {
  RewriterBase &b;
  Location loc;
  IRMapping primal; // score_mod's values -> their clones
  DenseMap<Value, Value> tangents;

  Value tangentOf(Value clone) { return tangents.lookup(clone); }

  Value constant(Type type, double v) {
    return arith::ConstantOp::create(b, loc, FloatAttr::get(type, v));
  }
  /// The tangent `t`, or a 0 of `type` where it is null (for a select).
  Value orZero(Value t, Type type) { return t ? t : constant(type, 0.0); }

  // Arithmetic on tangents that emits nothing for a 0 operand and folds a
  // constant factor 1.
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x) : x; }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    return x ? Value(arith::SubFOp::create(b, loc, x, y)) : neg(y);
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    if (matchPattern(x, m_OneFloat()))
      return y;
    if (matchPattern(y, m_OneFloat()))
      return x;
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    return x ? Value(arith::DivFOp::create(b, loc, x, y)) : x;
  }

  /// Whether `op` (of score_mod) reads a value with a tangent, through an
  /// operand or from inside one of its regions.
  bool dependsOnSeed(Operation *op);
  /// The tangent of the single result of `clone` (null: 0), or failure when
  /// there is no rule for the op.
  FailureOr<Value> differentiate(Operation *clone);
  /// Clones `op` after the clones so far and emits its tangent.
  Operation *cloneWithTangent(Operation *op, StringRef seedName);
  /// Emits the tangent of `clone`, the clone of `op`, after the ops so far
  /// (an error naming `seedName`, what is differentiated against, where
  /// there is no rule).
  LogicalResult addTangent(Operation *op, Operation *clone, StringRef seedName);
};
} // namespace

bool TangentBuilder::dependsOnSeed(Operation *op) {
  auto hasTangent = [&](Value v) {
    return tangents.count(primal.lookupOrDefault(v)) != 0;
  };
  if (llvm::any_of(op->getOperands(), hasTangent))
    return true;
  // Values an op inside `op`'s regions reads from outside `op`.
  bool nested = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentBlock()->getParentOp()) && hasTangent(v))
        nested = true;
  });
  return nested;
}

/// d/dx of the unary math functions, as a factor of the argument's tangent:
/// `x` the argument and `r` the result (clones). Null when `op` is none of
/// them.
static Value unaryDerivative(TangentBuilder &tb, Operation *op, Value x,
                             Value r) {
  OpBuilder &b = tb.b;
  Location loc = tb.loc;
  Type type = r.getType();
  auto c = [&](double v) { return tb.constant(type, v); };
  auto mulf = [&](Value p, Value q) { return tb.mul(p, q); };
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](math::TanhOp) {
        return arith::SubFOp::create(b, loc, c(1.0), mulf(r, r));
      })
      .Case([&](math::ExpOp) { return r; })
      .Case([&](math::ExpM1Op) { return arith::AddFOp::create(b, loc, r, c(1.0)); })
      // d erf(x) = 2 / sqrt(pi) exp(-x^2).
      .Case([&](math::ErfOp) {
        Value e = math::ExpOp::create(b, loc,
                                      arith::NegFOp::create(b, loc, mulf(x, x)));
        return mulf(c(M_2_SQRTPI), e);
      })
      .Case([&](math::Exp2Op) { return mulf(r, c(M_LN2)); })
      .Case([&](math::LogOp) { return arith::DivFOp::create(b, loc, c(1.0), x); })
      .Case([&](math::Log2Op) {
        return arith::DivFOp::create(b, loc, c(1.0), mulf(x, c(M_LN2)));
      })
      .Case([&](math::Log1pOp) {
        return arith::DivFOp::create(b, loc, c(1.0),
                                     arith::AddFOp::create(b, loc, c(1.0), x));
      })
      .Case([&](math::SqrtOp) {
        return arith::DivFOp::create(b, loc, c(0.5), r);
      })
      // d(x^-1/2) = -1/2 x^-3/2 = -1/2 r^3.
      .Case([&](math::RsqrtOp) { return mulf(c(-0.5), mulf(r, mulf(r, r))); })
      .Case([&](math::AbsFOp) {
        return math::CopySignOp::create(b, loc, c(1.0), x);
      })
      .Case([&](math::SinOp) { return math::CosOp::create(b, loc, x); })
      .Case([&](math::CosOp) {
        return arith::NegFOp::create(b, loc, math::SinOp::create(b, loc, x));
      })
      .Default([](Operation *) { return Value(); });
}

FailureOr<Value> TangentBuilder::differentiate(Operation *clone) {
  if (clone->getNumResults() != 1)
    return failure();
  Value r = clone->getResult(0);
  auto d = [&](unsigned i) { return tangentOf(clone->getOperand(i)); };
  auto x = [&](unsigned i) { return clone->getOperand(i); };
  // The tangent of the operand the op returned (max/min): a tie takes the
  // first one's.
  auto chosen = [&]() -> Value {
    Value isFirst = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          r, x(0));
    return arith::SelectOp::create(b, loc, isFirst, orZero(d(0), r.getType()),
                                   orZero(d(1), r.getType()));
  };
  return TypeSwitch<Operation *, FailureOr<Value>>(clone)
      .Case([&](arith::AddFOp) { return add(d(0), d(1)); })
      .Case([&](arith::SubFOp) { return sub(d(0), d(1)); })
      .Case([&](arith::MulFOp) {
        return add(mul(d(0), x(1)), mul(x(0), d(1)));
      })
      // d(a / b) = (da - r db) / b.
      .Case([&](arith::DivFOp) { return div(sub(d(0), mul(r, d(1))), x(1)); })
      .Case([&](arith::NegFOp) { return neg(d(0)); })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp>([&](Operation *) { return chosen(); })
      .Case([&](arith::SelectOp) -> Value {
        if (!d(1) && !d(2))
          return Value(); // only the condition depends on the score
        return arith::SelectOp::create(b, loc, x(0), orZero(d(1), r.getType()),
                                       orZero(d(2), r.getType()));
      })
      .Case([&](arith::ExtFOp) -> Value {
        return arith::ExtFOp::create(b, loc, r.getType(), d(0));
      })
      .Case([&](arith::TruncFOp) -> Value {
        return arith::TruncFOp::create(b, loc, r.getType(), d(0));
      })
      .Case([&](math::FmaOp) {
        return add(add(mul(d(0), x(1)), mul(x(0), d(1))), d(2));
      })
      // d(a^b) = b a^(b-1) da + r ln(a) db.
      .Case([&](math::PowFOp) -> Value {
        Value da, db;
        if (d(0)) {
          Value one = constant(r.getType(), 1.0);
          Value pow = math::PowFOp::create(
              b, loc, x(0), arith::SubFOp::create(b, loc, x(1), one));
          da = mul(mul(x(1), pow), d(0));
        }
        if (d(1))
          db = mul(mul(r, math::LogOp::create(b, loc, x(0))), d(1));
        return add(da, db);
      })
      // Piecewise constant: tangent 0 (where it exists).
      .Case<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
            math::TruncOp>([&](Operation *) { return Value(); })
      .Default([&](Operation *op) -> FailureOr<Value> {
        if (op->getNumOperands() != 1)
          return failure();
        Value factor = unaryDerivative(*this, op, x(0), r);
        if (!factor)
          return failure();
        return mul(factor, d(0));
      });
}

Operation *TangentBuilder::cloneWithTangent(Operation *op, StringRef seedName) {
  Operation *clone = b.clone(*op, primal);
  return succeeded(addTangent(op, clone, seedName)) ? clone : nullptr;
}

LogicalResult TangentBuilder::addTangent(Operation *op, Operation *clone,
                                         StringRef seedName) {
  bool dependent = dependsOnSeed(op);
  // Integer, index and i1 values (comparisons, positions, fptosi) are
  // piecewise constant in the score: they carry no tangent.
  bool floatResult = llvm::any_of(clone->getResultTypes(), [](Type t) {
    return isa<FloatType>(t);
  });
  if (!dependent || !floatResult)
    return success();
  FailureOr<Value> tangent = op->getNumRegions() != 0
                                 ? FailureOr<Value>(failure())
                                 : differentiate(clone);
  if (failed(tangent))
    return op->emitError()
           << "fa-differentiate-score-mod: cannot differentiate '"
           << op->getName() << "' with respect to " << seedName
           << (op->getNumRegions() ? " (an op with regions)" : "")
           << "; write the score_mod_grad region by hand";
  if (*tangent)
    tangents[clone->getResult(0)] = *tangent;
  return success();
}

LogicalResult mlir::fa::buildScoreModGrad(RewriterBase &rewriter,
                                          AttentionGradOp op) {
  Region *scoreMod = op.getScoreMod();
  if (!scoreMod || op.getScoreModGrad())
    return success();
  OpBuilder::InsertionGuard guard(rewriter);
  Block &source = scoreMod->front();
  Region &target = op.getModifiers()[2];
  SmallVector<Location> argLocs(source.getNumArguments(), op.getLoc());
  Block *block = rewriter.createBlock(&target, target.end(),
                                      source.getArgumentTypes(), argLocs);
  auto fail = [&]() {
    rewriter.eraseBlock(block);
    return failure();
  };
  TangentBuilder tb{rewriter, op.getLoc(), IRMapping(), DenseMap<Value, Value>()};
  tb.primal.map(source.getArguments(), block->getArguments());
  // The seed: ds/ds = 1.
  Value score = block->getArgument(0);
  tb.tangents[score] = tb.constant(score.getType(), 1.0);
  SmallVector<std::pair<Operation *, Operation *>> clones;
  for (Operation &inner : source.without_terminator()) {
    Operation *clone = tb.cloneWithTangent(&inner, "the score");
    if (!clone)
      return fail();
    clones.push_back({&inner, clone});
  }
  auto yield = cast<YieldOp>(source.getTerminator());
  Value t = tb.primal.lookupOrDefault(yield.getValues().front());
  SmallVector<Value> yielded = {t, tb.orZero(tb.tangentOf(t), t.getType())};

  // The capture-gradient terms: dt / d(element) of every element of a
  // grad_captures tensor that score_mod extracts, by one more forward sweep
  // over the clones seeded at that element (the tangents of the ops that do
  // not depend on it are never formed). Terms whose t does not depend on
  // the element (a read only compared, say) are dropped.
  SmallVector<int64_t> terms;
  for (auto [pos, capture] : llvm::enumerate(op.getGradCaptures())) {
    for (OpOperand &use : capture.getUses()) {
      Operation *user = use.getOwner();
      if (!scoreMod->isAncestor(user->getParentRegion()) ||
          isa<tensor::DimOp>(user)) // a size: no gradient flows through it
        continue;
      if (!isa<tensor::ExtractOp>(user)) {
        user->emitError() << "fa-differentiate-score-mod: a grad_captures "
                             "tensor is read by '"
                          << user->getName()
                          << "'; only tensor.extract reads are differentiated";
        return fail();
      }
      if (user->getBlock() != &source) {
        user->emitError() << "fa-differentiate-score-mod: a grad_captures "
                             "tensor is read inside an op with regions; "
                             "read it at score_mod's top level";
        return fail();
      }
    }
    for (auto [inner, clone] : clones) {
      auto extract = dyn_cast<tensor::ExtractOp>(inner);
      if (!extract || extract.getTensor() != capture)
        continue;
      TangentBuilder seeded{rewriter, op.getLoc(), tb.primal,
                            DenseMap<Value, Value>()};
      Value element = clone->getResult(0);
      seeded.tangents[element] = seeded.constant(element.getType(), 1.0);
      for (auto [other, otherClone] : clones)
        if (other != inner &&
            failed(seeded.addTangent(other, otherClone,
                                     "a captured tensor's element")))
          return fail();
      Value coefficient = seeded.tangentOf(t);
      if (!coefficient)
        continue;
      terms.push_back(pos);
      yielded.push_back(coefficient);
      for (Value index : extract.getIndices())
        yielded.push_back(tb.primal.lookupOrDefault(index));
    }
  }
  YieldOp::create(rewriter, yield.getLoc(), yielded);
  if (!op.getGradCaptures().empty())
    rewriter.modifyOpInPlace(
        op, [&]() { op.setCaptureGradTerms(ArrayRef<int64_t>(terms)); });
  return success();
}

namespace {
struct FADifferentiateScoreModPass
    : fa::impl::FADifferentiateScoreModPassBase<FADifferentiateScoreModPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(rewriteEach<AttentionGradOp>(
            getOperation(),
            [](RewriterBase &r, AttentionGradOp op) {
              return buildScoreModGrad(r, op);
            })))
      signalPassFailure();
  }
};
} // namespace
