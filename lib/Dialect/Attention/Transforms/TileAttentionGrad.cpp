//===- TileAttentionGrad.cpp - the tiled form of the backward -------------===//
//
// Rewrites fa.attention_grad into FlashAttention-2's backward on tiles:
// delta = rowsum(dO * O) first; then for each (batch, K/V head, key block) a
// loop over the query heads of the group and the query blocks that can see
// the key block (blocks wholly outside the causal / window band are skipped),
// with S and P recomputed per tile from Q, K and lse and never stored:
//   dV_blk += P^T dO, dP = dO V^T, dS = scale P (dP - delta) dt softcap'
//   (dt from score_mod_grad; mask_mod hides scores per element),
//   dK_blk += dS^T Q, dQ[rows] += dS K.
// dK and dV of a key block are accumulated in f32 and written once; dQ is an
// f32 [B, Hq, Nq, D] accumulator carried through the (sequential) loops and
// rounded once at the end. A tile whose keys a mask_mod provably hides from
// all its rows (boundMaskModOverBlock) is skipped. Static shapes only.
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

#include <limits>

namespace mlir::fa {
#define GEN_PASS_DEF_FATILEATTENTIONGRADPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;
using BodyFn = function_ref<Value(ValueRange)>;

struct TiledGradBuilder {
  RewriterBase &b;
  Location loc;
  AttentionGradOp op;
  /// Static (attributes) or tensor.dim values made before the loops.
  OpFoldResult batch, heads, kvHeads, seqQ, seqK;
  /// Query heads per K/V head.
  OpFoldResult ratio;
  int64_t headDim, headDimV, blockQ, blockKV;
  ScoreModifiers mods;
  float scale;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// `size` as an index value: a constant made here where it is static.
  Value idx(OpFoldResult size) {
    if (std::optional<int64_t> c = getConstantIntValue(size))
      return idx(*c);
    return cast<Value>(size);
  }
  /// a - b of two sizes, folded where both are static.
  Value difference(OpFoldResult a, OpFoldResult s) {
    std::optional<int64_t> ca = getConstantIntValue(a),
                           cs = getConstantIntValue(s);
    if (ca && cs)
      return idx(*ca - *cs);
    return arith::SubIOp::create(b, loc, idx(a), idx(s));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }

  /// A generic whose single output is `init` (map `outDims`), the last
  /// `numReductions` of `numLoops` loops reductions.
  Value generic(Value init, ArrayRef<unsigned> outDims, ValueRange ins,
                ArrayRef<SmallVector<unsigned>> inDims, unsigned numLoops,
                unsigned numReductions, BodyFn body) {
    SmallVector<AffineMap> maps;
    for (ArrayRef<unsigned> dims : inDims)
      maps.push_back(getProjectionMap(b.getContext(), numLoops, dims));
    maps.push_back(getProjectionMap(b.getContext(), numLoops, outDims));
    SmallVector<IteratorType> iterators(numLoops - numReductions,
                                        IteratorType::parallel);
    iterators.append(numReductions, IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ins, ValueRange{init}, maps, iterators,
               [&](OpBuilder &, Location, ValueRange args) {
                 linalg::YieldOp::create(b, loc, body(args));
               })
        .getResult(0);
  }

  Value zeros(ArrayRef<OpFoldResult> sizes) {
    return createFilledF32Tensor(b, loc, sizes, 0.0f);
  }

  Value fma(Value acc, Value x, Value y) {
    Value prod = arith::MulFOp::create(b, loc, extendToF32(b, loc, x),
                                       extendToF32(b, loc, y));
    return arith::AddFOp::create(b, loc, acc, prod);
  }

  /// src[bi, h, row0 : row0 + rows, :] as a rank-2 (or rank-1 for lse) tile.
  Value tile(Value src, Value bi, Value h, Value row0, Value rows) {
    auto type = cast<RankedTensorType>(src.getType());
    SmallVector<OpFoldResult> offsets = {bi, h, row0}, sizes = {
                                                           b.getIndexAttr(1),
                                                           b.getIndexAttr(1),
                                                           rows};
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    if (type.getRank() == 4) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(type.getDimSize(3)));
      shape.push_back(type.getDimSize(3));
    }
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), src,
        offsets, sizes, strides);
  }

  Value insertTile(Value t, Value dest, Value bi, Value h, Value row0,
                   Value rows) {
    auto type = cast<RankedTensorType>(dest.getType());
    SmallVector<OpFoldResult> offsets = {bi, h, row0, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       rows,
                                       b.getIndexAttr(type.getDimSize(3))};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::InsertSliceOp::create(b, loc, t, dest, offsets, sizes,
                                         strides);
  }

  /// `x` (f32) rounded to `elt`, same shape.
  Value truncate(Value x, Type elt) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(tensor::getMixedSize(b, loc, x, d));
    Value init = tensor::EmptyOp::create(b, loc, sizes, elt);
    SmallVector<unsigned> id;
    for (unsigned d = 0; d < type.getRank(); ++d)
      id.push_back(d);
    return generic(init, id, x, {id}, type.getRank(), 0,
                   [&](ValueRange args) {
                     return truncateFromF32(b, loc, args[0], elt);
                   });
  }

  /// The query blocks [begin, end) some row of which sees a key of
  /// [col0, col0 + cols): rows i with -left <= j - (i + diag) <= right.
  std::pair<Value, Value> queryBlockRange(Value col0, Value cols) {
    Value diag = difference(seqK, seqQ);
    Value lo = idx(0), hi = idx(seqQ);
    if (mods.right >= 0)
      lo = arith::MaxSIOp::create(
          b, loc, lo,
          arith::SubIOp::create(b, loc,
                                arith::SubIOp::create(b, loc, col0, diag),
                                idx(mods.right)));
    if (mods.left >= 0) {
      Value end = arith::AddIOp::create(b, loc, col0, cols);
      hi = arith::MinSIOp::create(
          b, loc, hi,
          arith::AddIOp::create(b, loc,
                                arith::SubIOp::create(b, loc, end, diag),
                                idx(mods.left)));
    }
    Value begin = arith::DivSIOp::create(b, loc, lo, idx(blockQ));
    Value endBlock = arith::CeilDivSIOp::create(b, loc, hi, idx(blockQ));
    return {begin, endBlock};
  }

  /// score_mod_grad and mask_mod at the absolute (b, h, row0 + i, col0 + j)
  /// of a tile's generic over (i, j).
  ModifierRegions regionsAt(Value bi, Value h, Value row0, Value col0) {
    ModifierRegions regions = ModifierRegions::get(op);
    if (regions.empty())
      return regions;
    regions.batch = bi;
    regions.head = h;
    regions.row = arith::AddIOp::create(b, loc, row0,
                                        linalg::IndexOp::create(b, loc, 0));
    regions.col = arith::AddIOp::create(b, loc, col0,
                                        linalg::IndexOp::create(b, loc, 1));
    return regions;
  }

  /// One (query block, key block) tile: returns the new dQ accumulator, the
  /// key block's dK and dV accumulators.
  SmallVector<Value> step(ValueRange state, Value bi, Value h, Value row0,
                          Value col0, Value kT, Value vT, Value q, Value dO,
                          Value lse, Value delta);

  /// `step`, skipped (the state passed through) when mask_mod provably
  /// hides every key of the tile from every row of it.
  SmallVector<Value> stepUnlessHidden(ValueRange state, Value bi, Value h,
                                      Value row0, Value col0, Value kT,
                                      Value vT, Value q, Value dO, Value lse,
                                      Value delta);

  /// The capture gradients `grads` with the tile's scores' terms added
  /// (`grads` itself without capture_grad_terms): s, p, dP the tile's raw
  /// scores, probabilities and dO V^T, delta its rows'.
  SmallVector<Value> captureGrads(ValueRange grads, Value bi, Value h,
                                  Value row0, Value col0, Value rows,
                                  OpFoldResult cols, Value s, Value p, Value dP,
                                  Value delta);

  /// The mask element at the absolute (b, h, row0 + i, col0 + j) of a
  /// tile's generic over (i, j); null without a mask operand.
  Value maskAt(Value bi, Value h, Value row0, Value col0) {
    if (!op.getMask())
      return Value();
    return extractMaskElement(
        b, loc, op.getMask(), bi, h,
        arith::AddIOp::create(b, loc, row0, linalg::IndexOp::create(b, loc, 0)),
        arith::AddIOp::create(b, loc, col0,
                              linalg::IndexOp::create(b, loc, 1)));
  }

  SmallVector<Value> build();
};
} // namespace

SmallVector<Value> TiledGradBuilder::stepUnlessHidden(
    ValueRange state, Value bi, Value h, Value row0, Value col0, Value kT,
    Value vT, Value q, Value dO, Value lse, Value delta) {
  auto visit = [&]() {
    return step(state, bi, h, row0, col0, kT, vT, q, dO, lse, delta);
  };
  Region *maskMod = op.getMaskMod();
  if (!maskMod)
    return visit();
  // Interval bounds only: a region they cannot bound (a tensor.extract, ...)
  // is applied per element without a block test, never evaluated per block.
  Value rows = arith::MinSIOp::create(
      b, loc, idx(blockQ), arith::SubIOp::create(b, loc, idx(seqQ), row0));
  Value rowEnd = arith::AddIOp::create(b, loc, row0, rows);
  Value colEnd = arith::AddIOp::create(
      b, loc, col0, tensor::DimOp::create(b, loc, kT, 0));
  FailureOr<MaskModBlockVisibility> visibility = boundMaskModOverBlock(
      b, loc, *maskMod, bi, h, row0, rowEnd, col0, colEnd);
  if (failed(visibility))
    return visit();
  auto ifOp = scf::IfOp::create(
      b, loc, visibility->someVisible,
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, loc, visit()); },
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, loc, state); });
  return SmallVector<Value>(ifOp.getResults());
}

SmallVector<Value> TiledGradBuilder::step(ValueRange state, Value bi, Value h,
                                          Value row0, Value col0, Value kT,
                                          Value vT, Value q, Value dO,
                                          Value lse, Value delta) {
  Value dQAcc = state[0], dK = state[1], dV = state[2];
  Value rows = arith::MinSIOp::create(
      b, loc, idx(blockQ), arith::SubIOp::create(b, loc, idx(seqQ), row0));
  OpFoldResult cols = tensor::getMixedSize(b, loc, kT, 0);
  Value qT = tile(q, bi, h, row0, rows), doT = tile(dO, bi, h, row0, rows);
  Value lseT = tile(lse, bi, h, row0, rows),
        deltaT = tile(delta, bi, h, row0, rows);

  // S = q k^T: loops (i, j, d).
  Value s = generic(zeros({rows, cols}), {0, 1}, ValueRange{qT, kT},
                    {{0, 2}, {1, 2}}, 3, 1,
                    [&](ValueRange a) { return fma(a[2], a[0], a[1]); });
  // P = exp(score - lse), 0 outside the band and on dead rows.
  Value diag = difference(seqK, seqQ);
  Value p = generic(
      zeros({rows, cols}), {0, 1}, ValueRange{s, lseT}, {{0, 1}, {0}}, 2, 0,
      [&](ValueRange a) {
        Value distance;
        if (mods.hasWindow())
          distance = getDiagonalDistance(
              b, loc,
              arith::AddIOp::create(b, loc, row0,
                                    linalg::IndexOp::create(b, loc, 0)),
              arith::AddIOp::create(b, loc, col0,
                                    linalg::IndexOp::create(b, loc, 1)),
              diag);
        Value maskElt;
        if (Value mask = op.getMask())
          maskElt = extractMaskElement(
              b, loc, mask, bi, h,
              arith::AddIOp::create(b, loc, row0,
                                    linalg::IndexOp::create(b, loc, 0)),
              arith::AddIOp::create(b, loc, col0,
                                    linalg::IndexOp::create(b, loc, 1)));
        Value score = applyScoreModifiers(b, loc, mods, a[0], f32(scale),
                                          maskElt, distance, Value(),
                                          regionsAt(bi, h, row0, col0));
        Value e = math::ExpOp::create(b, loc,
                                      arith::SubFOp::create(b, loc, score, a[1]));
        Value dead = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, a[1],
            f32(-std::numeric_limits<double>::infinity()));
        return Value(arith::SelectOp::create(b, loc, dead, f32(0.0), e));
      });
  // dV += P^T dO: loops (j, e, i).
  dV = generic(dV, {0, 1}, ValueRange{p, doT}, {{2, 0}, {2, 1}}, 3, 1,
               [&](ValueRange a) { return fma(a[2], a[0], a[1]); });
  // dP = dO V^T: loops (i, j, e).
  Value dP = generic(zeros({rows, cols}), {0, 1}, ValueRange{doT, vT},
                     {{0, 2}, {1, 2}}, 3, 1,
                     [&](ValueRange a) { return fma(a[2], a[0], a[1]); });
  // dS = scale * P * (dP - delta) * dt (score_mod_grad) * softcap'.
  Value dS = generic(
      zeros({rows, cols}), {0, 1}, ValueRange{p, dP, deltaT, s},
      {{0, 1}, {0, 1}, {0}, {0, 1}}, 2, 0, [&](ValueRange a) {
        Value ds = arith::MulFOp::create(
            b, loc, a[0], arith::SubFOp::create(b, loc, a[1], a[2]));
        ds = applyScoreModGrad(b, loc, mods, ds, a[0], a[3], f32(scale),
                               op.getScoreModGrad() ? maskAt(bi, h, row0, col0)
                                                    : Value(),
                               regionsAt(bi, h, row0, col0));
        if (mods.softcap) {
          Value t = math::TanhOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, a[3],
                                    f32(double(scale) / *mods.softcap)));
          ds = arith::MulFOp::create(
              b, loc, ds,
              arith::SubFOp::create(b, loc, f32(1.0),
                                    arith::MulFOp::create(b, loc, t, t)));
        }
        return Value(arith::MulFOp::create(b, loc, ds, f32(scale)));
      });
  // dK += dS^T q: loops (j, d, i).
  dK = generic(dK, {0, 1}, ValueRange{dS, qT}, {{2, 0}, {2, 1}}, 3, 1,
               [&](ValueRange a) { return fma(a[2], a[0], a[1]); });
  // dQ[rows] += dS k: loops (i, d, j).
  Value dQT = generic(tile(dQAcc, bi, h, row0, rows), {0, 1},
                      ValueRange{dS, kT}, {{0, 2}, {2, 1}}, 3, 1,
                      [&](ValueRange a) { return fma(a[2], a[0], a[1]); });
  dQAcc = insertTile(dQT, dQAcc, bi, h, row0, rows);
  SmallVector<Value> next = {dQAcc, dK, dV};
  llvm::append_range(next, captureGrads(state.drop_front(3), bi, h, row0, col0,
                                        rows, cols, s, p, dP, deltaT));
  return next;
}

SmallVector<Value>
TiledGradBuilder::captureGrads(ValueRange grads, Value bi, Value h, Value row0,
                               Value col0, Value rows, OpFoldResult cols,
                               Value s, Value p, Value dP, Value delta) {
  if (!hasCaptureGradTerms(op))
    return SmallVector<Value>(grads);
  // Each score of the tile in turn: the terms land at indices the region
  // computes, a scatter no generic expresses.
  auto loop = [&](Value ub, ValueRange init,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = scf::ForOp::create(
        b, loc, idx(0), ub, idx(1), init,
        [&](OpBuilder &, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(b, loc, body(iv, args));
        });
    return SmallVector<Value>(forOp.getResults());
  };
  return loop(rows, grads, [&](Value i, ValueRange acc) {
    return loop(idx(cols), acc, [&](Value j, ValueRange acc2) {
      Value row = arith::AddIOp::create(b, loc, row0, i),
            col = arith::AddIOp::create(b, loc, col0, j);
      Value maskElt;
      if (Value mask = op.getMask())
        maskElt = extractMaskElement(b, loc, mask, bi, h, row, col);
      // Named in order: the ops' order must not follow the compiler's order
      // of evaluating arguments.
      Value se = tensor::ExtractOp::create(b, loc, s, ValueRange{i, j});
      Value u = scoreModInput(b, loc, mods, se, f32(scale), maskElt);
      Value pe = tensor::ExtractOp::create(b, loc, p, ValueRange{i, j});
      Value dpe = tensor::ExtractOp::create(b, loc, dP, ValueRange{i, j});
      Value de = tensor::ExtractOp::create(b, loc, delta, ValueRange{i});
      return accumulateCaptureGrads(b, loc, op, acc2, pe, dpe, de, u, bi, h,
                                    row, col);
    });
  });
}

SmallVector<Value> TiledGradBuilder::build() {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(), o = op.getOut(),
        lse = op.getLse(), dO = op.getGradOut();
  // delta = rowsum(dO * O): loops (b, h, i, e).
  Value delta = generic(zeros({batch, heads, seqQ}), {0, 1, 2},
                        ValueRange{dO, o}, {{0, 1, 2, 3}, {0, 1, 2, 3}}, 4, 1,
                        [&](ValueRange a) { return fma(a[2], a[0], a[1]); });
  Value dQAcc = zeros({batch, heads, seqQ, b.getIndexAttr(headDim)});
  auto emptyLike = [&](Value t) -> Value {
    auto type = cast<RankedTensorType>(t.getType());
    if (type.hasStaticShape())
      return tensor::EmptyOp::create(b, loc, type.getShape(),
                                     type.getElementType());
    return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, t),
                                   type.getElementType());
  };
  Value dK = emptyLike(k), dV = emptyLike(v);
  std::optional<int64_t> staticSeqK = getConstantIntValue(seqK);
  // ceildiv without seqK + blockKV - 1, which overflows for huge blocks.
  OpFoldResult numKeyBlocks;
  if (staticSeqK) {
    numKeyBlocks =
        b.getIndexAttr(*staticSeqK == 0 ? 0 : (*staticSeqK - 1) / blockKV + 1);
  } else {
    Value n = idx(seqK);
    Value none =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n, idx(0));
    Value blocks = arith::AddIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, n, idx(1)),
                               idx(blockKV)),
        idx(1));
    numKeyBlocks =
        arith::SelectOp::create(b, loc, none, idx(0), blocks).getResult();
  }

  auto forLoop = [&](Value lb, Value ub, ValueRange init,
                     function_ref<SmallVector<Value>(Value, ValueRange)> body)
      -> SmallVector<Value> {
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, idx(1), init,
        [&](OpBuilder &, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(b, loc, body(iv, args));
        });
    return SmallVector<Value>(loop.getResults().begin(),
                              loop.getResults().end());
  };

  SmallVector<Value> init = {dQAcc, dK, dV};
  llvm::append_range(init, zeroCaptureGrads(b, loc, op));
  SmallVector<Value> results = forLoop(
      idx(0), idx(batch), init,
      [&](Value bi, ValueRange s0) -> SmallVector<Value> {
        return forLoop(
            idx(0), idx(kvHeads), s0,
            [&](Value g, ValueRange s1) -> SmallVector<Value> {
              return forLoop(
                  idx(0), idx(numKeyBlocks), s1,
                  [&](Value kb, ValueRange s2) -> SmallVector<Value> {
                    Value col0 = arith::MulIOp::create(b, loc, kb, idx(blockKV));
                    Value cols = arith::MinSIOp::create(
                        b, loc, idx(blockKV),
                        arith::SubIOp::create(b, loc, idx(seqK), col0));
                    Value kT = tile(k, bi, g, col0, cols);
                    Value vT = tile(v, bi, g, col0, cols);
                    std::pair<Value, Value> qbRange = queryBlockRange(col0, cols);
                    Value qbBegin = qbRange.first, qbEnd = qbRange.second;
                    Value dKBlk = zeros({cols, b.getIndexAttr(headDim)});
                    Value dVBlk = zeros({cols, b.getIndexAttr(headDimV)});
                    SmallVector<Value> blkInit = {s2[0], dKBlk, dVBlk};
                    llvm::append_range(blkInit, s2.drop_front(3));
                    SmallVector<Value> blk = forLoop(
                        idx(0), idx(ratio), blkInit,
                        [&](Value hr, ValueRange s3) -> SmallVector<Value> {
                          Value h = arith::AddIOp::create(
                              b, loc, arith::MulIOp::create(b, loc, g, idx(ratio)),
                              hr);
                          return forLoop(
                              qbBegin, qbEnd, s3,
                              [&](Value qb, ValueRange s4) {
                                Value row0 = arith::MulIOp::create(
                                    b, loc, qb, idx(blockQ));
                                return stepUnlessHidden(s4, bi, h, row0, col0,
                                                        kT, vT, q, dO, lse,
                                                        delta);
                              });
                        });
                    Value newDK = insertTile(
                        truncate(blk[1], op.getKeyType().getElementType()),
                        s2[1], bi, g, col0, cols);
                    Value newDV = insertTile(
                        truncate(blk[2], op.getValueType().getElementType()),
                        s2[2], bi, g, col0, cols);
                    SmallVector<Value> next = {blk[0], newDK, newDV};
                    llvm::append_range(next, ArrayRef(blk).drop_front(3));
                    return next;
                  });
            });
      });
  // Sizes that folded to constants give static dims the op's types may not
  // have: cast to them.
  SmallVector<Value> grads = {
      truncate(results[0], op.getQueryType().getElementType()), results[1],
      results[2]};
  llvm::append_range(grads, ArrayRef(results).drop_front(3));
  for (auto [grad, type] : llvm::zip(grads, op->getResultTypes()))
    if (grad.getType() != type)
      grad = tensor::CastOp::create(b, loc, type, grad);
  return grads;
}

LogicalResult mlir::fa::tileAttentionGrad(RewriterBase &rewriter,
                                          AttentionGradOp op, int64_t blockQ,
                                          int64_t blockKV) {
  if (blockQ <= 0 || blockKV <= 0)
    return op.emitOpError() << "block sizes must be positive, got block-q = "
                            << blockQ << ", block-kv = " << blockKV;
  if (failed(checkScoreModGradPresent(op)))
    return failure();
  emitGradShapeChecks(rewriter, op);
  if (op.isVarlen())
    return lowerVarlenAttentionGrad(
        rewriter, op, [&](RewriterBase &r, AttentionGradOp inner) {
          return tileAttentionGrad(r, inner, blockQ, blockKV);
        });
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  GradSizes sizes = GradSizes::get(rewriter, op);
  TiledGradBuilder builder{rewriter,
                           op.getLoc(),
                           op,
                           sizes.batch,
                           sizes.heads,
                           sizes.kvHeads,
                           sizes.seqQ,
                           sizes.seqK,
                           sizes.ratio,
                           op.getQueryType().getDimSize(3),
                           op.getValueType().getDimSize(3),
                           blockQ,
                           blockKV,
                           ScoreModifiers::get(op),
                           static_cast<float>(op.getEffectiveScale())};
  rewriter.replaceOp(op, builder.build());
  return success();
}

namespace {
struct FATileAttentionGradPass
    : fa::impl::FATileAttentionGradPassBase<FATileAttentionGradPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(rewriteEach<AttentionGradOp>(
            getOperation(),
            [&](RewriterBase &r, AttentionGradOp op) {
              return tileAttentionGrad(r, op, blockQ, blockKV);
            })))
      signalPassFailure();
  }
};
} // namespace
