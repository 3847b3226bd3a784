//===- AttentionUtils.cpp - scalar pieces of the attention math -----------===//
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  // The key capacity: key dim 2 is the page size when paged.
  shape.keyLength = op.isPaged() ? op.getKeyCapacity(b, loc)
                                 : indexSize(b, loc, op.getKey(), 2);
  // The op's diagonal(...) override (set by row tiling), else bottom-right
  // alignment.
  shape.diagonal = op.getDiagonal()
                       ? op.getDiagonal()
                       : Value(arith::SubIOp::create(b, loc, shape.keyLength,
                                                     shape.queryLength));
  return shape;
}

PackedSequence mlir::fa::getPackedSequence(OpBuilder &b, Location loc,
                                           Value offsets, Value seq,
                                           Value total) {
  auto read = [&](Value i) -> Value {
    Value v = tensor::ExtractOp::create(b, loc, offsets, i);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value start = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, read(seq), zero), total);
  Value end = arith::MinSIOp::create(
      b, loc,
      arith::MaxSIOp::create(
          b, loc, read(arith::AddIOp::create(b, loc, seq, one)), start),
      total);
  return {start, arith::SubIOp::create(b, loc, end, start)};
}

void mlir::fa::cloneModifiersForSequence(OpBuilder &b, Location loc,
                                         MutableArrayRef<Region> from,
                                         MutableArrayRef<Region> to,
                                         ArrayRef<unsigned> batchArgs,
                                         Value seq) {
  for (auto [source, dest, batchArg] : llvm::zip(from, to, batchArgs)) {
    if (source.empty())
      continue;
    OpBuilder::InsertionGuard guard(b);
    b.cloneRegionBefore(source, dest, dest.end());
    BlockArgument arg = dest.front().getArgument(batchArg);
    b.setInsertionPointToStart(&dest.front());
    auto shifted = arith::AddIOp::create(b, loc, arg, seq);
    arg.replaceAllUsesExcept(shifted, shifted);
  }
}

Value mlir::fa::getPackedSequenceCount(OpBuilder &b, Location loc,
                                       Value offsets) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = arith::SubIOp::create(
      b, loc, tensor::DimOp::create(b, loc, offsets, 0), one);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MaxSIOp::create(b, loc, count, zero);
}

Value mlir::fa::createFilledF32Tensor(OpBuilder &b, Location loc,
                                     ArrayRef<OpFoldResult> sizes,
                                     float value) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  Value cst = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  return linalg::FillOp::create(b, loc, cst, empty).getResult(0);
}

AffineMap mlir::fa::getProjectionMap(MLIRContext *ctx, unsigned numDims,
                                     ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

namespace {
/// The cf.asserts of a lowering for the dims the verifier could not compare
/// (one of them dynamic); the messages start with the op's name.
struct DynamicShapeChecker {
  OpBuilder &b;
  Location loc;
  StringRef opName;

  static int64_t dimOf(Value tensor, int64_t dim) {
    return cast<RankedTensorType>(tensor.getType()).getDimSize(dim);
  }
  void assertThat(Value cond, const Twine &message) {
    cf::AssertOp::create(b, loc, cond, (opName + ": " + message).str());
  }
  /// lhs[lhsDim] == rhs[rhsDim] when either is dynamic.
  void checkEqual(Value lhs, int64_t lhsDim, Value rhs, int64_t rhsDim,
                  const Twine &message) {
    if (!ShapedType::isDynamic(dimOf(lhs, lhsDim)) &&
        !ShapedType::isDynamic(dimOf(rhs, rhsDim)))
      return; // checked by the verifier
    assertThat(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     indexSize(b, loc, lhs, lhsDim),
                                     indexSize(b, loc, rhs, rhsDim)),
               message);
  }
  /// Hkv > 0 and Hq % Hkv == 0 when either head count is dynamic.
  void checkHeadRatio(Value q, Value k, Value hq, Value hkv) {
    if (!ShapedType::isDynamic(dimOf(q, 1)) &&
        !ShapedType::isDynamic(dimOf(k, 1)))
      return;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    assertThat(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, hkv,
                                     zero),
               "key/value head count must be positive");
    // hkv is nonzero on this path; select 1 otherwise so remui is defined.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value divisor = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, hkv, zero), one,
        hkv);
    assertThat(arith::CmpIOp::create(
                   b, loc, arith::CmpIPredicate::eq,
                   arith::RemUIOp::create(b, loc, hq, divisor), zero),
               "query head count must be a multiple of the key/value head "
               "count");
  }
  /// The static dims of `result` among the first `numDims` against the
  /// dynamic ones of `like` (the operand whose sizes the lowering builds it
  /// from).
  void checkStaticResultDims(Value result, Value like, int64_t numDims,
                             const Twine &likeName) {
    for (int64_t d = 0; d < numDims; ++d)
      if (!ShapedType::isDynamic(dimOf(result, d)) &&
          ShapedType::isDynamic(dimOf(like, d)))
        assertThat(
            arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, indexSize(b, loc, like, d),
                arith::ConstantIndexOp::create(b, loc, dimOf(result, d))),
            likeName + " dim " + Twine(d) +
                " differs from the static result type's");
  }
  /// The mask [Bm, Hm, Nm, Nk] against q: its rows, then its columns
  /// (`checkColumns`), then its dynamic batch and head dims.
  void checkMask(Value mask, Value q, function_ref<void()> checkColumns) {
    // A dynamic leading mask dim is read as full (not broadcast); a static 1
    // broadcasts.
    if (dimOf(mask, 2) != 1)
      checkEqual(mask, 2, q, 2, "mask rows differ from the query length");
    checkColumns();
    for (int64_t d = 0; d < 2; ++d)
      if (ShapedType::isDynamic(dimOf(mask, d)))
        checkEqual(mask, d, q, d,
                   "dynamic mask dim " + Twine(d) +
                       " must equal the query's (broadcast needs a static 1)");
  }
};
} // namespace

void mlir::fa::emitDynamicShapeChecks(OpBuilder &b, Location loc,
                                      AttentionOp op,
                                      const AttentionShape &shape) {
  DynamicShapeChecker check{b, loc, "fa.attention"};
  auto dimOf = DynamicShapeChecker::dimOf;
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  if (op.isPaged()) {
    // Pools [P, Hkv, S, D]: dim 0 is no batch. S is static (verifier).
    check.checkEqual(v, 0, k, 0, "value page count differs from the key's");
    if (ShapedType::isDynamic(dimOf(k, 0)))
      check.assertThat(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                indexSize(b, loc, k, 0),
                                arith::ConstantIndexOp::create(b, loc, 0)),
          "the page pool must hold at least one page");
    check.checkEqual(op.getPages(), 0, q, 0,
                     "page table batch size differs from the query's");
  } else {
    check.checkEqual(k, 0, q, 0, "key batch size differs from the query's");
    check.checkEqual(v, 0, q, 0, "value batch size differs from the query's");
  }
  check.checkEqual(v, 1, k, 1, "value head count differs from the key's");
  check.checkEqual(v, 2, k, 2, "value length differs from the key's");
  if (op.hasKVLens())
    check.checkEqual(op.getKvLens(), 0, q, 0,
                     "kv_lens size differs from the query's batch size");
  check.checkHeadRatio(q, k, shape.queryHeads, shape.kvHeads);
  // Results whose dims are static while the query's are not (B, Hq, Nq: the
  // leading dims of out, lse).
  for (Value result : op->getResults())
    check.checkStaticResultDims(result, q, 3, "query");
  if (Value mask = op.getMask())
    check.checkMask(mask, q, [&] {
      if (!op.isPaged()) {
        check.checkEqual(mask, 3, k, 2,
                         "mask columns differ from the key length");
      } else if (ShapedType::isDynamic(dimOf(mask, 3)) ||
                 ShapedType::isDynamic(op.getStaticKeyCapacity())) {
        check.assertThat(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                               indexSize(b, loc, mask, 3),
                                               shape.keyLength),
                         "mask columns differ from the key capacity M * S");
      }
    });
}

void mlir::fa::emitDynamicShapeChecks(OpBuilder &b, Location loc,
                                      AttentionGradOp op) {
  DynamicShapeChecker check{b, loc, "fa.attention_grad"};
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(), o = op.getOut(),
        lse = op.getLse(), dO = op.getGradOut();
  check.checkEqual(k, 0, q, 0, "key batch size differs from the query's");
  check.checkEqual(v, 0, q, 0, "value batch size differs from the query's");
  check.checkEqual(v, 1, k, 1, "value head count differs from the key's");
  check.checkEqual(v, 2, k, 2, "value length differs from the key's");
  check.checkHeadRatio(q, k, indexSize(b, loc, q, 1), indexSize(b, loc, k, 1));
  // out, lse and do have the query's batch, heads and rows.
  for (auto [t, name] :
       {std::pair(o, "out"), std::pair(lse, "lse"), std::pair(dO, "do")})
    for (int64_t d = 0; d < 3; ++d)
      check.checkEqual(t, d, q, d,
                       Twine(name) + " dim " + Twine(d) +
                           " differs from the query's");
  // dq is built with q's sizes, dk and dv with k's and v's.
  check.checkStaticResultDims(op.getGradQuery(), q, 3, "query");
  check.checkStaticResultDims(op.getGradKey(), k, 3, "key");
  check.checkStaticResultDims(op.getGradValue(), v, 3, "value");
  if (Value mask = op.getMask())
    check.checkMask(mask, q, [&] {
      check.checkEqual(mask, 3, k, 2,
                       "mask columns differ from the key length");
    });
}

void mlir::fa::emitGradShapeChecks(OpBuilder &b, AttentionGradOp op) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  emitDynamicShapeChecks(b, op.getLoc(), op);
}

Value mlir::fa::getKVHead(OpBuilder &b, Location loc, Value queryHead,
                          const AttentionShape &shape) {
  return arith::DivUIOp::create(b, loc, queryHead, shape.headRatio);
}

int64_t mlir::fa::getDescaleRank(AttentionOp op) {
  Value qd = op.getQDescale();
  if (!qd)
    return 0;
  auto tensor = dyn_cast<RankedTensorType>(qd.getType());
  return tensor ? tensor.getRank() : 0;
}

Value mlir::fa::extractDescale(OpBuilder &b, Location loc, Value descale,
                               Value batch, Value head, Value row,
                               int64_t block) {
  auto tensor = dyn_cast<RankedTensorType>(descale.getType());
  if (!tensor)
    return descale;
  SmallVector<Value> indices = {batch, head};
  if (tensor.getRank() == 3)
    indices.push_back(arith::DivUIOp::create(
        b, loc, row, arith::ConstantIndexOp::create(b, loc, block)));
  return tensor::ExtractOp::create(b, loc, descale, indices);
}

bool mlir::fa::canFoldLog2eIntoScale(AttentionOp op) {
  return !op.getSoftcap() && !(op.getMask() && !op.isBooleanMask()) &&
         !op.getScoreMod();
}

Value mlir::fa::getScoreScale(OpBuilder &b, Location loc, AttentionOp op,
                              bool log2e) {
  double scale = op.getEffectiveScale();
  if (log2e)
    scale *= M_LOG2E;
  Value result = f32Constant(b, loc, scale);
  // Tensor descales are picked per element by the lowering.
  if (Value qd = op.getQDescale(); qd && qd.getType().isF32())
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

/// The modifiers of an op with softcap and an effective window (the forward
/// and the backward state them alike).
template <typename OpT> static ScoreModifiers modifiersOf(OpT op) {
  ScoreModifiers mods;
  if (std::optional<APFloat> softcap = op.getSoftcap())
    mods.softcap = softcap->convertToDouble();
  auto [left, right] = op.getEffectiveWindow();
  mods.left = clampWindowBound(left);
  mods.right = clampWindowBound(right);
  return mods;
}

ScoreModifiers ScoreModifiers::get(AttentionOp op) { return modifiersOf(op); }

ScoreModifiers ScoreModifiers::get(AttentionGradOp op) {
  return modifiersOf(op);
}

ScoreModifiers ScoreModifiers::get(OnlineAttentionOp op) {
  ScoreModifiers mods;
  if (std::optional<APFloat> softcap = op.getSoftcap())
    mods.softcap = softcap->convertToDouble();
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow()) {
    mods.left = clampWindowBound((*window)[0]);
    mods.right = clampWindowBound((*window)[1]);
  }
  return mods;
}

Value mlir::fa::getDiagonalDistance(OpBuilder &b, Location loc, Value row,
                                    Value col, Value diagonal) {
  return arith::SubIOp::create(b, loc, col,
                               arith::AddIOp::create(b, loc, row, diagonal));
}

Value mlir::fa::isInsideWindow(OpBuilder &b, Location loc,
                               const ScoreModifiers &mods, Value distance) {
  if (!mods.hasWindow())
    return Value();
  Value inside;
  auto conjoin = [&](Value cond) {
    inside = inside ? arith::AndIOp::create(b, loc, inside, cond) : cond;
  };
  if (mods.left >= 0)
    conjoin(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, distance,
        arith::ConstantIndexOp::create(b, loc, -mods.left)));
  if (mods.right >= 0)
    conjoin(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle, distance,
        arith::ConstantIndexOp::create(b, loc, mods.right)));
  return inside;
}

Value mlir::fa::scaleAndSoftcap(OpBuilder &b, Location loc,
                                const ScoreModifiers &mods, Value s,
                                Value scoreScale) {
  s = arith::MulFOp::create(b, loc, s, scoreScale);
  if (mods.softcap) {
    Value cap = f32Constant(b, loc, *mods.softcap);
    Value t = math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, s, cap));
    s = arith::MulFOp::create(b, loc, t, cap);
  }
  return s;
}

Value mlir::fa::applyScoreModifiers(OpBuilder &b, Location loc,
                                    const ScoreModifiers &mods, Value s,
                                    Value scoreScale, Value maskElt,
                                    Value distance, Value postScale,
                                    const ModifierRegions &regions) {
  s = scaleAndSoftcap(b, loc, mods, s, scoreScale);
  Value keep;
  if (maskElt) {
    if (maskElt.getType().isInteger(1))
      keep = maskElt;
    else
      s = arith::AddFOp::create(b, loc, s, extendToF32(b, loc, maskElt));
  }
  IRMapping noCaptures;
  if (regions.scoreMod)
    s = inlineScoreMod(b, loc, *regions.scoreMod, s, regions.batch,
                       regions.head, regions.row, regions.col, noCaptures);
  // The backward's t; its dt is read where the gradient is formed.
  if (regions.scoreModGrad)
    s = inlineScoreModGrad(b, loc, *regions.scoreModGrad, s, regions.batch,
                           regions.head, regions.row, regions.col, noCaptures)
            .first;
  auto andKeep = [&](Value visible) {
    keep = keep ? arith::AndIOp::create(b, loc, keep, visible) : visible;
  };
  if (regions.maskMod)
    andKeep(inlineMaskMod(b, loc, *regions.maskMod, regions.batch,
                          regions.head, regions.row, regions.col, noCaptures));
  if (distance)
    if (Value inside = isInsideWindow(b, loc, mods, distance))
      andKeep(inside);
  if (postScale)
    s = arith::MulFOp::create(b, loc, s, postScale);
  if (keep)
    s = arith::SelectOp::create(b, loc, keep, s, negInf(b, loc));
  return s;
}

Value mlir::fa::scoreModInput(OpBuilder &b, Location loc,
                              const ScoreModifiers &mods, Value s,
                              Value scoreScale, Value maskElt) {
  Value u = scaleAndSoftcap(b, loc, mods, s, scoreScale);
  if (maskElt && !maskElt.getType().isInteger(1))
    u = arith::AddFOp::create(b, loc, u, extendToF32(b, loc, maskElt));
  return u;
}

Value mlir::fa::applyScoreModGrad(OpBuilder &b, Location loc,
                                  const ScoreModifiers &mods, Value dsT,
                                  Value p, Value s, Value scoreScale,
                                  Value maskElt,
                                  const ModifierRegions &regions) {
  if (!regions.scoreModGrad)
    return dsT;
  Value u = scoreModInput(b, loc, mods, s, scoreScale, maskElt);
  IRMapping noCaptures;
  Value dt = inlineScoreModGrad(b, loc, *regions.scoreModGrad, u,
                                regions.batch, regions.head, regions.row,
                                regions.col, noCaptures)
                 .second;
  Value zero = f32Constant(b, loc, 0.0);
  Value unseen =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, p, zero);
  return arith::SelectOp::create(b, loc, unseen, zero,
                                 arith::MulFOp::create(b, loc, dsT, dt));
}

bool mlir::fa::hasCaptureGradTerms(AttentionGradOp op) {
  std::optional<ArrayRef<int64_t>> terms = op.getCaptureGradTerms();
  return !op.getGradCaptures().empty() && op.getScoreModGrad() && terms &&
         !terms->empty();
}

SmallVector<Value> mlir::fa::zeroCaptureGrads(OpBuilder &b, Location loc,
                                              AttentionGradOp op) {
  SmallVector<Value> grads;
  for (Value capture : op.getGradCaptures()) {
    auto type = cast<RankedTensorType>(capture.getType());
    Value empty = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, capture), b.getF32Type());
    Value zero = f32Constant(b, loc, 0.0);
    Value filled = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    auto want = RankedTensorType::get(type.getShape(), b.getF32Type());
    if (filled.getType() != want)
      filled = tensor::CastOp::create(b, loc, want, filled);
    grads.push_back(filled);
  }
  return grads;
}

LogicalResult mlir::fa::checkScoreModGradPresent(AttentionGradOp op) {
  if (!op.getScoreMod() || op.getScoreModGrad())
    return success();
  return op.emitOpError()
         << "has a score_mod without its score_mod_grad (the derivative the "
            "backward needs): run fa-differentiate-score-mod first";
}

GradSizes GradSizes::get(OpBuilder &b, AttentionGradOp op) {
  Location loc = op.getLoc();
  auto dim = [&](Value t, int64_t d) -> OpFoldResult {
    OpFoldResult size = tensor::getMixedSize(b, loc, t, d);
    if (auto v = dyn_cast<Value>(size))
      return getAsOpFoldResult(v);
    return size;
  };
  Value q = op.getQuery(), k = op.getKey();
  GradSizes s{dim(q, 0), dim(q, 1), dim(k, 1), dim(q, 2), dim(k, 2), {}};
  std::optional<int64_t> heads = getConstantIntValue(s.heads),
                         kvHeads = getConstantIntValue(s.kvHeads);
  if (heads && kvHeads)
    s.ratio = b.getIndexAttr(*heads / *kvHeads);
  else
    s.ratio = arith::DivUIOp::create(
                  b, loc, getValueOrCreateConstantIndexOp(b, loc, s.heads),
                  getValueOrCreateConstantIndexOp(b, loc, s.kvHeads))
                  .getResult();
  return s;
}

/// Clones the body of `region` but its terminator, with its block arguments
/// mapped to `args`; returns what the fa.yield yields, mapped.
static SmallVector<Value> inlineModifierValues(OpBuilder &b, Region &region,
                                               ValueRange args,
                                               IRMapping &captures) {
  IRMapping mapping = captures;
  Block &block = region.front();
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  auto yield = cast<YieldOp>(block.getTerminator());
  SmallVector<Value> results;
  for (Value v : yield.getValues())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

SmallVector<Value>
mlir::fa::accumulateCaptureGrads(OpBuilder &b, Location loc, AttentionGradOp op,
                                 ValueRange grads, Value p, Value dp,
                                 Value delta, Value u, Value batch, Value head,
                                 Value row, Value col) {
  if (!hasCaptureGradTerms(op))
    return SmallVector<Value>(grads);
  Value dsT = arith::MulFOp::create(b, loc, p,
                                    arith::SubFOp::create(b, loc, dp, delta));
  Value visible = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, p,
                                        f32Constant(b, loc, 0.0));
  auto ifOp = scf::IfOp::create(
      b, loc, visible,
      [&](OpBuilder &nb, Location l) {
        IRMapping noCaptures;
        SmallVector<Value> values = inlineModifierValues(
            nb, *op.getScoreModGrad(), {u, batch, head, row, col}, noCaptures);
        SmallVector<Value> out(grads);
        size_t at = 2; // past t and dt
        ArrayRef<int64_t> terms = *op.getCaptureGradTerms();
        for (int64_t term : terms) {
          Value coefficient = values[at++];
          Value &grad = out[term];
          auto type = cast<RankedTensorType>(grad.getType());
          SmallVector<Value> indices;
          for (int64_t d = 0; d < type.getRank(); ++d) {
            Value last = arith::SubIOp::create(
                nb, l, tensor::DimOp::create(nb, l, grad, d),
                arith::ConstantIndexOp::create(nb, l, 1));
            Value index = arith::MaxSIOp::create(
                nb, l, values[at++], arith::ConstantIndexOp::create(nb, l, 0));
            indices.push_back(arith::MinSIOp::create(nb, l, index, last));
          }
          Value old = tensor::ExtractOp::create(nb, l, grad, indices);
          Value sum = math::FmaOp::create(nb, l, dsT, coefficient, old);
          grad = tensor::InsertOp::create(nb, l, sum, grad, indices);
        }
        scf::YieldOp::create(nb, l, out);
      },
      [&](OpBuilder &nb, Location l) { scf::YieldOp::create(nb, l, grads); });
  return SmallVector<Value>(ifOp.getResults());
}

/// inlineModifierValues of a region that yields one value.
static Value inlineModifier(OpBuilder &b, Region &region, ValueRange args,
                            IRMapping &captures) {
  return inlineModifierValues(b, region, args, captures).front();
}

std::pair<Value, Value>
mlir::fa::inlineScoreModGrad(OpBuilder &b, Location, Region &scoreModGrad,
                             Value s, Value batch, Value head, Value row,
                             Value col, IRMapping &captures) {
  SmallVector<Value> tdt = inlineModifierValues(
      b, scoreModGrad, {s, batch, head, row, col}, captures);
  return {tdt[0], tdt[1]};
}

Value mlir::fa::inlineScoreMod(OpBuilder &b, Location, Region &scoreMod,
                               Value s, Value batch, Value head, Value row,
                               Value col, IRMapping &captures) {
  return inlineModifier(b, scoreMod, {s, batch, head, row, col}, captures);
}

Value mlir::fa::inlineMaskMod(OpBuilder &b, Location, Region &maskMod,
                              Value batch, Value head, Value row, Value col,
                              IRMapping &captures) {
  return inlineModifier(b, maskMod, {batch, head, row, col}, captures);
}

void mlir::fa::cloneModifierRegions(OpBuilder &b, Operation *from,
                                    Operation *to) {
  for (auto [src, dst] : llvm::zip(from->getRegions(), to->getRegions()))
    b.cloneRegionBefore(src, dst, dst.end());
}

template <typename OpT>
static ModifierRegions getModifierRegions(OpT op) {
  ModifierRegions regions;
  regions.scoreMod = op.getScoreMod();
  regions.maskMod = op.getMaskMod();
  return regions;
}

ModifierRegions ModifierRegions::get(AttentionOp op) {
  return getModifierRegions(op);
}
ModifierRegions ModifierRegions::get(OnlineAttentionOp op) {
  return getModifierRegions(op);
}
ModifierRegions ModifierRegions::get(AttentionGradOp op) {
  // score_mod_grad yields score_mod's t: the backward never reads score_mod.
  ModifierRegions regions;
  regions.maskMod = op.getMaskMod();
  regions.scoreModGrad = op.getScoreModGrad();
  return regions;
}

AffineMap mlir::fa::getMaskBroadcastMap(AttentionOp op, unsigned numLoops) {
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < 4; ++d)
    exprs.push_back(d < 3 && op.isMaskDimBroadcast(d)
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

Value mlir::fa::extractMaskElement(OpBuilder &b, Location loc, Value mask,
                                   Value batch, Value head, Value row,
                                   Value col) {
  auto type = cast<RankedTensorType>(mask.getType());
  SmallVector<Value> indices = {batch, head, row, col};
  for (unsigned d = 0; d < 3; ++d)
    if (type.getDimSize(d) == 1)
      indices[d] = arith::ConstantIndexOp::create(b, loc, 0);
  return tensor::ExtractOp::create(b, loc, mask, indices);
}

Value mlir::fa::safeRowMax(OpBuilder &b, Location loc, Value rowMax) {
  Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         rowMax, negInf(b, loc));
  return arith::SelectOp::create(b, loc, isNegInf, f32Constant(b, loc, 0.0),
                                 rowMax);
}

Value mlir::fa::normalizeOutput(OpBuilder &b, Location loc, Value acc,
                                Value rowSum, Value vDescale) {
  Value zero = f32Constant(b, loc, 0.0);
  Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        rowSum, zero);
  // Divide by 1 instead of 0 so no NaN is ever computed, then select 0.
  Value denom = arith::SelectOp::create(b, loc, isEmpty,
                                        f32Constant(b, loc, 1.0), rowSum);
  Value o = arith::DivFOp::create(b, loc, acc, denom);
  if (vDescale)
    o = arith::MulFOp::create(b, loc, o, vDescale);
  return arith::SelectOp::create(b, loc, isEmpty, zero, o);
}

Value mlir::fa::logSumExp(OpBuilder &b, Location loc, Value safeMax,
                          Value rowSum) {
  return arith::AddFOp::create(b, loc, safeMax,
                               math::LogOp::create(b, loc, rowSum));
}

Value mlir::fa::logSumExpFromLog2(OpBuilder &b, Location loc, Value safeMax,
                                  Value rowSum) {
  return logSumExpFromLog2Sum(b, loc, safeMax,
                              math::Log2Op::create(b, loc, rowSum));
}

Value mlir::fa::reciprocalRowSum(OpBuilder &b, Location loc, Value rowSum) {
  Value zero = f32Constant(b, loc, 0.0);
  Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        rowSum, zero);
  return arith::SelectOp::create(
      b, loc, isEmpty, zero,
      arith::DivFOp::create(b, loc, f32Constant(b, loc, 1.0), rowSum));
}

Value mlir::fa::logSumExpFromLog2Sum(OpBuilder &b, Location loc, Value safeMax,
                                     Value log2Sum) {
  Value log2Lse = arith::AddFOp::create(b, loc, safeMax, log2Sum);
  return arith::MulFOp::create(b, loc, log2Lse, f32Constant(b, loc, M_LN2));
}

KVBlockRange mlir::fa::computeKVBlockRange(OpBuilder &b, Location loc,
                                           Value rowBegin, Value rowEnd,
                                           Value keyLength, Value diagonal,
                                           int64_t blockKV, int64_t left,
                                           int64_t right) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); };
  auto maxi = [&](Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); };
  auto mini = [&](Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); };
  auto clamp = [&](Value x, Value lo, Value hi) { return mini(maxi(x, lo), hi); };
  left = clampWindowBound(left);
  right = clampWindowBound(right);
  Value zero = cst(0), one = cst(1), block = cst(blockKV);
  Value numBlocks = arith::CeilDivSIOp::create(b, loc, keyLength, block);
  if (left < 0 && right < 0)
    return {zero, zero, numBlocks, numBlocks};

  // Diagonal columns of the first and last row of the range.
  Value firstDiag = add(rowBegin, diagonal);
  Value lastDiag = add(sub(rowEnd, one), diagonal);
  // Columns some row may see: [lo, hi); columns every row sees: [fullLo, fullHi).
  Value lo = left >= 0 ? sub(firstDiag, cst(left)) : zero;
  Value hi = right >= 0 ? add(lastDiag, cst(right + 1)) : keyLength;
  Value fullLo = left >= 0 ? sub(lastDiag, cst(left)) : zero;
  Value fullHi = right >= 0 ? add(firstDiag, cst(right + 1)) : keyLength;
  lo = clamp(lo, zero, keyLength);
  hi = clamp(hi, zero, keyLength);
  fullLo = clamp(fullLo, zero, keyLength);
  fullHi = clamp(fullHi, zero, keyLength);

  KVBlockRange range;
  range.begin = arith::DivSIOp::create(b, loc, lo, block); // lo >= 0
  range.end = maxi(arith::CeilDivSIOp::create(b, loc, hi, block), range.begin);
  // A block is fully visible when it starts at or after fullLo and ends (at
  // its last real key: the tail block is short) at or before fullHi.
  Value fullBegin = arith::CeilDivSIOp::create(b, loc, fullLo, block);
  Value fullHiIsEnd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            fullHi, keyLength);
  Value fullEnd = arith::SelectOp::create(
      b, loc, fullHiIsEnd, numBlocks,
      arith::DivSIOp::create(b, loc, fullHi, block));
  range.fullBegin = clamp(fullBegin, range.begin, range.end);
  range.fullEnd = clamp(fullEnd, range.fullBegin, range.end);
  return range;
}
