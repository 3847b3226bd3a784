//===- DecomposeAttentionGrad.cpp - reference lowering of the backward ----===//
//
// Rewrites fa.attention_grad into linalg/tensor ops that materialize the
// score, probability and gradient matrices ([B, Hq, Nq, Nk], f32). Like
// fa-decompose-attention for the forward, it is the simple oracle, not the
// fast form: P is recomputed from Q, K and lse, then
//   dV = P^T dO, dP = dO V^T, delta = rowsum(dO * O), dS = P * (dP - delta)
//   (times score_mod_grad's dt and softcap's derivative), dQ = scale dS K,
//   dK = scale dS^T Q; the mask operand (added, or hiding where false) and
//   mask_mod hide scores like the band,
// with dK and dV summed over the query heads that share a K/V head (GQA).
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
#include "mlir/IR/PatternMatch.h"

#include <functional>
#include <limits>

namespace mlir::fa {
#define GEN_PASS_DEF_FADECOMPOSEATTENTIONGRADPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Builds the linalg.generic ops of one fa.attention_grad. Batch, head and
/// sequence sizes are static (attributes) or tensor.dim values; head dims
/// are static (the verifier).
struct GradBuilder {
  RewriterBase &b;
  Location loc;
  AttentionGradOp op;
  MLIRContext *ctx;
  OpFoldResult batch, heads, kvHeads, seqQ, seqK;
  int64_t headDim, headDimV;
  /// Query heads per K/V head: static, or the quotient of the two dims.
  OpFoldResult ratio;

  /// A generic over `numLoops` loops, the last `numReductions` reductions,
  /// whose single output `init` has the map `outDims`; `body` returns the
  /// value to yield.
  Value generic(Value init, ArrayRef<unsigned> outDims, ValueRange ins,
                ArrayRef<SmallVector<unsigned>> inDims, unsigned numLoops,
                unsigned numReductions, BodyFn body) {
    SmallVector<AffineMap> maps;
    for (ArrayRef<unsigned> dims : inDims)
      maps.push_back(getProjectionMap(ctx, numLoops, dims));
    maps.push_back(getProjectionMap(ctx, numLoops, outDims));
    SmallVector<IteratorType> iterators(numLoops - numReductions, kPar);
    iterators.append(numReductions, kRed);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ins, ValueRange{init}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, body(nb, l, args));
               })
        .getResult(0);
  }

  Value zeros(ArrayRef<OpFoldResult> sizes) {
    return createFilledF32Tensor(b, loc, sizes, 0.0f);
  }

  /// `size` as an index value built with `nb` (a constant where static).
  static Value indexValue(OpBuilder &nb, Location l, OpFoldResult size) {
    return getValueOrCreateConstantIndexOp(nb, l, size);
  }

  /// K/V element [b, h / r, row, col] for loop indices b, h of a generic.
  Value extractKV(OpBuilder &nb, Location l, Value kv, unsigned rowLoop,
                  unsigned colLoop) {
    Value r = indexValue(nb, l, ratio);
    Value kvHead =
        arith::DivUIOp::create(nb, l, linalg::IndexOp::create(nb, l, 1), r);
    return extendToF32(
        nb, l,
        tensor::ExtractOp::create(
            nb, l, kv,
            ValueRange{linalg::IndexOp::create(nb, l, 0), kvHead,
                       linalg::IndexOp::create(nb, l, rowLoop),
                       linalg::IndexOp::create(nb, l, colLoop)}));
  }

  /// acc + x * y, with x and y extended to f32.
  static Value fma(OpBuilder &nb, Location l, Value acc, Value x, Value y) {
    Value prod = arith::MulFOp::create(nb, l, extendToF32(nb, l, x),
                                       extendToF32(nb, l, y));
    return arith::AddFOp::create(nb, l, acc, prod);
  }

  /// out[b, h, i, c] = sum_j lhs[b, h, i, j] * kv[b, h / r, j, c]: loops
  /// (b, h, i, c, j); used for dP = dO V^T (lhs = dO, j over Dv) and
  /// dQ = dS K (lhs = dS, j over Nk).
  Value timesKV(Value lhs, Value kv, ArrayRef<OpFoldResult> outShape,
                bool kvTransposed) {
    return generic(zeros(outShape), {0, 1, 2, 3}, lhs, {{0, 1, 2, 4}}, 5, 1,
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     Value kvElt = kvTransposed ? extractKV(nb, l, kv, 3, 4)
                                                : extractKV(nb, l, kv, 4, 3);
                     return fma(nb, l, args[1], args[0], kvElt);
                   });
  }

  /// sum_i lhs[b, h, i, j] * rhs[b, h, i, c] per query head, then summed over
  /// the query heads of each K/V head: [B, Hkv, Nk, C] in f32.
  Value transposedTimesGrouped(Value lhs, Value rhs, int64_t cols) {
    OpFoldResult colsAttr = b.getIndexAttr(cols);
    Value perHead =
        generic(zeros({batch, heads, seqK, colsAttr}), {0, 1, 2, 3},
                ValueRange{lhs, rhs}, {{0, 1, 4, 2}, {0, 1, 4, 3}}, 5, 1,
                [&](OpBuilder &nb, Location l, ValueRange args) {
                  return fma(nb, l, args[2], args[0], args[1]);
                });
    SmallVector<OpFoldResult> groupedSizes = {batch, kvHeads, ratio, seqK,
                                              colsAttr};
    SmallVector<int64_t> groupedShape;
    for (OpFoldResult size : groupedSizes)
      groupedShape.push_back(
          getConstantIntValue(size).value_or(ShapedType::kDynamic));
    auto grouped = RankedTensorType::get(groupedShape, b.getF32Type());
    if (!grouped.hasStaticShape()) {
      // Loops (b, g, j, c, hr), hr reduced, reading perHead at head g r + hr:
      // an expand_shape splitting two dynamic sizes out of one crashes the
      // CPU pipeline's memref lowering (LLVM 22); `hrs` only gives the hr
      // loop its size.
      Value init = zeros({batch, kvHeads, seqK, colsAttr});
      Value hrs = zeros({ratio});
      return generic(
          init, {0, 1, 2, 3}, hrs, {{4}}, 5, 1,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value head = arith::AddIOp::create(
                nb, l,
                arith::MulIOp::create(nb, l, linalg::IndexOp::create(nb, l, 1),
                                      indexValue(nb, l, ratio)),
                linalg::IndexOp::create(nb, l, 4));
            Value x = tensor::ExtractOp::create(
                nb, l, perHead,
                ValueRange{linalg::IndexOp::create(nb, l, 0), head,
                           linalg::IndexOp::create(nb, l, 2),
                           linalg::IndexOp::create(nb, l, 3)});
            return Value(arith::AddFOp::create(nb, l, args[1], x));
          });
    }
    Value split = tensor::ExpandShapeOp::create(
        b, loc, grouped, perHead,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    // Loops (b, g, j, c, hr), hr reduced.
    return generic(zeros({batch, kvHeads, seqK, colsAttr}), {0, 1, 2, 3}, split,
                   {{0, 1, 4, 2, 3}}, 5, 1,
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     return Value(arith::AddFOp::create(nb, l, args[1], args[0]));
                   });
  }

  /// `x` (f32) rounded to the element type of `type`, of type `type` (a
  /// cast where x's static dims differ from it: the sizes of one result may
  /// come from several operands).
  Value truncate(Value x, RankedTensorType type) {
    Value init =
        type.hasStaticShape()
            ? tensor::EmptyOp::create(b, loc, type.getShape(),
                                      type.getElementType())
            : tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, x),
                                      type.getElementType());
    Value r =
        generic(init, {0, 1, 2, 3}, x, {{0, 1, 2, 3}}, 4, 0,
                [&](OpBuilder &nb, Location l, ValueRange args) {
                  return truncateFromF32(nb, l, args[0], type.getElementType());
                });
    if (r.getType() != type)
      r = tensor::CastOp::create(b, loc, type, r);
    return r;
  }

  SmallVector<Value> build();

  /// The mask element of score (b, h, i, j), null without a mask operand.
  using MaskAt =
      function_ref<Value(OpBuilder &, Location, Value, Value, Value, Value)>;
  /// The gradients of grad_captures (zero without capture_grad_terms) from
  /// the full P, dP, delta and raw scores S.
  SmallVector<Value> captureGrads(Value p, Value dP, Value delta, Value s,
                                  double scale, const ScoreModifiers &mods,
                                  MaskAt maskAt);
};
} // namespace

SmallVector<Value> GradBuilder::build() {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(), o = op.getOut(),
        lse = op.getLse(), dO = op.getGradOut();
  SmallVector<OpFoldResult> scoreShape = {batch, heads, seqQ, seqK};
  auto f32Const = [&](OpBuilder &nb, Location l, double x) -> Value {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(x));
  };
  double scale = static_cast<float>(op.getEffectiveScale());
  ScoreModifiers mods = ScoreModifiers::get(op);
  // score_mod_grad and mask_mod at the loops' (b, h, i, j) of a score.
  auto regionsAt = [&](OpBuilder &nb, Location l) {
    ModifierRegions regions = ModifierRegions::get(op);
    if (!regions.empty()) {
      regions.batch = linalg::IndexOp::create(nb, l, 0);
      regions.head = linalg::IndexOp::create(nb, l, 1);
      regions.row = linalg::IndexOp::create(nb, l, 2);
      regions.col = linalg::IndexOp::create(nb, l, 3);
    }
    return regions;
  };

  // 1. S = Q K^T (raw dot products, f32): loops (b, h, i, j, d).
  Value s = timesKV(q, k, scoreShape, /*kvTransposed=*/true);

  // 2. P = exp(score - lse), 0 outside the band and where lse = -inf (a fully
  //    masked row), so that no exp(-inf + inf) is formed.
  std::optional<int64_t> staticQ = getConstantIntValue(seqQ),
                         staticK = getConstantIntValue(seqK);
  Value diagonal =
      staticQ && staticK
          ? Value(arith::ConstantIndexOp::create(b, loc, *staticK - *staticQ))
          : Value(arith::SubIOp::create(b, loc, indexValue(b, loc, seqK),
                                        indexValue(b, loc, seqQ)));
  Value p = generic(
      zeros(scoreShape), {0, 1, 2, 3}, ValueRange{s, lse},
      {{0, 1, 2, 3}, {0, 1, 2}}, 4, 0,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value distance;
        if (mods.hasWindow())
          distance = getDiagonalDistance(nb, l, linalg::IndexOp::create(nb, l, 2),
                                         linalg::IndexOp::create(nb, l, 3),
                                         diagonal);
        Value maskElt;
        if (Value mask = op.getMask())
          maskElt =
              extractMaskElement(nb, l, mask, linalg::IndexOp::create(nb, l, 0),
                                 linalg::IndexOp::create(nb, l, 1),
                                 linalg::IndexOp::create(nb, l, 2),
                                 linalg::IndexOp::create(nb, l, 3));
        Value score = applyScoreModifiers(
            nb, l, mods, args[0], f32Const(nb, l, scale), maskElt, distance,
            /*postScale=*/Value(), regionsAt(nb, l));
        Value e = math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, score, args[1]));
        Value deadRow = arith::CmpFOp::create(
            nb, l, arith::CmpFPredicate::OEQ, args[1],
            f32Const(nb, l, -std::numeric_limits<double>::infinity()));
        return Value(arith::SelectOp::create(nb, l, deadRow,
                                             f32Const(nb, l, 0.0), e));
      });

  // 3. dP = dO V^T: loops (b, h, i, j, e).
  Value dP = timesKV(dO, v, scoreShape, /*kvTransposed=*/true);

  // 4. delta = rowsum(dO * O): loops (b, h, i, e).
  Value delta = generic(zeros({batch, heads, seqQ}), {0, 1, 2},
                        ValueRange{dO, o}, {{0, 1, 2, 3}, {0, 1, 2, 3}}, 4, 1,
                        [&](OpBuilder &nb, Location l, ValueRange args) {
                          return fma(nb, l, args[2], args[0], args[1]);
                        });

  // The mask element at the loops' (b, h, i, j) (score_mod sees an additive
  // one added), null without a mask operand.
  auto maskAt = [&](OpBuilder &nb, Location l, Value bi, Value h, Value i,
                    Value j) -> Value {
    Value mask = op.getMask();
    return mask ? extractMaskElement(nb, l, mask, bi, h, i, j) : Value();
  };
  auto loopMaskAt = [&](OpBuilder &nb, Location l) {
    return maskAt(nb, l, linalg::IndexOp::create(nb, l, 0),
                  linalg::IndexOp::create(nb, l, 1),
                  linalg::IndexOp::create(nb, l, 2),
                  linalg::IndexOp::create(nb, l, 3));
  };

  // 5. dS = scale * P * (dP - delta), times score_mod's derivative dt and
  //    softcap's 1 - tanh^2(scale * s / softcap) (scale folded in for dQ
  //    and dK).
  Value dS = generic(
      zeros(scoreShape), {0, 1, 2, 3}, ValueRange{p, dP, delta, s},
      {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2}, {0, 1, 2, 3}}, 4, 0,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value ds = arith::MulFOp::create(
            nb, l, args[0], arith::SubFOp::create(nb, l, args[1], args[2]));
        ds = applyScoreModGrad(
            nb, l, mods, ds, args[0], args[3], f32Const(nb, l, scale),
            op.getScoreModGrad() ? loopMaskAt(nb, l) : Value(),
            regionsAt(nb, l));
        if (mods.softcap) {
          Value x = arith::MulFOp::create(
              nb, l, args[3], f32Const(nb, l, scale / *mods.softcap));
          Value t = math::TanhOp::create(nb, l, x);
          Value dt = arith::SubFOp::create(nb, l, f32Const(nb, l, 1.0),
                                           arith::MulFOp::create(nb, l, t, t));
          ds = arith::MulFOp::create(nb, l, ds, dt);
        }
        return Value(arith::MulFOp::create(nb, l, ds, f32Const(nb, l, scale)));
      });

  // 6. dQ = dS K: loops (b, h, i, d, j).
  Value dQ = timesKV(dS, k, {batch, heads, seqQ, b.getIndexAttr(headDim)},
                     /*kvTransposed=*/false);
  // 7. dK = dS^T Q and dV = P^T dO, summed over each group of query heads.
  Value dK = transposedTimesGrouped(dS, q, headDim);
  Value dV = transposedTimesGrouped(p, dO, headDimV);
  SmallVector<Value> grads = {truncate(dQ, op.getQueryType()),
                              truncate(dK, op.getKeyType()),
                              truncate(dV, op.getValueType())};
  llvm::append_range(grads, captureGrads(p, dP, delta, s, scale, mods, maskAt));
  return grads;
}

SmallVector<Value> GradBuilder::captureGrads(Value p, Value dP, Value delta,
                                             Value s, double scale,
                                             const ScoreModifiers &mods,
                                             MaskAt maskAt) {
  SmallVector<Value> grads = zeroCaptureGrads(b, loc, op);
  if (!hasCaptureGradTerms(op))
    return grads;
  // Every score in turn (an scf.for nest over b, h, i, j): the terms land at
  // indices the region computes, a scatter no generic expresses.
  SmallVector<Value> ubs = {indexValue(b, loc, batch),
                            indexValue(b, loc, heads), indexValue(b, loc, seqQ),
                            indexValue(b, loc, seqK)};
  Value zero = arith::ConstantIndexOp::create(b, loc, 0),
        one = arith::ConstantIndexOp::create(b, loc, 1);
  Value scoreScale = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(scale)));
  std::function<SmallVector<Value>(unsigned, SmallVector<Value>, ValueRange)>
      nest = [&](unsigned depth, SmallVector<Value> ivs,
                 ValueRange acc) -> SmallVector<Value> {
    if (depth == 4) {
      Value bi = ivs[0], h = ivs[1], i = ivs[2], j = ivs[3];
      // Named in order: the ops' order must not follow the compiler's order
      // of evaluating arguments.
      Value se = tensor::ExtractOp::create(b, loc, s, ivs);
      Value maskElt = maskAt(b, loc, bi, h, i, j);
      Value u = scoreModInput(b, loc, mods, se, scoreScale, maskElt);
      Value pe = tensor::ExtractOp::create(b, loc, p, ivs);
      Value dpe = tensor::ExtractOp::create(b, loc, dP, ivs);
      Value de = tensor::ExtractOp::create(b, loc, delta, ValueRange{bi, h, i});
      return accumulateCaptureGrads(b, loc, op, acc, pe, dpe, de, u, bi, h, i,
                                    j);
    }
    auto loop = scf::ForOp::create(
        b, loc, zero, ubs[depth], one, acc,
        [&](OpBuilder &, Location, Value iv, ValueRange args) {
          SmallVector<Value> inner = ivs;
          inner.push_back(iv);
          scf::YieldOp::create(b, loc, nest(depth + 1, inner, args));
        });
    return SmallVector<Value>(loop.getResults());
  };
  return nest(0, {}, grads);
}

LogicalResult mlir::fa::decomposeAttentionGrad(RewriterBase &rewriter,
                                               AttentionGradOp op) {
  if (failed(checkScoreModGradPresent(op)))
    return failure();
  emitGradShapeChecks(rewriter, op);
  if (op.isVarlen())
    return lowerVarlenAttentionGrad(rewriter, op, decomposeAttentionGrad);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  GradSizes sizes = GradSizes::get(rewriter, op);
  GradBuilder builder{rewriter,
                      op.getLoc(),
                      op,
                      op.getContext(),
                      sizes.batch,
                      sizes.heads,
                      sizes.kvHeads,
                      sizes.seqQ,
                      sizes.seqK,
                      op.getQueryType().getDimSize(3),
                      op.getValueType().getDimSize(3),
                      sizes.ratio};
  rewriter.replaceOp(op, builder.build());
  return success();
}

namespace {
struct FADecomposeAttentionGradPass
    : fa::impl::FADecomposeAttentionGradPassBase<FADecomposeAttentionGradPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(rewriteEach<AttentionGradOp>(
            getOperation(),
            [](RewriterBase &r, AttentionGradOp op) {
              return decomposeAttentionGrad(r, op);
            })))
      signalPassFailure();
  }
};
} // namespace
