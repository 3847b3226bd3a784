//===- RaiseAttention.cpp - linalg attention to fa.attention --------------===//
//
// fa-raise-attention: finds softmax(scale * Q K^T [+ mask]) V written in linalg
// on tensors (what torch-mlir and stablehlo-to-linalg emit) and replaces the
// final P V contraction by fa.attention. The matchers (RaiseAttention.h) prove
// each part; this file traces Q, K and V back through transposes, casts,
// constant scales, batch/head reshapes and grouped-head broadcasts, and builds
// the op. docs/Embedding.md, "From what frontends emit", lists what is matched.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/RaiseAttention.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::fa {
#define GEN_PASS_DEF_FARAISEATTENTIONPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::raise;

namespace {

/// A Q, K or V operand of a contraction traced back to what it was computed
/// from: canonical dim c ([batch..., N, D]) is dim `perm[c]` of `source`.
struct HeadOperand {
  Value source;
  SmallVector<int64_t> perm;
  /// K/V heads repeated `groups` times (grouped-query attention) on the way.
  int64_t groups = 1;
  /// Constant factors multiplied on the way.
  double scale = 1.0;
  /// The canonical view is [B, H, N, D] (else [B*H, N, D]).
  bool heads = false;
  /// A batch-merging collapse_shape was looked through.
  bool merged = false;
};

/// What tracing may look through.
struct TraceOptions {
  bool casts = true;
  bool scale = true;
};

/// The constant of a body value: an arith.constant inside or above the body.
static std::optional<double> bodyConstant(Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

/// One step back through a unary elementwise op that permutes dims and maybe
/// extends or multiplies by a constant (linalg.transpose, a transposing or
/// casting generic, q * c, q / c): the input and the loop permutation.
static bool traceUnary(HeadOperand &x, const TraceOptions &options) {
  auto op = x.source.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!in.isPermutation() || !out.isPermutation())
    return false;
  Block *body = op.getBlock();
  Value arg = body->getArgument(0);
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  Value y = yield.getOperand(0);
  double factor = 1.0;
  while (y != arg) {
    Operation *def = y.getDefiningOp();
    if (!def || def->getBlock() != body)
      return false;
    if (auto ext = dyn_cast<arith::ExtFOp>(def); ext && options.casts) {
      y = ext.getIn();
    } else if (auto mul = dyn_cast<arith::MulFOp>(def); mul && options.scale) {
      std::optional<double> c = bodyConstant(mul.getRhs());
      Value other = mul.getLhs();
      if (!c) {
        c = bodyConstant(mul.getLhs());
        other = mul.getRhs();
      }
      if (!c)
        return false;
      factor *= *c;
      y = other;
    } else if (auto div = dyn_cast<arith::DivFOp>(def); div && options.scale) {
      std::optional<double> c = bodyConstant(div.getRhs());
      if (!c || *c == 0.0)
        return false;
      factor /= *c;
      y = div.getLhs();
    } else {
      return false;
    }
  }
  // Output dim p is loop out[p], read from input dim in^-1(out[p]).
  SmallVector<int64_t> perm;
  for (int64_t p : x.perm) {
    unsigned loop = out.getDimPosition(p);
    perm.push_back(
        *in.getResultPosition(getAffineDimExpr(loop, op.getContext())));
  }
  x.source = op.getDpsInputs()[0];
  x.perm = perm;
  x.scale *= factor;
  return true;
}

/// When `x5` ([B, Hkv, r, N, D]) repeats each K/V head r times along dim 2
/// (repeat_interleave: linalg.broadcast, a broadcasting generic, or one from
/// an expand_shape to [B, Hkv, 1, N, D]), the [B, Hkv, N, D] tensor and r.
static std::optional<std::pair<Value, int64_t>> matchHeadRepeat(Value x5) {
  auto type = cast<RankedTensorType>(x5.getType());
  if (type.getRank() != 5 || type.isDynamicDim(2))
    return std::nullopt;
  int64_t r = type.getDimSize(2);
  auto op = x5.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != body->getArgument(0))
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (!out.isIdentity())
    return std::nullopt;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  Value input = op.getDpsInputs()[0];
  if (in == AffineMap::get(5, 0, {d(0), d(1), d(3), d(4)}, ctx))
    return std::make_pair(input, r);
  if (in != AffineMap::get(5, 0, {d(0), d(1), getAffineConstantExpr(0, ctx),
                                  d(3), d(4)},
                           ctx))
    return std::nullopt;
  auto expand = input.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || expand.getReassociationIndices() !=
                     SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
    return std::nullopt;
  return std::make_pair(expand.getSrc(), r);
}

/// One step back through a collapse_shape that merges batch and heads
/// ([B, H, N, D] -> [B*H, N, D]) or grouped K/V heads ([B, Hkv, r, N, D] ->
/// [B, Hkv*r, N, D] or -> [B*Hkv*r, N, D]).
static bool traceHeads(HeadOperand &x) {
  auto collapse = x.source.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return false;
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  using G = SmallVector<ReassociationIndices>;
  unsigned rank = x.perm.size();
  // Batch (and heads) must stay the leading canonical dims.
  for (unsigned c = 0; c + 2 < rank; ++c)
    if (x.perm[c] != c)
      return false;
  SmallVector<int64_t> perm4 = {0, 1, x.perm[rank - 2] + (4 - rank),
                                x.perm[rank - 1] + (4 - rank)};
  if (rank == 3 && groups == G{{0, 1}, {2}, {3}}) {
    x.source = collapse.getSrc();
    x.perm = perm4;
    x.heads = true;
    x.merged = true;
    return true;
  }
  bool toHeads = rank == 4 && groups == G{{0}, {1, 2}, {3}, {4}};
  bool toBatch = rank == 3 && groups == G{{0, 1, 2}, {3}, {4}};
  if (!toHeads && !toBatch)
    return false;
  std::optional<std::pair<Value, int64_t>> repeat =
      matchHeadRepeat(collapse.getSrc());
  if (!repeat)
    return false;
  x.source = repeat->first;
  x.groups *= repeat->second;
  x.perm = perm4;
  x.heads = true;
  x.merged |= toBatch;
  return true;
}

/// Traces the operand `value` of a contraction (canonical dims `perm`) back
/// as far as `options` allow.
static HeadOperand traceOperand(Value value, ArrayRef<int64_t> perm,
                                const TraceOptions &options) {
  HeadOperand x;
  x.source = value;
  x.perm.assign(perm.begin(), perm.end());
  x.heads = perm.size() == 4;
  for (unsigned steps = 0; steps < 64; ++steps) {
    if (auto cast = x.source.getDefiningOp<tensor::CastOp>()) {
      x.source = cast.getSource();
      continue;
    }
    if (!traceUnary(x, options) && !traceHeads(x))
      break;
  }
  return x;
}

/// The batch layout of the raised op: [B, H, N, D] taken from Q, or
/// [B*H, 1, N, D] when Q has no head dim of its own.
struct Layout {
  bool unitHeads = false;
  /// Q in the layout; its dims 0 and 1 are B and H.
  Value query;
};

/// `src` with its dims permuted to canonical order (result dim c is source
/// dim perm[c]).
static Value permute(OpBuilder &b, Location loc, Value src,
                     ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return src;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, src);
  SmallVector<OpFoldResult> permuted;
  for (int64_t p : perm)
    permuted.push_back(sizes[p]);
  Type elt = cast<RankedTensorType>(src.getType()).getElementType();
  Value init = tensor::EmptyOp::create(b, loc, permuted, elt);
  return linalg::TransposeOp::create(b, loc, src, init, perm).getResult()[0];
}

/// `x` ([batch..., N, D] in canonical order, batch of rank 1 or 2) reshaped
/// to the layout: collapsed to [B*H, N, D], expanded to [B, H, N, D] (or
/// [B*H, 1, N, D]).
static Value toLayout(OpBuilder &b, Location loc, Value x,
                      const Layout &layout) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elt = type.getElementType();
  if (type.getRank() == 4) {
    if (!layout.unitHeads) {
      auto q = cast<RankedTensorType>(layout.query.getType());
      if (q.getShape().take_front(2) == type.getShape().take_front(2) &&
          !q.isDynamicDim(0) && !q.isDynamicDim(1))
        return x;
    }
    x = tensor::CollapseShapeOp::create(
        b, loc, x, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    type = cast<RankedTensorType>(x.getType());
  }
  SmallVector<OpFoldResult> shape;
  if (layout.unitHeads) {
    shape = {tensor::getMixedSize(b, loc, x, 0), b.getIndexAttr(1)};
  } else {
    shape = {tensor::getMixedSize(b, loc, layout.query, 0),
             tensor::getMixedSize(b, loc, layout.query, 1)};
  }
  shape.push_back(tensor::getMixedSize(b, loc, x, 1));
  shape.push_back(tensor::getMixedSize(b, loc, x, 2));
  auto [staticShape, dynamic] = decomposeMixedValues(shape);
  auto result = RankedTensorType::get(staticShape, elt);
  return tensor::ExpandShapeOp::create(
      b, loc, result, x, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}},
      shape);
}

/// Every part of the match, found before anything is built.
struct AttentionParts {
  ContractionView qk, pv;
  HeadOperand q, k, v;
  /// The probabilities as the softmax computed them, and their rank.
  Value probs;
  unsigned rank = 0;
  /// Reshapes were looked through between the two contractions.
  bool reshaped = false;
  /// The product of the constant factors of the scores.
  double scoresScale = 1.0;
  /// The cap of a softcap (0: none).
  double softcap = 0.0;
  /// The mask tensor and how the scores read it (no mask: null): additive,
  /// or boolean (i1) hiding keys where it is false (true when `maskHides`).
  /// Values, not the ScalarExprs of the match: those live in the builder of
  /// matchParts.
  Value mask;
  AffineMap maskMap;
  bool maskHides = false;
  std::optional<KeyBand> band;
  /// The expressions of the match (they live in `exprs`): the score_mod
  /// (null: none) and the node its score argument stands for, and the
  /// conditions of a mask_mod (empty: none).
  std::unique_ptr<ScalarExprBuilder> exprs;
  const ScalarExpr *scoreMod = nullptr, *scaledScores = nullptr;
  /// The Q K^T tensor the scores read.
  Value qkTensor;
  const ScalarExpr *additiveMask = nullptr;
  SmallVector<MaskCondition> maskMod;
};

static bool isAttentionElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32();
}

/// True when K or V (traced) can take the layout of Q as it is: the same
/// batch and Hq = Hkv * groups, proven from static sizes, or from the one
/// contraction both are read by without reshapes in between.
static bool fitsQueryHeads(const HeadOperand &q, const HeadOperand &x,
                           bool sameIndexSpace) {
  if (!q.heads || !x.heads || q.groups != 1)
    return false;
  auto qt = cast<RankedTensorType>(q.source.getType());
  auto xt = cast<RankedTensorType>(x.source.getType());
  int64_t qb = qt.getDimSize(q.perm[0]), qh = qt.getDimSize(q.perm[1]);
  int64_t xb = xt.getDimSize(x.perm[0]), xh = xt.getDimSize(x.perm[1]);
  if (!ShapedType::isDynamic(qb) && !ShapedType::isDynamic(qh) &&
      !ShapedType::isDynamic(xb) && !ShapedType::isDynamic(xh))
    return qb == xb && qh == xh * x.groups;
  return sameIndexSpace && !q.merged && !x.merged;
}

/// Matches everything; changes nothing.
static std::optional<AttentionParts> matchParts(linalg::LinalgOp pvOp,
                                                const TraceOptions &options) {
  AttentionParts parts;
  std::optional<ContractionView> pv = matchContraction(pvOp);
  if (!pv)
    return std::nullopt;
  parts.pv = *pv;
  // P is read as [batch..., Nq, Nk], in that order.
  if (!llvm::equal(pv->mPerm, llvm::seq<int64_t>(0, pv->mPerm.size())))
    return std::nullopt;
  // P through casts of the probabilities and batch reshapes.
  Value probs = pv->mSide;
  while (true) {
    Value peeled = peelBatchReshapes(probs);
    parts.reshaped |= peeled != probs;
    probs = peeled;
    auto cast = probs.getDefiningOp<linalg::GenericOp>();
    if (!cast || cast.getNumDpsInputs() != 1 || cast.getNumLoops() !=
                                                    cast.getNumParallelLoops() ||
        !llvm::all_of(cast.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      break;
    Block *body = cast.getBlock();
    if (body->getTerminator()->getNumOperands() != 1)
      break;
    Value y = body->getTerminator()->getOperand(0);
    auto conv = y.getDefiningOp();
    if (!conv || !isa<arith::ExtFOp, arith::TruncFOp>(conv) ||
        conv->getOperand(0) != body->getArgument(0))
      break;
    probs = cast.getDpsInputs()[0];
  }
  parts.probs = probs;
  parts.rank = cast<RankedTensorType>(probs.getType()).getRank();
  parts.exprs = std::make_unique<ScalarExprBuilder>(
      pvOp.getContext(), cast<RankedTensorType>(probs.getType()).getShape());
  ScalarExprBuilder &builder = *parts.exprs;
  const ScalarExpr *scores = matchLastDimSoftmax(builder, probs);
  if (!scores)
    return std::nullopt;
  std::optional<ScoresMatch> sm = matchScores(builder, scores);
  if (!sm)
    return std::nullopt;
  parts.scoresScale = sm->scale;
  parts.softcap = sm->softcap;
  parts.scoreMod = sm->scoreMod;
  parts.qkTensor = sm->qk;
  parts.scaledScores = sm->scaledScores;
  parts.maskMod = sm->maskModIf;
  // fa adds the mask operand before score_mod: an additive mask added after
  // what becomes the score_mod is read in the region instead.
  const ScalarExpr *additive = sm->mask;
  if (sm->scoreMod && additive) {
    parts.additiveMask = additive;
    additive = nullptr;
  }
  // fa.attention has one mask operand: with an additive one, a boolean mask
  // is read in a mask_mod.
  const ScalarExpr *boolean = sm->boolMask;
  if (additive && boolean) {
    parts.maskMod.push_back({boolean, sm->boolMaskHides, false});
    boolean = nullptr;
  }
  if (const ScalarExpr *mask = additive ? additive : boolean) {
    parts.mask = mask->tensor;
    parts.maskMap = mask->map;
    parts.maskHides = mask == boolean && sm->boolMaskHides;
  }
  Value qkValue = peelBatchReshapes(sm->qk);
  parts.reshaped |= qkValue != sm->qk;
  std::optional<ContractionView> qk =
      matchContraction(qkValue.getDefiningOp<linalg::LinalgOp>());
  if (!qk)
    return std::nullopt;
  parts.qk = *qk;
  TraceOptions noScale = options;
  noScale.scale = false;
  parts.q = traceOperand(qk->mSide, qk->mPerm, options);
  parts.k = traceOperand(qk->nSide, qk->nPerm, options);
  SmallVector<int64_t> vPerm = pv->nPerm;
  std::swap(vPerm[vPerm.size() - 1], vPerm[vPerm.size() - 2]);
  parts.v = traceOperand(pv->nSide, vPerm, noScale);
  Type elt = getElementTypeOrSelf(parts.q.source.getType());
  if (!isAttentionElementType(elt) ||
      getElementTypeOrSelf(parts.k.source.getType()) != elt ||
      getElementTypeOrSelf(parts.v.source.getType()) != elt ||
      !isAttentionElementType(getElementTypeOrSelf(pvOp->getResult(0))))
    return std::nullopt;
  // D and Dv are static in fa.attention.
  auto qType = cast<RankedTensorType>(parts.q.source.getType());
  auto vType = cast<RankedTensorType>(parts.v.source.getType());
  if (qType.isDynamicDim(parts.q.perm.back()) ||
      vType.isDynamicDim(parts.v.perm.back()))
    return std::nullopt;
  // A mask operand that is a constant tensor of a band (the causal mask of a
  // TOSA / ONNX export): the band instead, with the positional conditions.
  auto pType = cast<RankedTensorType>(probs.getType());
  bool staticGrid = !pType.isDynamicDim(parts.rank - 2) &&
                    !pType.isDynamicDim(parts.rank - 1);
  bool constantBand = false;
  if (parts.mask && staticGrid) {
    const ScalarExpr *leaf = additive ? additive : boolean;
    std::optional<ConstantMask> constant =
        matchConstantMask(leaf, parts.rank, parts.maskHides);
    if (constant) {
      parts.band = inferKeyBand(
          *sm, parts.rank, pType.getDimSize(parts.rank - 2),
          pType.getDimSize(parts.rank - 1),
          [&](int64_t i, int64_t j) { return constant->at(i, j); });
      if (parts.band && parts.band->finiteNegInf && parts.band->emptyRows)
        return std::nullopt;
      if (parts.band) {
        parts.mask = Value();
        parts.maskMap = AffineMap();
        parts.maskHides = false;
        constantBand = true;
      }
    }
  }
  // Positional masks: checked at every point of a static grid that is not
  // too large, else derived symbolically (dynamic sizes).
  if (!constantBand &&
      (!sm->keepIf.empty() || !sm->dropIf.empty() || !sm->zeroIf.empty())) {
    if (staticGrid)
      parts.band =
          inferKeyBand(*sm, parts.rank, pType.getDimSize(parts.rank - 2),
                       pType.getDimSize(parts.rank - 1));
    if (!parts.band)
      parts.band = deriveKeyBand(*sm, parts.rank);
    if (!parts.band) {
      // Not a band (j != i, a dilated pattern, ...): a mask_mod.
      for (const ScalarExpr *c : sm->keepIf)
        parts.maskMod.push_back({c, false, false});
      for (const ScalarExpr *c : sm->dropIf)
        parts.maskMod.push_back({c, true, false});
      // An additive positional mask must be select(c, 0, -inf) or
      // select(c, -inf, 0): anything else may hold finite values.
      for (const ScalarExpr *c : sm->zeroIf) {
        std::optional<MaskCondition> cond = matchAdditiveCondition(c);
        if (!cond)
          return std::nullopt;
        parts.maskMod.push_back(*cond);
      }
    } else if (parts.band->finiteNegInf && parts.band->emptyRows) {
      // A finite "-inf" and a fully masked row: the original averages the
      // row, fa gives 0.
      return std::nullopt;
    }
  }
  // Whether a mask_mod hides a whole row depends on what it reads: only a
  // real -inf is taken for one.
  if (!parts.maskMod.empty() && sm->finiteNegInf)
    return std::nullopt;
  return parts;
}

/// How the additive mask becomes fa.attention's [B or 1, H or 1, Nq, Nk]
/// operand.
enum class MaskForm {
  Unsupported,
  AsIs,        // already [1 or B, 1 or H, Nq, Nk] in the layout
  PerPosition, // [(1, ...,) Nq, Nk]: expanded to [1, 1, Nq, Nk]
  PerScore,    // [batch..., Nq, Nk]: reshaped like the operands
};

/// A mask read at row 0 of a unit query dim ([..., 1, Nk], a key padding
/// mask) is taken too: fa.attention broadcasts it over the query rows.
static MaskForm classifyMask(const AttentionParts &parts, bool unitHeads,
                             RankedTensorType query) {
  unsigned rank = parts.rank;
  auto type = cast<RankedTensorType>(parts.mask.getType());
  if (!isAttentionElementType(type.getElementType()) &&
      !type.getElementType().isInteger(1))
    return MaskForm::Unsupported;
  AffineMap map = parts.maskMap;
  unsigned n = map.getNumResults();
  MLIRContext *ctx = map.getContext();
  if (n < 2 || n > 4 || map.getResult(n - 1) != getAffineDimExpr(rank - 1, ctx))
    return MaskForm::Unsupported;
  bool rows = map.getResult(n - 2) == getAffineConstantExpr(0, ctx) &&
              type.getDimSize(n - 2) == 1;
  if (!rows && map.getResult(n - 2) != getAffineDimExpr(rank - 2, ctx))
    return MaskForm::Unsupported;
  SmallVector<int64_t> batchDims; // -1: a unit dim read at 0
  for (unsigned r = 0; r + 2 < n; ++r) {
    AffineExpr e = map.getResult(r);
    if (auto d = dyn_cast<AffineDimExpr>(e))
      batchDims.push_back(d.getPosition());
    else if (e == getAffineConstantExpr(0, ctx) && type.getDimSize(r) == 1)
      batchDims.push_back(-1);
    else
      return MaskForm::Unsupported;
  }
  if (llvm::all_of(batchDims, [](int64_t d) { return d < 0; }))
    return n == 4 ? MaskForm::AsIs : MaskForm::PerPosition;
  if (n == rank && llvm::equal(batchDims, llvm::seq<int64_t>(0, rank - 2)))
    return MaskForm::PerScore;
  // Broadcast over heads or batch alone: only where the scores' batch dims
  // are the layout's, statically.
  auto probs = cast<RankedTensorType>(parts.probs.getType());
  if (n == 4 && rank == 4 && !unitHeads && probs.hasStaticShape() &&
      query.hasStaticShape() &&
      query.getShape().take_front(2) == probs.getShape().take_front(2) &&
      (batchDims[0] < 0 || batchDims[0] == 0) &&
      (batchDims[1] < 0 || batchDims[1] == 1))
    return MaskForm::AsIs;
  return MaskForm::Unsupported;
}

/// The mask in fa's rank-4 form (a unit query dim stays).
static Value buildMask4D(OpBuilder &b, Location loc, Value m, MaskForm form,
                         const Layout &layout) {
  auto type = cast<RankedTensorType>(m.getType());
  using G = SmallVector<ReassociationIndices>;
  switch (form) {
  case MaskForm::Unsupported:
    return {};
  case MaskForm::AsIs:
    return m;
  case MaskForm::PerScore:
    return toLayout(b, loc, m, layout);
  case MaskForm::PerPosition: {
    int64_t n = type.getRank();
    auto result = RankedTensorType::get(
        {1, 1, type.getDimSize(n - 2), type.getDimSize(n - 1)},
        type.getElementType());
    G groups = n == 3 ? G{{0, 1}, {2}, {3}} : G{{0, 1, 2}, {3}};
    return tensor::ExpandShapeOp::create(b, loc, result, m, groups);
  }
  }
  return {};
}

/// not `m` (an i1 tensor), elementwise.
static Value buildNot(OpBuilder &b, Location loc, Value m) {
  auto type = cast<RankedTensorType>(m.getType());
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, m),
                                       type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> loops(type.getRank(),
                                         utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{m}, ValueRange{init},
      ArrayRef<AffineMap>{id, id}, loops,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value t = arith::ConstantIntOp::create(nb, nloc, 1, 1);
        Value x = arith::XOrIOp::create(nb, nloc, args[0], t);
        linalg::YieldOp::create(nb, nloc, x);
      });
  return op.getResult(0);
}

/// The mask operand; one read at row 0 of a unit query dim stays [Bm, Hm, 1,
/// Nk] (fa.attention broadcasts it over the query rows: key padding).
static Value buildMask(OpBuilder &b, Location loc, const AttentionParts &parts,
                       MaskForm form, const Layout &layout) {
  Value m = parts.mask;
  // A boolean mask that hides where true: fa's keeps where true.
  if (parts.maskHides)
    m = buildNot(b, loc, m);
  return buildMask4D(b, loc, m, form, layout);
}

/// fa.attention's form of a band: row i sees i + off - left <= j <= i + off +
/// right, off = Nk - Nq unless `diagonal` sets it (docs/Attention.md).
struct PositionalMask {
  bool causal = false;
  std::optional<SmallVector<int64_t, 2>> window;
  std::optional<int64_t> diagonal;
};

/// The band i + lower <= j <= i + upper as fa.attention states it: with the
/// default diagonal Nk - Nq where the sizes are static and the band's bounds
/// sit on its sides (no diagonal(...) clause), else with diagonal(...) at the
/// upper bound (or the lower one when the band is open above). right = 0 is
/// written `causal`.
static PositionalMask choosePositionalMask(const KeyBand &band, int64_t nq,
                                           int64_t nk) {
  PositionalMask mask;
  if (band.unmasked())
    return mask;
  auto fits = [&](int64_t off) {
    return (!band.upper || *band.upper >= off) &&
           (!band.lower || *band.lower <= off);
  };
  int64_t off;
  if (!ShapedType::isDynamic(nq) && !ShapedType::isDynamic(nk) &&
      fits(nk - nq)) {
    off = nk - nq;
  } else {
    off = band.upper ? *band.upper : *band.lower;
    mask.diagonal = off;
  }
  int64_t left = band.lower ? off - *band.lower : -1;
  int64_t right = band.upper ? *band.upper - off : -1;
  mask.causal = right == 0;
  if (left >= 0 || right > 0)
    mask.window = SmallVector<int64_t, 2>{left, right};
  return mask;
}

/// Where an operand of the raised op comes from.
enum class OperandForm {
  /// The traced [B, H(kv), N, D] tensor itself (GQA heads included).
  Direct,
  /// The traced tensor reshaped to the layout (its batch dims, flattened,
  /// are the contraction's: no repeated heads were looked through).
  Reshaped,
  /// The contraction's own operand reshaped to the layout (repeated heads
  /// that do not fit Q's: the repetition is kept; factors on it are not
  /// part of the scale).
  Read,
};

/// The decisions of the rewrite, all taken before anything is built.
struct RaisePlan {
  bool unitHeads = false;
  OperandForm k = OperandForm::Read, v = OperandForm::Read;
  MaskForm mask = MaskForm::Unsupported;
  double scale = 1.0;
  /// How the regions (when there are any) index the scores.
  std::optional<RegionIndexing> indexing;
};

/// How the regions' (b, h, i, j) give the scores' index space, or
/// std::nullopt when that is not known.
static std::optional<RegionIndexing>
chooseRegionIndexing(const AttentionParts &parts, bool unitHeads) {
  RegionIndexing indexing;
  auto probs = cast<RankedTensorType>(parts.probs.getType());
  if (parts.rank == 3) {
    if (unitHeads) {
      indexing.batch = RegionIndexing::Batch::Unit;
      return indexing;
    }
    // [B*H, Nq, Nk] read as fa's [B, H, ...]: row-major b * H + h.
    auto q = cast<RankedTensorType>(parts.q.source.getType());
    int64_t heads = q.getDimSize(parts.q.perm[1]);
    if (ShapedType::isDynamic(heads))
      return std::nullopt;
    indexing.batch = RegionIndexing::Batch::Flat;
    indexing.heads = heads;
    return indexing;
  }
  if (parts.rank != 4 || unitHeads)
    return std::nullopt;
  // [B, H, Nq, Nk]: the same (b, h) as Q's when the contractions read Q's
  // batch and heads as they are, or when the sizes say so.
  auto q = cast<RankedTensorType>(parts.q.source.getType());
  int64_t b = q.getDimSize(parts.q.perm[0]), h = q.getDimSize(parts.q.perm[1]);
  bool direct = !parts.reshaped && parts.q.heads && !parts.q.merged &&
                parts.qk.batchRank == 2 && parts.pv.batchRank == 2;
  bool sized = !ShapedType::isDynamic(b) && !ShapedType::isDynamic(h) &&
               probs.getDimSize(0) == b && probs.getDimSize(1) == h;
  if (!direct && !sized)
    return std::nullopt;
  indexing.batch = RegionIndexing::Batch::BH;
  return indexing;
}

static OperandForm chooseForm(const HeadOperand &q, const HeadOperand &x,
                              bool unitHeads, bool sameIndexSpace) {
  if (!unitHeads && fitsQueryHeads(q, x, sameIndexSpace))
    return OperandForm::Direct;
  return x.groups == 1 ? OperandForm::Reshaped : OperandForm::Read;
}

static std::optional<RaisePlan> planRaise(const AttentionParts &parts) {
  RaisePlan plan;
  if (parts.q.groups != 1)
    return std::nullopt;
  plan.unitHeads = !parts.q.heads;
  plan.k = chooseForm(parts.q, parts.k, plan.unitHeads, true);
  bool sameIndexSpace =
      !parts.reshaped && parts.pv.batchRank == parts.qk.batchRank;
  plan.v = chooseForm(parts.q, parts.v, plan.unitHeads, sameIndexSpace);
  Type q = getElementTypeOrSelf(parts.q.source.getType());
  Type k = getElementTypeOrSelf(plan.k == OperandForm::Read
                                    ? parts.qk.nSide.getType()
                                    : parts.k.source.getType());
  Type v = getElementTypeOrSelf(plan.v == OperandForm::Read
                                    ? parts.pv.nSide.getType()
                                    : parts.v.source.getType());
  if (!isAttentionElementType(q) || k != q || v != q)
    return std::nullopt;
  plan.scale = parts.scoresScale * parts.q.scale;
  if (plan.k != OperandForm::Read)
    plan.scale *= parts.k.scale;
  if (!std::isfinite(static_cast<float>(plan.scale)))
    return std::nullopt;
  if (parts.mask) {
    auto qt = cast<RankedTensorType>(parts.q.source.getType());
    SmallVector<int64_t> shape;
    for (int64_t p : parts.q.perm)
      shape.push_back(qt.getDimSize(p));
    plan.mask = classifyMask(parts, plan.unitHeads,
                             RankedTensorType::get(shape, qt.getElementType()));
    if (plan.mask == MaskForm::Unsupported)
      return std::nullopt;
  }
  if (parts.scoreMod || !parts.maskMod.empty()) {
    plan.indexing = chooseRegionIndexing(parts, plan.unitHeads);
    if (!plan.indexing)
      return std::nullopt;
  }
  return plan;
}

/// The regions of the raised op, built before any IR changes (detached):
/// the score_mod (empty: none) and the mask_mod (empty: none).
struct ModifierRegions {
  Region scoreMod, maskMod;
  bool any() { return !scoreMod.empty() || !maskMod.empty(); }
};

static LogicalResult buildModifierRegions(Location loc,
                                          const AttentionParts &parts,
                                          const RaisePlan &plan,
                                          Operation *insertionPoint,
                                          ModifierRegions &regions) {
  if (!plan.indexing)
    return success();
  // Detached regions, written without a listener: nothing is inserted into
  // the IR the rewriter tracks until they are moved onto the op.
  OpBuilder b(insertionPoint->getContext());
  DominanceInfo dominance;
  auto isAvailable = [&](Value v) {
    return dominance.properlyDominates(v, insertionPoint);
  };
  if (parts.scoreMod && failed(buildScoreModRegion(
                            b, loc, regions.scoreMod, *plan.indexing,
                            parts.scoreMod, parts.scaledScores,
                            parts.scaledScores->kind == ScalarExpr::Kind::Leaf
                                ? parts.scaledScores->tensor
                                : parts.qkTensor,
                            parts.additiveMask, isAvailable)))
    return failure();
  if (!parts.maskMod.empty() &&
      failed(buildMaskModRegion(b, loc, regions.maskMod, *plan.indexing,
                                parts.maskMod, isAvailable)))
    return failure();
  return success();
}

} // namespace

LogicalResult mlir::fa::raise::raiseAttention(RewriterBase &rewriter,
                                              linalg::LinalgOp pvOp) {
  // Casts are looked through first; when that leaves Q, K and V with
  // different element types, again without.
  std::optional<AttentionParts> parts = matchParts(pvOp, TraceOptions{});
  if (!parts)
    parts = matchParts(pvOp, TraceOptions{/*casts=*/false, /*scale=*/true});
  if (!parts)
    return failure();
  std::optional<RaisePlan> plan = planRaise(*parts);
  if (!plan)
    return failure();
  ModifierRegions regions;
  if (failed(buildModifierRegions(pvOp.getLoc(), *parts, *plan, pvOp, regions)))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(pvOp);
  Location loc = pvOp.getLoc();

  Layout layout;
  layout.unitHeads = plan->unitHeads;
  Value q = permute(rewriter, loc, parts->q.source, parts->q.perm);
  if (plan->unitHeads) {
    // Q has no head dim of its own: [B*H, N, D] as [B*H, 1, N, D].
    q = toLayout(rewriter, loc, q, layout);
  }
  layout.query = q;
  auto operand = [&](OperandForm form, const HeadOperand &x, Value read,
                     ArrayRef<int64_t> readPerm) {
    if (form == OperandForm::Read)
      return toLayout(rewriter, loc, permute(rewriter, loc, read, readPerm),
                      layout);
    Value traced = permute(rewriter, loc, x.source, x.perm);
    if (form == OperandForm::Direct)
      return traced;
    return toLayout(rewriter, loc, traced, layout);
  };
  Value k = operand(plan->k, parts->k, parts->qk.nSide, parts->qk.nPerm);
  SmallVector<int64_t> vPerm = parts->pv.nPerm;
  std::swap(vPerm[vPerm.size() - 1], vPerm[vPerm.size() - 2]);
  Value v = operand(plan->v, parts->v, parts->pv.nSide, vPerm);
  Value mask;
  if (parts->mask)
    mask = buildMask(rewriter, loc, *parts, plan->mask, layout);
  auto qType = cast<RankedTensorType>(q.getType());
  auto kType = cast<RankedTensorType>(k.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  PositionalMask positional;
  if (parts->band)
    positional = choosePositionalMask(*parts->band, qType.getDimSize(2),
                                      kType.getDimSize(2));
  Value diagonal;
  if (positional.diagonal)
    diagonal =
        arith::ConstantIndexOp::create(rewriter, loc, *positional.diagonal);
  UnitAttr causal = positional.causal ? rewriter.getUnitAttr() : UnitAttr();
  DenseI64ArrayAttr window;
  if (positional.window)
    window = rewriter.getDenseI64ArrayAttr(*positional.window);
  FloatAttr softcap;
  if (parts->softcap != 0.0)
    softcap = rewriter.getF32FloatAttr(static_cast<float>(parts->softcap));
  double scale = plan->scale;
  Type outElt = getElementTypeOrSelf(pvOp->getResult(0));
  auto outType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), qType.getDimSize(2),
       vType.getDimSize(3)},
      outElt);
  auto attention = AttentionOp::create(
      rewriter, loc, outType, Type(), q, k, v, mask, Value(), Value(), Value(),
      diagonal, /*kv_lens=*/Value(), /*pages=*/Value(),
      /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      rewriter.getF32FloatAttr(static_cast<float>(scale)), causal, window,
      softcap, DenseI64ArrayAttr(), /*modifiersCount=*/regions.any() ? 2 : 0);
  if (regions.any()) {
    MutableArrayRef<Region> modifiers = attention.getModifiers();
    rewriter.inlineRegionBefore(regions.scoreMod, modifiers[0],
                                modifiers[0].end());
    rewriter.inlineRegionBefore(regions.maskMod, modifiers[1],
                                modifiers[1].end());
  }
  if (failed(mlir::verify(attention))) {
    rewriter.eraseOp(attention);
    return failure();
  }

  // Back to the contraction's result type.
  Value result = attention.getOut();
  auto pvType = cast<RankedTensorType>(pvOp->getResult(0).getType());
  if (result.getType() != pvType) {
    result = tensor::CollapseShapeOp::create(
        rewriter, loc, result,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    if (pvType.getRank() == 4) {
      SmallVector<OpFoldResult> shape =
          tensor::getMixedSizes(rewriter, loc, pvOp.getDpsInits()[0]);
      auto [staticShape, dynamic] = decomposeMixedValues(shape);
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(staticShape, outElt), result,
          SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}, shape);
    }
    if (result.getType() != pvType)
      result = tensor::CastOp::create(rewriter, loc, pvType, result);
  }
  rewriter.replaceOp(pvOp, result);
  return success();
}

namespace {
struct RaiseAttentionPattern
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    return raiseAttention(rewriter, op);
  }
};

struct FARaiseAttentionPass
    : fa::impl::FARaiseAttentionPassBase<FARaiseAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::fa::populateRaiseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttentionPattern>(patterns.getContext());
}
