//===- DecomposeOnlineAttention.cpp - the tile ops to linalg/arith --------===//
//
// Lowers the tile-level ops of the FlashAttention form for targets without a
// dedicated lowering (the CPU): fa.online_attention becomes linalg ops on its
// tiles, fa.kv_block_range becomes index arithmetic.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::fa {
#define GEN_PASS_DEF_FADECOMPOSEONLINEATTENTIONPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;

/// An elementwise linalg.generic over `ins` (with `maps`) into a new f32
/// tensor of `sizes`.
Value elementwise(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  ValueRange ins, ArrayRef<AffineMap> inMaps,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  Value init = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(sizes.size(), ctx));
  return linalg::GenericOp::create(
             b, loc, init.getType(), ins, ValueRange{init}, maps,
             SmallVector<IteratorType>(sizes.size(), kPar),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
             })
      .getResult(0);
}
} // namespace

FailureOr<SmallVector<Value>>
mlir::fa::decomposeOnlineAttention(RewriterBase &rewriter,
                                   OnlineAttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  OpBuilder &b = rewriter;
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();

  OpFoldResult rows = tensor::getMixedSize(b, loc, q, 0);
  OpFoldResult cols = tensor::getMixedSize(b, loc, k, 0);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row2 = getProjectionMap(ctx, 2, {0});
  AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);

  // Scores in log2 units: fold log2(e) into the scale when nothing non-linear
  // or additive comes between the scaling and the exponent.
  ScoreModifiers mods = ScoreModifiers::get(op);
  bool foldLog2e = !mods.softcap && !(op.getMask() && !op.isBooleanMask()) &&
                   !op.getScoreMod();
  double scale = op.getScale().convertToDouble() * (foldLog2e ? M_LOG2E : 1.0);
  Value scoreScale =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(static_cast<float>(scale)));
  if (Value descale = op.getDescale())
    scoreScale = arith::MulFOp::create(b, loc, scoreScale, descale);
  Value postScale;
  if (!foldLog2e)
    postScale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(M_LOG2E)));

  // 1. T = Q K^T in f32. Loops (i, j, d).
  Value scores = createFilledF32Tensor(b, loc, {rows, cols}, 0.0f);
  scores = linalg::GenericOp::create(
               b, loc, scores.getType(), ValueRange{q, k}, ValueRange{scores},
               ArrayRef<AffineMap>{getProjectionMap(ctx, 3, {0, 2}),
                                   getProjectionMap(ctx, 3, {1, 2}),
                                   getProjectionMap(ctx, 3, {0, 1})},
               ArrayRef<IteratorType>{kPar, kPar, kRed},
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value prod = arith::MulFOp::create(
                     nb, l, extendToF32(nb, l, args[0]),
                     extendToF32(nb, l, args[1]));
                 linalg::YieldOp::create(
                     nb, l, Value(arith::AddFOp::create(nb, l, args[2], prod)));
               })
               .getResult(0);

  // 2. Scale, softcap, masks, window.
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  if (Value mask = op.getMask()) {
    // A single row broadcasts over the query rows (the verifier's rule).
    ins.push_back(mask);
    maps.push_back(cast<RankedTensorType>(mask.getType()).getDimSize(0) == 1
                       ? AffineMap::get(2, 0,
                                        {b.getAffineConstantExpr(0),
                                         b.getAffineDimExpr(1)},
                                        b.getContext())
                       : id2);
  }
  maps.push_back(id2);
  bool positional = op.getRow0() && mods.hasWindow();
  scores =
      linalg::GenericOp::create(
          b, loc, scores.getType(), ins, ValueRange{scores}, maps,
          ArrayRef<IteratorType>{kPar, kPar},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value distance;
            if (positional) {
              Value row = arith::AddIOp::create(
                  nb, l, op.getRow0(), linalg::IndexOp::create(nb, l, 0));
              Value col = arith::AddIOp::create(
                  nb, l, op.getCol0(), linalg::IndexOp::create(nb, l, 1));
              distance = getDiagonalDistance(nb, l, row, col, op.getDiagonal());
            }
            Value maskElt = op.getMask() ? args.front() : Value();
            // The regions see absolute positions: the step's coords plus
            // its local row and key.
            ModifierRegions regions = ModifierRegions::get(op);
            if (!regions.empty()) {
              regions.batch = op.getCoordBatch();
              regions.head = op.getCoordHead();
              regions.row = arith::AddIOp::create(
                  nb, l, op.getCoordRow(), linalg::IndexOp::create(nb, l, 0));
              regions.col = arith::AddIOp::create(
                  nb, l, op.getCoordCol(), linalg::IndexOp::create(nb, l, 1));
            }
            linalg::YieldOp::create(
                nb, l,
                applyScoreModifiers(nb, l, mods, args.back(), scoreScale,
                                    maskElt, distance, postScale, regions));
          })
          .getResult(0);

  // The state is updated in place (outs = the incoming max, sum and acc) so
  // that a bufferized loop carries one buffer per state variable.
  auto inPlace = [&](Value into, ArrayRef<Value> ins, ArrayRef<AffineMap> maps,
                     ArrayRef<IteratorType> iterators,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    return linalg::GenericOp::create(
               b, loc, into.getType(), ins, ValueRange{into}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, body(nb, l, args));
               })
        .getResult(0);
  };
  auto maxOf = [](OpBuilder &nb, Location l, ValueRange args) -> Value {
    return arith::MaximumFOp::create(nb, l, args[0], args[1]);
  };
  auto sumOf = [](OpBuilder &nb, Location l, ValueRange args) -> Value {
    return arith::AddFOp::create(nb, l, args[0], args[1]);
  };
  auto productOf = [](OpBuilder &nb, Location l, ValueRange args) -> Value {
    return arith::MulFOp::create(nb, l, args[0], args[1]);
  };

  // 3. The block's row max, then A = exp2(M - Z) with Z = max(M, rowmax T),
  //    or 0 while the row has seen nothing (A is then exp2(-inf) = 0).
  Value blockMax = createFilledF32Tensor(
      b, loc, {rows}, -std::numeric_limits<float>::infinity());
  blockMax = inPlace(blockMax, {scores}, {id2, row2}, {kPar, kRed}, maxOf);
  Value alpha = elementwise(
      b, loc, {rows}, ValueRange{op.getMax(), blockMax}, {id1, id1},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value z = safeRowMax(nb, l, maxOf(nb, l, args));
        return math::Exp2Op::create(nb, l,
                                    arith::SubFOp::create(nb, l, args[0], z));
      });
  // 4. M' = max(M, rowmax T).
  Value newMax = inPlace(op.getMax(), {blockMax}, {id1, id1}, {kPar}, maxOf);

  // 5. P = exp2(T - Z), in place of T.
  Value probs = inPlace(
      scores, {newMax}, {row2, id2}, {kPar, kPar},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value z = safeRowMax(nb, l, args[0]);
        return math::Exp2Op::create(nb, l,
                                    arith::SubFOp::create(nb, l, args[1], z));
      });

  // 6. L' = A * L + rowsum P.
  Value newSum = inPlace(op.getSum(), {alpha}, {id1, id1}, {kPar}, productOf);
  newSum = inPlace(newSum, {probs}, {id2, row2}, {kPar, kRed}, sumOf);

  // 7. ACC' = A * ACC + P V. Loops (i, e, j).
  Value newAcc = inPlace(op.getAcc(), {alpha}, {row2, id2}, {kPar, kPar},
                         productOf);
  newAcc = inPlace(
      newAcc, {probs, v},
      {getProjectionMap(ctx, 3, {0, 2}), getProjectionMap(ctx, 3, {2, 1}),
       getProjectionMap(ctx, 3, {0, 1})},
      {kPar, kPar, kRed}, [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value prod =
            arith::MulFOp::create(nb, l, args[0], extendToF32(nb, l, args[1]));
        if (Value vd = op.getValueDescale())
          prod = arith::MulFOp::create(nb, l, prod, vd);
        return arith::AddFOp::create(nb, l, args[2], prod);
      });

  auto castTo = [&](Value value, Type type) -> Value {
    return value.getType() == type
               ? value
               : tensor::CastOp::create(b, loc, type, value).getResult();
  };
  return SmallVector<Value>{castTo(newMax, op.getNewMax().getType()),
                            castTo(newSum, op.getNewSum().getType()),
                            castTo(newAcc, op.getNewAcc().getType())};
}

namespace {
struct DecomposeOnlineAttentionPattern : OpRewritePattern<OnlineAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OnlineAttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> results =
        decomposeOnlineAttention(rewriter, op);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }
};

struct ExpandKVBlockRangePattern : OpRewritePattern<KVBlockRangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KVBlockRangeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> window = op.getWindow();
    KVBlockRange range = computeKVBlockRange(
        rewriter, op.getLoc(), op.getRowBegin(), op.getRowEnd(),
        op.getKeyLength(), op.getDiagonal(), op.getBlockKvAttr().getInt(),
        window[0], window[1]);
    rewriter.replaceOp(op, ValueRange{range.begin, range.fullBegin,
                                      range.fullEnd, range.end});
    return success();
  }
};

struct FADecomposeOnlineAttentionPass
    : fa::impl::FADecomposeOnlineAttentionPassBase<
          FADecomposeOnlineAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeOnlineAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::fa::populateDecomposeOnlineAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeOnlineAttentionPattern, ExpandKVBlockRangePattern>(
      patterns.getContext());
}
