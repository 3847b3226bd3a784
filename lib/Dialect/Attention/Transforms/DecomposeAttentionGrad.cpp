//===- DecomposeAttentionGrad.cpp - reference lowering of the backward ----===//
//
// Rewrites fa.attention_grad into linalg/tensor ops that materialize the
// score, probability and gradient matrices ([B, Hq, Nq, Nk], f32). Like
// fa-decompose-attention for the forward, it is the simple oracle, not the
// fast form: P is recomputed from Q, K and lse, then
//   dV = P^T dO, dP = dO V^T, delta = rowsum(dO * O), dS = P * (dP - delta)
//   (times score_mod_grad's dt and softcap's derivative), dQ = scale dS K,
//   dK = scale dS^T Q; mask_mod hides scores like the band,
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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

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

/// Builds the linalg.generic ops of one fa.attention_grad (static shapes).
struct GradBuilder {
  RewriterBase &b;
  Location loc;
  AttentionGradOp op;
  MLIRContext *ctx;
  int64_t batch, heads, kvHeads, seqQ, seqK, headDim, headDimV;

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

  Value zeros(ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t s : shape)
      sizes.push_back(b.getIndexAttr(s));
    return createFilledF32Tensor(b, loc, sizes, 0.0f);
  }

  /// K/V element [b, h / r, row, col] for loop indices b, h of a generic.
  Value extractKV(OpBuilder &nb, Location l, Value kv, unsigned rowLoop,
                  unsigned colLoop) {
    Value ratio = arith::ConstantIndexOp::create(nb, l, heads / kvHeads);
    Value kvHead = arith::DivUIOp::create(
        nb, l, linalg::IndexOp::create(nb, l, 1), ratio);
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
  Value timesKV(Value lhs, Value kv, ArrayRef<int64_t> outShape,
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
    Value perHead = generic(zeros({batch, heads, seqK, cols}), {0, 1, 2, 3},
                            ValueRange{lhs, rhs}, {{0, 1, 4, 2}, {0, 1, 4, 3}},
                            5, 1,
                            [&](OpBuilder &nb, Location l, ValueRange args) {
                              return fma(nb, l, args[2], args[0], args[1]);
                            });
    int64_t ratio = heads / kvHeads;
    auto grouped = RankedTensorType::get(
        {batch, kvHeads, ratio, seqK, cols}, b.getF32Type());
    Value split = tensor::ExpandShapeOp::create(
        b, loc, grouped, perHead,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    // Loops (b, g, j, c, hr), hr reduced.
    return generic(zeros({batch, kvHeads, seqK, cols}), {0, 1, 2, 3}, split,
                   {{0, 1, 4, 2, 3}}, 5, 1,
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     return Value(arith::AddFOp::create(nb, l, args[1], args[0]));
                   });
  }

  /// `x` (f32) rounded to the element type of `type`.
  Value truncate(Value x, RankedTensorType type) {
    Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                         type.getElementType());
    return generic(init, {0, 1, 2, 3}, x, {{0, 1, 2, 3}}, 4, 0,
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     return truncateFromF32(nb, l, args[0],
                                            type.getElementType());
                   });
  }

  SmallVector<Value> build();
};
} // namespace

SmallVector<Value> GradBuilder::build() {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(), o = op.getOut(),
        lse = op.getLse(), dO = op.getGradOut();
  SmallVector<int64_t> scoreShape = {batch, heads, seqQ, seqK};
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
  Value diagonal = arith::ConstantIndexOp::create(b, loc, seqK - seqQ);
  Value p = generic(
      zeros(scoreShape), {0, 1, 2, 3}, ValueRange{s, lse},
      {{0, 1, 2, 3}, {0, 1, 2}}, 4, 0,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value distance;
        if (mods.hasWindow())
          distance = getDiagonalDistance(nb, l, linalg::IndexOp::create(nb, l, 2),
                                         linalg::IndexOp::create(nb, l, 3),
                                         diagonal);
        Value score = applyScoreModifiers(
            nb, l, mods, args[0], f32Const(nb, l, scale),
            /*maskElt=*/Value(), distance, /*postScale=*/Value(),
            regionsAt(nb, l));
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

  // 5. dS = scale * P * (dP - delta), times score_mod's derivative dt and
  //    softcap's 1 - tanh^2(scale * s / softcap) (scale folded in for dQ
  //    and dK).
  Value dS = generic(
      zeros(scoreShape), {0, 1, 2, 3}, ValueRange{p, dP, delta, s},
      {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2}, {0, 1, 2, 3}}, 4, 0,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value ds = arith::MulFOp::create(
            nb, l, args[0], arith::SubFOp::create(nb, l, args[1], args[2]));
        ds = applyScoreModGrad(nb, l, mods, ds, args[0], args[3],
                               f32Const(nb, l, scale), regionsAt(nb, l));
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
  Value dQ = timesKV(dS, k, {batch, heads, seqQ, headDim},
                     /*kvTransposed=*/false);
  // 7. dK = dS^T Q and dV = P^T dO, summed over each group of query heads.
  Value dK = transposedTimesGrouped(dS, q, headDim);
  Value dV = transposedTimesGrouped(p, dO, headDimV);
  return {truncate(dQ, op.getQueryType()), truncate(dK, op.getKeyType()),
          truncate(dV, op.getValueType())};
}

LogicalResult mlir::fa::decomposeAttentionGrad(RewriterBase &rewriter,
                                               AttentionGradOp op) {
  if (failed(checkScoreModGradPresent(op)))
    return failure();
  for (Value operand : op->getOperands())
    if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
      return op.emitOpError()
             << "the CPU lowering of fa.attention_grad needs static shapes, "
                "got "
             << operand.getType();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  RankedTensorType q = op.getQueryType(), k = op.getKeyType(),
                   v = op.getValueType();
  GradBuilder builder{rewriter,         op.getLoc(),      op,
                      op.getContext(),  q.getDimSize(0),  q.getDimSize(1),
                      k.getDimSize(1),  q.getDimSize(2),  k.getDimSize(2),
                      q.getDimSize(3),  v.getDimSize(3)};
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
