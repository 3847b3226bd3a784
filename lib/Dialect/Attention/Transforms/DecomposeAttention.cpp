//===- DecomposeAttention.cpp - the reference lowering of fa.attention ----===//
//
// Rewrites fa.attention into linalg/tensor ops that materialize the whole
// score matrix. Slow by design and simple on purpose: it is the oracle the
// tiled (FlashAttention) form is checked against.
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

namespace mlir::fa {
#define GEN_PASS_DEF_FADECOMPOSEATTENTIONPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;

} // namespace

FailureOr<SmallVector<Value>> mlir::fa::decomposeAttention(RewriterBase &rewriter,
                                                           AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Type f32 = rewriter.getF32Type();

  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, q, 0);
  OpFoldResult heads = tensor::getMixedSize(rewriter, loc, q, 1);
  OpFoldResult seqQ = tensor::getMixedSize(rewriter, loc, q, 2);
  OpFoldResult seqK = tensor::getMixedSize(rewriter, loc, k, 2);
  OpFoldResult headDimV = tensor::getMixedSize(rewriter, loc, v, 3);
  AttentionShape shape = getAttentionShape(rewriter, loc, op);
  emitDynamicShapeChecks(rewriter, loc, op, shape);

  // Score factor: scale, times the q and k descales for fp8 inputs.
  Value scoreScale = getScoreScale(rewriter, loc, op, /*log2e=*/false);
  // Per-head / per-block descales (tensors) are picked per score and per
  // value row; per-tensor ones (scalars) are in scoreScale and step 7.
  bool tensorDescales = getDescaleRank(op) != 0;
  int64_t blockQ = 1, blockKV = 1;
  if (std::optional<ArrayRef<int64_t>> block = op.getDescaleBlock()) {
    blockQ = (*block)[0];
    blockKV = (*block)[1];
  }

  // 1. S = Q K^T, f32, K read at head h / r.
  SmallVector<OpFoldResult> sSizes = {batch, heads, seqQ, seqK};
  Value scores = createFilledF32Tensor(rewriter, loc, sSizes, 0.0f);
  auto qk = linalg::GenericOp::create(
      rewriter, loc, scores.getType(), ValueRange{q}, ValueRange{scores},
      ArrayRef<AffineMap>{getProjectionMap(ctx, 5, {0, 1, 2, 4}),
                          getProjectionMap(ctx, 5, {0, 1, 2, 3})},
      ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value kvHead = getKVHead(b, l, linalg::IndexOp::create(b, l, 1), shape);
        Value kElt = tensor::ExtractOp::create(
            b, l, k,
            ValueRange{linalg::IndexOp::create(b, l, 0), kvHead,
                       linalg::IndexOp::create(b, l, 3),
                       linalg::IndexOp::create(b, l, 4)});
        Value prod = arith::MulFOp::create(b, l, extendToF32(b, l, args[0]),
                                           extendToF32(b, l, kElt));
        linalg::YieldOp::create(b, l,
                                Value(arith::AddFOp::create(b, l, args[1], prod)));
      });
  scores = qk.getResult(0);

  // 2. Scale, softcap, masks, elementwise on S.
  ScoreModifiers mods = ScoreModifiers::get(op);
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  if (Value mask = op.getMask()) {
    ins.push_back(mask);
    maps.push_back(getMaskBroadcastMap(op, /*numLoops=*/4));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  auto masked = linalg::GenericOp::create(
      rewriter, loc, scores.getType(), ins, ValueRange{scores}, maps,
      SmallVector<IteratorType>(4, kPar),
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value s = args.back();
        Value maskElt = op.getMask() ? args.front() : Value();
        Value distance;
        if (mods.hasWindow())
          distance = getDiagonalDistance(b, l, linalg::IndexOp::create(b, l, 2),
                                         linalg::IndexOp::create(b, l, 3),
                                         shape.diagonal);
        Value factor = scoreScale;
        if (tensorDescales) {
          Value bi = linalg::IndexOp::create(b, l, 0);
          Value hi = linalg::IndexOp::create(b, l, 1);
          Value qd = extractDescale(b, l, op.getQDescale(), bi, hi,
                                    linalg::IndexOp::create(b, l, 2), blockQ);
          Value kd = extractDescale(b, l, op.getKDescale(), bi,
                                    getKVHead(b, l, hi, shape),
                                    linalg::IndexOp::create(b, l, 3), blockKV);
          factor = arith::MulFOp::create(
              b, l, factor, arith::MulFOp::create(b, l, qd, kd));
        }
        // The modifier regions see the op's own (b, h, i, j): the loops.
        ModifierRegions regions = ModifierRegions::get(op);
        if (!regions.empty()) {
          regions.batch = linalg::IndexOp::create(b, l, 0);
          regions.head = linalg::IndexOp::create(b, l, 1);
          regions.row = linalg::IndexOp::create(b, l, 2);
          regions.col = linalg::IndexOp::create(b, l, 3);
        }
        s = applyScoreModifiers(b, l, mods, s, factor, maskElt, distance,
                                /*postScale=*/Value(), regions);
        linalg::YieldOp::create(b, l, s);
      });
  scores = masked.getResult(0);

  // 3. Row max M.
  SmallVector<OpFoldResult> rowSizes = {batch, heads, seqQ};
  Value rowMax = createFilledF32Tensor(rewriter, loc, rowSizes,
                           -std::numeric_limits<float>::infinity());
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap row4 = getProjectionMap(ctx, 4, {0, 1, 2});
  rowMax = linalg::GenericOp::create(
               rewriter, loc, rowMax.getType(), ValueRange{scores},
               ValueRange{rowMax}, ArrayRef<AffineMap>{id4, row4},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     b, l,
                     Value(arith::MaximumFOp::create(b, l, args[0], args[1])));
               })
               .getResult(0);

  // 4. P = exp(S - Z), Z = M, or 0 for a fully masked row (M = -inf), so that
  //    such a row gives P = 0 rather than exp(-inf + inf) = NaN.
  Value probs = tensor::EmptyOp::create(rewriter, loc, sSizes, f32);
  probs = linalg::GenericOp::create(
              rewriter, loc, probs.getType(), ValueRange{scores, rowMax},
              ValueRange{probs}, ArrayRef<AffineMap>{id4, row4, id4},
              SmallVector<IteratorType>(4, kPar),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value z = safeRowMax(b, l, args[1]);
                Value e = math::ExpOp::create(
                    b, l, arith::SubFOp::create(b, l, args[0], z));
                linalg::YieldOp::create(b, l, e);
              })
              .getResult(0);

  // 5. Row sum L.
  Value rowSum = createFilledF32Tensor(rewriter, loc, rowSizes, 0.0f);
  rowSum = linalg::GenericOp::create(
               rewriter, loc, rowSum.getType(), ValueRange{probs},
               ValueRange{rowSum}, ArrayRef<AffineMap>{id4, row4},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     b, l, Value(arith::AddFOp::create(b, l, args[0], args[1])));
               })
               .getResult(0);

  // 6. O = P V, V read at head h / r. Loops (b, h, i, e, j).
  SmallVector<OpFoldResult> oSizes = {batch, heads, seqQ, headDimV};
  Value acc = createFilledF32Tensor(rewriter, loc, oSizes, 0.0f);
  acc = linalg::GenericOp::create(
            rewriter, loc, acc.getType(), ValueRange{probs}, ValueRange{acc},
            ArrayRef<AffineMap>{getProjectionMap(ctx, 5, {0, 1, 2, 4}),
                                getProjectionMap(ctx, 5, {0, 1, 2, 3})},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value kvHead =
                  getKVHead(b, l, linalg::IndexOp::create(b, l, 1), shape);
              Value vElt = tensor::ExtractOp::create(
                  b, l, v,
                  ValueRange{linalg::IndexOp::create(b, l, 0), kvHead,
                             linalg::IndexOp::create(b, l, 4),
                             linalg::IndexOp::create(b, l, 3)});
              Value prod =
                  arith::MulFOp::create(b, l, args[0], extendToF32(b, l, vElt));
              if (tensorDescales)
                prod = arith::MulFOp::create(
                    b, l, prod,
                    extractDescale(b, l, op.getVDescale(),
                                   linalg::IndexOp::create(b, l, 0), kvHead,
                                   linalg::IndexOp::create(b, l, 4), blockKV));
              linalg::YieldOp::create(
                  b, l, Value(arith::AddFOp::create(b, l, args[1], prod)));
            })
            .getResult(0);

  // 7. out = O / L (0 for a fully masked row), times the v descale, cast once.
  RankedTensorType outType = op.getOutType();
  Value outInit =
      tensor::EmptyOp::create(rewriter, loc, oSizes, outType.getElementType());
  Value out =
      linalg::GenericOp::create(
          rewriter, loc, outType, ValueRange{acc, rowSum}, ValueRange{outInit},
          ArrayRef<AffineMap>{id4, row4, id4},
          SmallVector<IteratorType>(4, kPar),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value o = normalizeOutput(b, l, args[0], args[1],
                                      tensorDescales ? Value() : op.getVDescale());
            linalg::YieldOp::create(
                b, l, truncateFromF32(b, l, o, outType.getElementType()));
          })
          .getResult(0);
  // Dynamic dims make the generic's result type differ from the declared one
  // only in its static information; keep the op's type.
  SmallVector<Value> results = {out};

  // 8. lse = Z + log(L), -inf for a fully masked row.
  if (Value lse = op.getLse()) {
    Value lseInit = tensor::EmptyOp::create(rewriter, loc, rowSizes, f32);
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    results.push_back(
        linalg::GenericOp::create(
            rewriter, loc, lse.getType(), ValueRange{rowMax, rowSum},
            ValueRange{lseInit}, ArrayRef<AffineMap>{id3, id3, id3},
            SmallVector<IteratorType>(3, kPar),
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  b, l, logSumExp(b, l, safeRowMax(b, l, args[0]), args[1]));
            })
            .getResult(0));
  }
  return results;
}

namespace {
struct DecomposeAttentionPattern : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> results = decomposeAttention(rewriter, op);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }
};

struct FADecomposeAttentionPass
    : fa::impl::FADecomposeAttentionPassBase<FADecomposeAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::fa::populateDecomposeAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttentionPattern>(patterns.getContext());
}
