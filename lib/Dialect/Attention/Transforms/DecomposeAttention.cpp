//===- DecomposeAttention.cpp - the reference lowering of fa.attention ----===//
//
// Rewrites fa.attention into linalg/tensor ops that materialize the whole
// score matrix. Slow by design and simple on purpose: it is the oracle the
// tiled (FlashAttention) form is checked against. Paged K/V pools are first
// gathered into [B, Hkv, Ncap, D] tensors, and kv_lens hides the keys past
// each sequence's length like a mask. A varlen op becomes a loop over its
// packed sequences, each an fa.attention of its own on slices (which this
// pass then lowers in turn).
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::fa {
#define GEN_PASS_DEF_FADECOMPOSEATTENTIONPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;

} // namespace

namespace {
/// The reference lowering of one fa.attention, as steps over explicit state:
/// the op's sizes and score factors (set once), each step a linalg op over
/// the previous step's tensors.
struct ReferenceLowering {
  RewriterBase &rewriter;
  AttentionOp op;
  Location loc;
  MLIRContext *ctx;
  Type f32;
  AttentionShape shape;
  OpFoldResult batch, heads, seqQ, seqK, headDimV;
  /// scale, times the q and k descales for fp8 inputs (per tensor).
  Value scoreScale;
  /// Per-head / per-block descales (tensors) are picked per score and per
  /// value row; per-tensor ones (scalars) are in scoreScale and normalize().
  bool tensorDescales;
  int64_t blockQ = 1, blockKV = 1;
  AffineMap id4, row4;
  /// Key and value as [B, Hkv, Ncap, D]: the op's, or gathered from pages.
  Value key, value;

  ReferenceLowering(RewriterBase &rewriter, AttentionOp op);
  /// 0. With pages: pool[clamp(table[b, j / S], 0, P - 1), g, j % S, d] for
  ///    every (b, g, j, d) of the key capacity.
  Value gatherPages(Value pool);
  /// With kv_lens: -inf for keys j >= L_b (the keys past the sequence), in
  ///    the body of the modifier loop (b, h, i, j).
  Value hidePastSequence(OpBuilder &b, Location l, Value s, Value seqLength);
  /// The diagonal of row 0 of a sequence of `seqLength` keys (null without
  ///    kv_lens): the op's, or L_b - Nq with kv_lens and no explicit diagonal.
  Value sequenceDiagonal(OpBuilder &b, Location l, Value seqLength);
  /// 1. S = Q K^T, f32, K read at head h / r.
  Value scores();
  /// 2. Scale, softcap, masks, modifier regions, elementwise on S.
  Value modify(Value scores);
  /// 3. Row max M.
  Value rowMax(Value scores);
  /// 4. P = exp(S - Z), Z = M, or 0 for a fully masked row (M = -inf), so
  ///    that such a row gives P = 0 rather than exp(-inf + inf) = NaN.
  Value probabilities(Value scores, Value rowMax);
  /// 5. Row sum L.
  Value rowSum(Value probs);
  /// 6. O = P V, V read at head h / r. Loops (b, h, i, e, j).
  Value weightedValues(Value probs);
  /// 7. out = O / L (0 for a fully masked row), times the v descale, cast.
  Value normalize(Value acc, Value rowSum);
  /// 8. lse = Z + log(L), -inf for a fully masked row.
  Value logSumExpRows(Value rowMax, Value rowSum);

  SmallVector<OpFoldResult> scoreSizes() const {
    return {batch, heads, seqQ, seqK};
  }
  SmallVector<OpFoldResult> rowSizes() const { return {batch, heads, seqQ}; }
  SmallVector<OpFoldResult> outSizes() const {
    return {batch, heads, seqQ, headDimV};
  }
};
} // namespace

ReferenceLowering::ReferenceLowering(RewriterBase &rewriter, AttentionOp op)
    : rewriter(rewriter), op(op), loc(op.getLoc()),
      ctx(rewriter.getContext()), f32(rewriter.getF32Type()) {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  batch = tensor::getMixedSize(rewriter, loc, q, 0);
  heads = tensor::getMixedSize(rewriter, loc, q, 1);
  seqQ = tensor::getMixedSize(rewriter, loc, q, 2);
  seqK = op.getMixedKeyCapacity(rewriter, loc);
  headDimV = tensor::getMixedSize(rewriter, loc, v, 3);
  shape = getAttentionShape(rewriter, loc, op);
  emitDynamicShapeChecks(rewriter, loc, op, shape);
  scoreScale = getScoreScale(rewriter, loc, op, /*log2e=*/false);
  tensorDescales = getDescaleRank(op) != 0;
  if (std::optional<ArrayRef<int64_t>> block = op.getDescaleBlock()) {
    blockQ = (*block)[0];
    blockKV = (*block)[1];
  }
  id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  row4 = getProjectionMap(ctx, 4, {0, 1, 2});
  key = op.isPaged() ? gatherPages(k) : k;
  value = op.isPaged() ? gatherPages(v) : v;
}

Value ReferenceLowering::gatherPages(Value pool) {
  auto poolType = cast<RankedTensorType>(pool.getType());
  SmallVector<OpFoldResult> sizes = {
      batch, tensor::getMixedSize(rewriter, loc, pool, 1), seqK,
      tensor::getMixedSize(rewriter, loc, pool, 3)};
  Value init =
      tensor::EmptyOp::create(rewriter, loc, sizes, poolType.getElementType());
  Value pageSize =
      arith::ConstantIndexOp::create(rewriter, loc, op.getPageSize());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value lastPage = arith::SubIOp::create(
      rewriter, loc, tensor::DimOp::create(rewriter, loc, pool, 0),
      arith::ConstantIndexOp::create(rewriter, loc, 1));
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{id4}, SmallVector<IteratorType>(4, kPar),
             [&](OpBuilder &b, Location l, ValueRange) {
               Value bi = linalg::IndexOp::create(b, l, 0);
               Value j = linalg::IndexOp::create(b, l, 2);
               Value id = tensor::ExtractOp::create(
                   b, l, op.getPages(),
                   ValueRange{bi, arith::DivUIOp::create(b, l, j, pageSize)});
               Value page = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                       id);
               page = arith::MinSIOp::create(
                   b, l, arith::MaxSIOp::create(b, l, page, zero), lastPage);
               Value elt = tensor::ExtractOp::create(
                   b, l, pool,
                   ValueRange{page, linalg::IndexOp::create(b, l, 1),
                              arith::RemUIOp::create(b, l, j, pageSize),
                              linalg::IndexOp::create(b, l, 3)});
               linalg::YieldOp::create(b, l, elt);
             })
      .getResult(0);
}

Value ReferenceLowering::hidePastSequence(OpBuilder &b, Location l, Value s,
                                          Value seqLength) {
  Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                       linalg::IndexOp::create(b, l, 3),
                                       seqLength);
  Value negInf = arith::ConstantOp::create(
      b, l, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, l, inside, s, negInf);
}

Value ReferenceLowering::sequenceDiagonal(OpBuilder &b, Location l,
                                          Value seqLength) {
  if (!seqLength || op.getDiagonal())
    return shape.diagonal;
  return arith::SubIOp::create(b, l, seqLength, shape.queryLength);
}

Value ReferenceLowering::scores() {
  Value k = key;
  Value scores = createFilledF32Tensor(rewriter, loc, scoreSizes(), 0.0f);
  auto qk = linalg::GenericOp::create(
      rewriter, loc, scores.getType(), ValueRange{op.getQuery()}, ValueRange{scores},
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
  return qk.getResult(0);

}

Value ReferenceLowering::modify(Value scores) {
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
        // L_b, this score's sequence length, with kv_lens.
        Value seqLength;
        if (op.hasKVLens())
          seqLength = op.getSequenceKeyLength(
              b, l, linalg::IndexOp::create(b, l, 0), shape.keyLength);
        Value distance;
        if (mods.hasWindow())
          distance = getDiagonalDistance(b, l, linalg::IndexOp::create(b, l, 2),
                                         linalg::IndexOp::create(b, l, 3),
                                         sequenceDiagonal(b, l, seqLength));
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
        if (seqLength)
          s = hidePastSequence(b, l, s, seqLength);
        linalg::YieldOp::create(b, l, s);
      });
  return masked.getResult(0);

}

Value ReferenceLowering::rowMax(Value scores) {
  Value init = createFilledF32Tensor(rewriter, loc, rowSizes(),
                                     -std::numeric_limits<float>::infinity());
  return linalg::GenericOp::create(
               rewriter, loc, init.getType(), ValueRange{scores},
               ValueRange{init}, ArrayRef<AffineMap>{id4, row4},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     b, l,
                     Value(arith::MaximumFOp::create(b, l, args[0], args[1])));
               })
               .getResult(0);

}

Value ReferenceLowering::probabilities(Value scores, Value rowMax) {
  Value init = tensor::EmptyOp::create(rewriter, loc, scoreSizes(), f32);
  return linalg::GenericOp::create(
              rewriter, loc, init.getType(), ValueRange{scores, rowMax},
              ValueRange{init}, ArrayRef<AffineMap>{id4, row4, id4},
              SmallVector<IteratorType>(4, kPar),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value z = safeRowMax(b, l, args[1]);
                Value e = math::ExpOp::create(
                    b, l, arith::SubFOp::create(b, l, args[0], z));
                linalg::YieldOp::create(b, l, e);
              })
              .getResult(0);

}

Value ReferenceLowering::rowSum(Value probs) {
  Value init = createFilledF32Tensor(rewriter, loc, rowSizes(), 0.0f);
  return linalg::GenericOp::create(
               rewriter, loc, init.getType(), ValueRange{probs},
               ValueRange{init}, ArrayRef<AffineMap>{id4, row4},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     b, l, Value(arith::AddFOp::create(b, l, args[0], args[1])));
               })
               .getResult(0);

}

Value ReferenceLowering::weightedValues(Value probs) {
  Value v = value;
  Value init = createFilledF32Tensor(rewriter, loc, outSizes(), 0.0f);
  return linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{probs}, ValueRange{init},
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

}

Value ReferenceLowering::normalize(Value acc, Value rowSum) {
  RankedTensorType outType = op.getOutType();
  Value outInit =
      tensor::EmptyOp::create(rewriter, loc, outSizes(), outType.getElementType());
  return linalg::GenericOp::create(
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
}

Value ReferenceLowering::logSumExpRows(Value rowMax, Value rowSum) {
  {
    Value lseInit = tensor::EmptyOp::create(rewriter, loc, rowSizes(), f32);
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    return linalg::GenericOp::create(
            rewriter, loc, op.getLse().getType(), ValueRange{rowMax, rowSum},
            ValueRange{lseInit}, ArrayRef<AffineMap>{id3, id3, id3},
            SmallVector<IteratorType>(3, kPar),
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  b, l, logSumExp(b, l, safeRowMax(b, l, args[0]), args[1]));
            })
            .getResult(0);
  }
}

/// A varlen op as an scf.for over its packed sequences: sequence s is an
/// fa.attention of batch 1 on the slices [qs, qs + Lq) of the query and
/// [ks, ks + Lk) of key and value (getPackedSequence), whose default
/// bottom-right diagonal Lk - Lq and positions are the sequence's own; its
/// modifier regions see batch s. Its results are inserted at row qs of out
/// and lse, which start at 0 and -inf (rows of no sequence).
static SmallVector<Value> expandVarlen(RewriterBase &rewriter, AttentionOp op) {
  Location loc = op.getLoc();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto dim = [&](Value t, int64_t d) {
    return tensor::getMixedSize(rewriter, loc, t, d);
  };
  Value numSeqs = arith::MaxSIOp::create(
      rewriter, loc,
      arith::SubIOp::create(
          rewriter, loc, tensor::DimOp::create(rewriter, loc, op.getCuSeqlensQ(), 0),
          idx(1)),
      idx(0));
  Value packedQ = tensor::DimOp::create(rewriter, loc, op.getQuery(), 2);
  Value packedK = tensor::DimOp::create(rewriter, loc, op.getKey(), 2);
  auto filled = [&](Value like, ArrayRef<OpFoldResult> sizes, Type elt,
                    double value) -> Value {
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes, elt);
    Value cst = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getFloatAttr(elt, value));
    return linalg::FillOp::create(rewriter, loc, cst, init).getResult(0);
  };
  SmallVector<OpFoldResult> outSizes = {dim(op.getQuery(), 0),
                                        dim(op.getQuery(), 1), packedQ,
                                        dim(op.getValue(), 3)};
  SmallVector<Value> inits = {filled(op.getOut(), outSizes,
                                     op.getOutType().getElementType(), 0.0)};
  if (op.getLse())
    inits.push_back(filled(op.getLse(), ArrayRef(outSizes).take_front(3),
                           rewriter.getF32Type(),
                           -std::numeric_limits<double>::infinity()));
  auto loop = scf::ForOp::create(
      rewriter, loc, idx(0), numSeqs, idx(1), inits,
      [&](OpBuilder &b, Location l, Value seq, ValueRange acc) {
        PackedSequence rows =
            getPackedSequence(b, l, op.getCuSeqlensQ(), seq, packedQ);
        PackedSequence keys =
            getPackedSequence(b, l, op.getCuSeqlensK(), seq, packedK);
        OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
        auto slice = [&](Value t, PackedSequence range) -> Value {
          SmallVector<OpFoldResult> offsets = {zero, zero, range.start, zero};
          SmallVector<OpFoldResult> sizes = {one, dim(t, 1), range.length,
                                             dim(t, 3)};
          return tensor::ExtractSliceOp::create(
              b, l, t, offsets, sizes, SmallVector<OpFoldResult>(4, one));
        };
        Value q = slice(op.getQuery(), rows), k = slice(op.getKey(), keys),
              v = slice(op.getValue(), keys);
        auto qType = cast<RankedTensorType>(q.getType());
        SmallVector<int64_t> outShape(qType.getShape());
        outShape[3] = op.getOutType().getDimSize(3);
        Type outType =
            RankedTensorType::get(outShape, op.getOutType().getElementType());
        Type lseType;
        if (op.getLse())
          lseType = RankedTensorType::get(ArrayRef(outShape).take_front(3),
                                          b.getF32Type());
        auto inner = AttentionOp::create(
            b, l, outType, lseType, q, k, v, /*mask=*/Value(), Value(),
            Value(), Value(), /*diagonal=*/Value(), /*kv_lens=*/Value(),
            /*pages=*/Value(), /*cu_seqlens_q=*/Value(),
            /*cu_seqlens_k=*/Value(), op.getScaleAttr(), op.getCausalAttr(),
            op.getWindowAttr(), op.getSoftcapAttr(), DenseI64ArrayAttr(),
            op->getNumRegions());
        // The regions' batch argument (score_mod's 1, mask_mod's 0) is the
        // sequence.
        cloneModifiersForSequence(b, l, op.getModifiers(), inner.getModifiers(),
                                  {1, 0}, seq);
        SmallVector<Value> results;
        SmallVector<OpFoldResult> offsets = {zero, zero, rows.start, zero};
        results.push_back(tensor::InsertSliceOp::create(
            b, l, inner.getResult(0), acc[0], offsets,
            ArrayRef<OpFoldResult>{one, dim(q, 1), rows.length, outSizes[3]},
            SmallVector<OpFoldResult>(4, one)));
        if (op.getLse())
          results.push_back(tensor::InsertSliceOp::create(
              b, l, inner.getResult(1), acc[1], ArrayRef(offsets).take_front(3),
              ArrayRef<OpFoldResult>{one, dim(q, 1), rows.length},
              SmallVector<OpFoldResult>(3, one)));
        scf::YieldOp::create(b, l, results);
      });
  SmallVector<Value> results;
  for (auto [result, original] : llvm::zip(loop.getResults(), op->getResults())) {
    Value r = result;
    if (r.getType() != original.getType())
      r = tensor::CastOp::create(rewriter, loc, original.getType(), r);
    results.push_back(r);
  }
  return results;
}

FailureOr<SmallVector<Value>> mlir::fa::decomposeAttention(RewriterBase &rewriter,
                                                           AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  if (op.isVarlen())
    return expandVarlen(rewriter, op);
  ReferenceLowering lower(rewriter, op);
  Value scores = lower.modify(lower.scores());
  Value rowMax = lower.rowMax(scores);
  Value probs = lower.probabilities(scores, rowMax);
  Value rowSum = lower.rowSum(probs);
  Value acc = lower.weightedValues(probs);
  // Dynamic dims make the generic's result type differ from the declared one
  // only in its static information; keep the op's type.
  SmallVector<Value> results = {lower.normalize(acc, rowSum)};
  if (op.getLse())
    results.push_back(lower.logSumExpRows(rowMax, rowSum));
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
