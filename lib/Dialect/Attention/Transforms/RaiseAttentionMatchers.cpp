//===- RaiseAttentionMatchers.cpp - attention in linalg, recognized -------===//
//
// The symbolic evaluator of elementwise linalg chains and the matchers of
// fa-raise-attention built on it (include/fa/Dialect/Attention/Transforms/
// RaiseAttention.h); the positional proofs are in RaiseAttentionBands.cpp.
// Every matcher proves what it accepts from the IR and
// answers "no" otherwise; nothing here changes the IR.
//
//===----------------------------------------------------------------------===//
#include "RaiseAttentionInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::fa::raise;

//===----------------------------------------------------------------------===//
// ScalarExprBuilder
//===----------------------------------------------------------------------===//

const ScalarExpr *ScalarExprBuilder::make(ScalarExpr expr) {
  if (nodes.size() >= kMaxNodes)
    return nullptr;
  nodes.push_back(std::move(expr));
  return &nodes.back();
}

bool ScalarExprBuilder::isIdentityUpToUnitDims(AffineMap map) const {
  if (!map || map.getNumDims() != rank || map.getNumSymbols() != 0)
    return false;
  unsigned next = 0;
  for (AffineExpr r : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(r);
    if (!d)
      return false;
    // Dims skipped before this one must be static unit batch dims.
    for (; next < d.getPosition(); ++next)
      if (next + 2 >= rank || shape[next] != 1)
        return false;
    if (d.getPosition() != next)
      return false;
    ++next;
  }
  return next == rank;
}

const ScalarExpr *ScalarExprBuilder::leaf(Value tensor, AffineMap access) {
  ScalarExpr e;
  e.kind = ScalarExpr::Kind::Leaf;
  e.tensor = tensor;
  e.map = access;
  return make(std::move(e));
}

/// True for a linalg op whose loops are all parallel, whose output maps are
/// permutations and whose input maps are projected permutations (possibly with
/// constant 0 results, a broadcast unit dim): one output element depends on
/// one element of each input.
static bool isElementwiseLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumRegions() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isPermutation())
      return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!op.getMatchingIndexingMap(input).isProjectedPermutation(
            /*allowZeroInResults=*/true))
      return false;
  return true;
}

/// The source index map of a reshape that only adds or drops unit dims:
/// `access` reads the result; the returned map reads the source.
static std::optional<AffineMap>
unitReshapeSourceMap(ArrayRef<ReassociationIndices> groups,
                     RankedTensorType expanded, bool resultIsExpanded,
                     AffineMap access, MLIRContext *context) {
  // Each group of the expanded type holds at most one non-unit dim; that dim
  // carries the index of the collapsed dim.
  SmallVector<AffineExpr> results;
  for (auto [g, group] : llvm::enumerate(groups)) {
    std::optional<int64_t> wide;
    for (int64_t d : group) {
      if (expanded.getDimSize(d) == 1)
        continue;
      if (wide)
        return std::nullopt;
      wide = d;
    }
    if (resultIsExpanded) {
      // Source dim g is read where the result's wide dim of the group is.
      results.push_back(wide ? access.getResult(*wide)
                             : getAffineConstantExpr(0, context));
    } else {
      for (int64_t d : group)
        results.push_back(d == wide ? access.getResult(g)
                                    : getAffineConstantExpr(0, context));
    }
  }
  return AffineMap::get(access.getNumDims(), 0, results, context);
}

const ScalarExpr *ScalarExprBuilder::evaluate(Value tensor, AffineMap access) {
  auto key = std::make_pair(tensor, access);
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  // Chains of copies create no nodes: their length is bounded on its own.
  if (depth >= kMaxDepth)
    return nullptr;
  ++depth;
  llvm::scope_exit leave([&] { --depth; });
  const ScalarExpr *result = nullptr;
  Operation *def = tensor.getDefiningOp();
  Attribute attr;
  if (def && matchPattern(tensor, m_Constant(&attr))) {
    auto splat = dyn_cast<SplatElementsAttr>(attr);
    auto typed = dyn_cast<TypedAttr>(attr);
    if (splat)
      typed = splat.getSplatValue<TypedAttr>();
    if (typed && (isa<FloatAttr, IntegerAttr>(typed))) {
      ScalarExpr e;
  e.kind = ScalarExpr::Kind::Constant;
      e.constant = typed;
      result = make(std::move(e));
    } else {
      result = leaf(tensor, access);
    }
  } else if (auto castOp = dyn_cast_or_null<tensor::CastOp>(def)) {
    result = evaluate(castOp.getSource(), access);
  } else if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
    std::optional<AffineMap> src = unitReshapeSourceMap(
        expand.getReassociationIndices(), expand.getResultType(),
        /*resultIsExpanded=*/true, access, context);
    result = src ? evaluate(expand.getSrc(), *src) : leaf(tensor, access);
  } else if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
    std::optional<AffineMap> src = unitReshapeSourceMap(
        collapse.getReassociationIndices(), collapse.getSrcType(),
        /*resultIsExpanded=*/false, access, context);
    result = src ? evaluate(collapse.getSrc(), *src) : leaf(tensor, access);
  } else if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def);
             linalgOp && isElementwiseLinalg(linalgOp)) {
    auto res = cast<OpResult>(tensor);
    AffineMap out = linalgOp.getIndexingMapMatchingResult(res);
    AffineMap loops = inversePermutation(out).compose(access);
    auto yield = dyn_cast<linalg::YieldOp>(linalgOp.getBlock()->getTerminator());
    result = yield ? evaluateBody(linalgOp,
                                  yield.getOperand(res.getResultNumber()), loops)
                   : nullptr;
  } else {
    result = leaf(tensor, access);
  }
  memo[key] = result;
  return result;
}

const ScalarExpr *ScalarExprBuilder::evaluateBody(linalg::LinalgOp op,
                                                  Value bodyValue,
                                                  AffineMap loops, Value skip) {
  if (auto arg = dyn_cast<BlockArgument>(bodyValue)) {
    if (arg == skip || arg.getOwner() != op.getBlock())
      return leaf(bodyValue, AffineMap::get(rank, 0, {}, context));
    OpOperand *operand = op.getMatchingOpOperand(arg);
    if (!operand)
      return nullptr;
    Value source = operand->get();
    if (!isa<RankedTensorType>(source.getType())) {
      // A scalar operand (linalg.fill's value): the scalar itself.
      return evaluate(source, AffineMap::get(rank, 0, {}, context));
    }
    return evaluate(source, op.getMatchingIndexingMap(operand).compose(loops));
  }
  Operation *def = bodyValue.getDefiningOp();
  if (!def)
    return nullptr;
  if (def->getBlock() != op.getBlock()) {
    // A value from above: a constant or a runtime scalar.
    return evaluate(bodyValue, AffineMap::get(rank, 0, {}, context));
  }
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    if (index.getDim() >= loops.getNumResults())
      return nullptr;
    ScalarExpr e;
  e.kind = ScalarExpr::Kind::Index;
    e.index = loops.getResult(index.getDim());
    return make(std::move(e));
  }
  if (matchPattern(bodyValue, m_Constant()))
    return evaluate(bodyValue, AffineMap::get(rank, 0, {}, context));
  if (auto extract = dyn_cast<tensor::ExtractOp>(def)) {
    // A tensor from above read at loop positions or constants (a runtime
    // length, a per-head slope): a leaf at that map. Other indices are not
    // modeled.
    Value source = extract.getTensor();
    if (auto arg = dyn_cast<BlockArgument>(source);
        arg && arg.getOwner() == op.getBlock())
      return nullptr;
    if (Operation *sdef = source.getDefiningOp();
        sdef && sdef->getBlock() == op.getBlock())
      return nullptr;
    SmallVector<AffineExpr> results;
    for (Value index : extract.getIndices()) {
      if (auto pos = index.getDefiningOp<linalg::IndexOp>();
          pos && pos->getBlock() == op.getBlock() &&
          pos.getDim() < loops.getNumResults()) {
        results.push_back(loops.getResult(pos.getDim()));
        continue;
      }
      IntegerAttr c;
      if (!matchPattern(index, m_Constant(&c)))
        return nullptr;
      results.push_back(getAffineConstantExpr(c.getInt(), context));
    }
    return leaf(source, AffineMap::get(rank, 0, results, context));
  }
  if (def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !isa<arith::ArithDialect, math::MathDialect>(def->getDialect()))
    return nullptr;
  ScalarExpr e;
  e.kind = ScalarExpr::Kind::Op;
  e.op = def;
  for (Value operand : def->getOperands()) {
    const ScalarExpr *x = evaluateBody(op, operand, loops, skip);
    if (!x)
      return nullptr;
    e.operands.push_back(x);
  }
  return make(std::move(e));
}

//===----------------------------------------------------------------------===//
// Expression helpers
//===----------------------------------------------------------------------===//

const ScalarExpr *mlir::fa::raise::stripCasts(const ScalarExpr *e) {
  while (isOp<arith::ExtFOp>(e) || isOp<arith::TruncFOp>(e))
    e = e->operands[0];
  return e;
}

std::optional<double> mlir::fa::raise::getConstantValue(const ScalarExpr *e) {
  e = stripCasts(e);
  if (!e || e->kind != ScalarExpr::Kind::Constant)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(e->constant))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(e->constant))
    return static_cast<double>(i.getValue().getSExtValue());
  return std::nullopt;
}

/// sameUpToCasts with a bound on the pairs compared: two DAGs can be equal
/// as trees exponentially larger than themselves.
static bool sameUpToCasts(const ScalarExpr *a, const ScalarExpr *b,
                          int64_t &budget) {
  a = stripCasts(a);
  b = stripCasts(b);
  if (a == b)
    return true;
  if (--budget < 0)
    return false;
  if (!a || !b || a->kind != b->kind)
    return false;
  switch (a->kind) {
  case ScalarExpr::Kind::Leaf:
    return a->tensor == b->tensor && a->map == b->map;
  case ScalarExpr::Kind::Constant:
    return getConstantValue(a) == getConstantValue(b);
  case ScalarExpr::Kind::Index:
    return a->index == b->index;
  case ScalarExpr::Kind::Op:
    if (a->op->getName() != b->op->getName() ||
        a->operands.size() != b->operands.size())
      return false;
    if (auto cmp = dyn_cast<arith::CmpFOp>(a->op))
      if (cmp.getPredicate() != cast<arith::CmpFOp>(b->op).getPredicate())
        return false;
    if (auto cmp = dyn_cast<arith::CmpIOp>(a->op))
      if (cmp.getPredicate() != cast<arith::CmpIOp>(b->op).getPredicate())
        return false;
    for (auto [x, y] : llvm::zip(a->operands, b->operands))
      if (!sameUpToCasts(x, y, budget))
        return false;
    return true;
  }
  return false;
}

bool mlir::fa::raise::sameUpToCasts(const ScalarExpr *a, const ScalarExpr *b) {
  int64_t budget = int64_t(1) << 16;
  return ::sameUpToCasts(a, b, budget);
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// True when `v` is zero: a constant, or linalg.fill / a splat of zero.
static bool isZeroTensor(Value v) {
  if (matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero()))
    return true;
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
           matchPattern(fill.getInputs()[0], m_Zero());
  return false;
}

/// `v` through arith.extf (the operand of a mixed-precision multiply).
static Value throughExt(Value v) {
  while (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  return v;
}

/// yield(acc + a * b), in any operand order, with a and b the two input block
/// arguments (possibly extended) and acc the accumulator.
static bool hasMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? throughExt(product).getDefiningOp<arith::MulFOp>()
                     : arith::MulFOp();
  if (!mul)
    return false;
  Value a = throughExt(mul.getLhs()), b = throughExt(mul.getRhs());
  Value x = body->getArgument(0), y = body->getArgument(1);
  return (a == x && b == y) || (a == y && b == x);
}

/// The positions in `map`'s results of `dims`, in order.
static std::optional<SmallVector<int64_t>> positionsOf(AffineMap map,
                                                       ArrayRef<unsigned> dims) {
  if (map.getNumResults() != dims.size())
    return std::nullopt;
  SmallVector<int64_t> perm;
  for (unsigned d : dims) {
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(d, map.getContext()));
    if (!pos)
      return std::nullopt;
    perm.push_back(*pos);
  }
  return perm;
}

std::optional<ContractionView>
mlir::fa::raise::matchContraction(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
      op.getBlock()->getNumArguments() != 3 || !hasMulAddBody(op))
    return std::nullopt;
  if (!isZeroTensor(op.getDpsInits()[0]))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  AffineMap out = maps[2];
  unsigned outRank = out.getNumResults();
  if (outRank < 3 || outRank > 4 || op.getNumLoops() != outRank + 1 ||
      op.getNumReductionLoops() != 1)
    return std::nullopt;
  SmallVector<unsigned> outDims;
  for (AffineExpr r : out.getResults())
    outDims.push_back(cast<AffineDimExpr>(r).getPosition());
  unsigned k = 0;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (!out.isFunctionOfDim(d))
      k = d;
  if (!(op.getIteratorTypesArray()[k] == utils::IteratorType::reduction))
    return std::nullopt;
  unsigned m = outDims[outRank - 2], n = outDims[outRank - 1];
  ContractionView view;
  view.op = op;
  view.batchRank = outRank - 2;
  SmallVector<unsigned> mDims(outDims.begin(), outDims.end() - 2);
  SmallVector<unsigned> nDims = mDims;
  mDims.append({m, k});
  nDims.append({n, k});
  for (unsigned lhs : {0u, 1u}) {
    auto mPerm = positionsOf(maps[lhs], mDims);
    auto nPerm = positionsOf(maps[1 - lhs], nDims);
    if (!mPerm || !nPerm)
      continue;
    view.mSide = op.getDpsInputs()[lhs];
    view.nSide = op.getDpsInputs()[1 - lhs];
    view.mPerm = *mPerm;
    view.nPerm = *nPerm;
    return view;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

enum class Combiner { Max, Sum };

/// True when `init` is the identity of the combiner: 0 for a sum, -inf or a
/// value <= -1e30 for a max.
static bool isReductionIdentity(Value init, Combiner combiner) {
  Value scalar = init;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    scalar = fill.getInputs()[0];
  if (combiner == Combiner::Sum)
    return isZeroTensor(init) || matchPattern(scalar, m_AnyZeroFloat());
  Attribute attr;
  if (!matchPattern(scalar, m_Constant(&attr)))
    return false;
  if (auto splat = dyn_cast<SplatElementsAttr>(attr))
    attr = splat.getSplatValue<Attribute>();
  auto f = dyn_cast<FloatAttr>(attr);
  return f && f.getValueAsDouble() <= -1e30;
}

/// The element expression `x` when `combined` is combiner(x, acc) in either
/// order: addf for a sum; maximumf, maxnumf or select(cmpf ogt/oge (x, acc),
/// x, acc) for a max.
static Value splitCombiner(Value combined, Value acc, Combiner combiner) {
  Operation *def = combined.getDefiningOp();
  if (!def)
    return {};
  auto other = [&](Value a, Value b) -> Value {
    return a == acc ? b : b == acc ? a : Value();
  };
  if (combiner == Combiner::Sum) {
    if (auto add = dyn_cast<arith::AddFOp>(def))
      return other(add.getLhs(), add.getRhs());
    return {};
  }
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    return other(def->getOperand(0), def->getOperand(1));
  if (auto sel = dyn_cast<arith::SelectOp>(def)) {
    auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
    if (!cmp)
      return {};
    using P = arith::CmpFPredicate;
    bool greater = cmp.getPredicate() == P::OGT || cmp.getPredicate() == P::OGE;
    bool less = cmp.getPredicate() == P::OLT || cmp.getPredicate() == P::OLE;
    Value x = sel.getTrueValue();
    if (sel.getFalseValue() != acc)
      return {};
    if ((greater && cmp.getLhs() == x && cmp.getRhs() == acc) ||
        (less && cmp.getLhs() == acc && cmp.getRhs() == x))
      return x;
  }
  return {};
}

/// When the leaf `e` reads a reduction over the last dim of the index space
/// (one element per row, broadcast along the last dim), the expression of the
/// reduced element, in the index space.
static const ScalarExpr *matchRowReduction(ScalarExprBuilder &builder,
                                           const ScalarExpr *e,
                                           Combiner combiner) {
  e = stripCasts(e);
  if (!isTensorLeaf(e))
    return nullptr;
  unsigned rank = builder.getRank();
  // The row map: (d0, ..., d[rank-2]) or, keepdim, with a trailing 0.
  AffineMap map = e->map;
  unsigned rows = rank - 1;
  if (map.getNumResults() != rows && map.getNumResults() != rows + 1)
    return nullptr;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    AffineExpr want = r < rows ? getAffineDimExpr(r, map.getContext())
                               : getAffineConstantExpr(0, map.getContext());
    if (map.getResult(r) != want)
      return nullptr;
  }
  auto op = e->tensor.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op->getNumRegions() != 1 ||
      op.getNumLoops() != rank || op.getNumReductionLoops() != 1 ||
      !(op.getIteratorTypesArray()[rank - 1] == utils::IteratorType::reduction))
    return nullptr;
  auto result = cast<OpResult>(e->tensor);
  OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
  AffineMap out = op.getMatchingIndexingMap(init);
  if (out.getNumResults() != map.getNumResults())
    return nullptr;
  for (unsigned r = 0; r < out.getNumResults(); ++r)
    if (out.getResult(r) != map.getResult(r))
      return nullptr;
  if (!isReductionIdentity(init->get(), combiner))
    return nullptr;
  auto yield = dyn_cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  if (!yield)
    return nullptr;
  Value acc = op.getMatchingBlockArgument(init);
  Value element = splitCombiner(yield.getOperand(result.getResultNumber()),
                                acc, combiner);
  if (!element)
    return nullptr;
  return builder.evaluateBody(op, element, builder.identity(), acc);
}

const ScalarExpr *mlir::fa::raise::matchLastDimSoftmax(ScalarExprBuilder &builder,
                                                       Value probs) {
  unsigned rank = builder.getRank();
  if (auto softmax = probs.getDefiningOp<linalg::SoftmaxOp>()) {
    if (softmax.getDimension() != rank - 1)
      return nullptr;
    return builder.evaluate(softmax.getInput(), builder.identity());
  }
  const ScalarExpr *p = stripCasts(builder.evaluate(probs, builder.identity()));
  // p = num / den, or num * (1 / den), or num * recip with recip = 1 / den.
  const ScalarExpr *num = nullptr, *den = nullptr;
  if (isOp<arith::DivFOp>(p)) {
    num = p->operands[0];
    den = p->operands[1];
  } else if (isOp<arith::MulFOp>(p)) {
    for (unsigned side : {0u, 1u}) {
      const ScalarExpr *r = stripCasts(p->operands[side]);
      if (isOp<arith::DivFOp>(r) && getConstantValue(r->operands[0]) == 1.0) {
        num = p->operands[1 - side];
        den = r->operands[1];
      }
    }
  }
  if (!num || !den)
    return nullptr;
  const ScalarExpr *summed = matchRowReduction(builder, den, Combiner::Sum);
  if (!summed || !sameUpToCasts(summed, num))
    return nullptr;
  // num = exp(s - max).
  const ScalarExpr *ex = stripCasts(num);
  if (!isOp<math::ExpOp>(ex))
    return nullptr;
  const ScalarExpr *diff = stripCasts(ex->operands[0]);
  if (!isOp<arith::SubFOp>(diff))
    return nullptr;
  const ScalarExpr *scores = diff->operands[0];
  const ScalarExpr *maxed =
      matchRowReduction(builder, diff->operands[1], Combiner::Max);
  if (!maxed || !sameUpToCasts(maxed, scores))
    return nullptr;
  return scores;
}

//===----------------------------------------------------------------------===//
// Scores: scale and masks
//===----------------------------------------------------------------------===//

Value mlir::fa::raise::peelBatchReshapes(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto cast = dyn_cast<tensor::CastOp>(def)) {
      v = cast.getSource();
      continue;
    }
    SmallVector<ReassociationIndices> groups;
    RankedTensorType expanded;
    Value src;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      groups = expand.getReassociationIndices();
      expanded = expand.getResultType();
      src = expand.getSrc();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      groups = collapse.getReassociationIndices();
      expanded = collapse.getSrcType();
      src = collapse.getSrc();
    } else {
      break;
    }
    int64_t rank = expanded.getRank();
    if (groups.size() < 3 || groups.back() != ReassociationIndices{rank - 1} ||
        groups[groups.size() - 2] != ReassociationIndices{rank - 2})
      break;
    v = src;
  }
  return v;
}

bool mlir::fa::raise::isContractionResult(Value v) {
  auto op = peelBatchReshapes(v).getDefiningOp<linalg::LinalgOp>();
  return op && matchContraction(op).has_value();
}

/// True when `e` depends on nothing but constants and the positions i, j (the
/// last two dims of the index space). Memoized: expressions are DAGs (a tensor
/// read twice is one node), whose trees can be exponentially larger.
static bool isPositional(const ScalarExpr *e, unsigned rank,
                         DenseMap<const ScalarExpr *, bool> &memo) {
  if (auto it = memo.find(e); it != memo.end())
    return it->second;
  bool result = false;
  switch (e->kind) {
  case ScalarExpr::Kind::Constant:
    result = true;
    break;
  case ScalarExpr::Kind::Leaf:
    result = false;
    break;
  case ScalarExpr::Kind::Index:
    result = true;
    for (unsigned d = 0; d + 2 < rank; ++d)
      if (e->index.isFunctionOfDim(d))
        result = false;
    break;
  case ScalarExpr::Kind::Op:
    result = llvm::all_of(e->operands, [&](const ScalarExpr *x) {
      return isPositional(x, rank, memo);
    });
    break;
  }
  memo[e] = result;
  return result;
}

/// True when `pred` holds at `e` or at a node below it. Memoized per node: the
/// expressions are DAGs.
template <typename Pred>
static bool anyNode(const ScalarExpr *e, Pred pred,
                    DenseMap<const ScalarExpr *, bool> &memo) {
  if (auto it = memo.find(e); it != memo.end())
    return it->second;
  bool result = pred(e) || llvm::any_of(e->operands, [&](const ScalarExpr *o) {
                  return anyNode(o, pred, memo);
                });
  memo[e] = result;
  return result;
}

/// True when `e` reads a contraction's result (the scores themselves).
static bool readsContractionResult(const ScalarExpr *e,
                                   DenseMap<const ScalarExpr *, bool> &memo) {
  return anyNode(
      e,
      [](const ScalarExpr *x) {
        return isTensorLeaf(x) && isContractionResult(x->tensor);
      },
      memo);
}

/// True when a constant of `e` is -inf-like (-inf, or <= -1e30).
static bool mentionsNegInf(const ScalarExpr *e,
                           DenseMap<const ScalarExpr *, bool> &memo) {
  return anyNode(
      e,
      [](const ScalarExpr *x) {
        bool finite = false;
        return x->kind == ScalarExpr::Kind::Constant && isNegInfLike(x, finite);
      },
      memo);
}

/// The i1 tensor leaf that condition `c` reads, through xori with true (a
/// negation, toggling `negated`); null for anything else.
static const ScalarExpr *matchBooleanLeaf(const ScalarExpr *c, bool &negated) {
  negated = false;
  while (isOp<arith::XOrIOp>(c)) {
    if (isTrueConstant(c->operands[1]))
      c = c->operands[0];
    else if (isTrueConstant(c->operands[0]))
      c = c->operands[1];
    else
      return nullptr;
    negated = !negated;
  }
  if (!isTensorLeaf(c) ||
      !getElementTypeOrSelf(c->tensor.getType()).isInteger(1))
    return nullptr;
  return c;
}

/// Peels products and quotients by constants off `e`, multiplying them into
/// `factor`; false on a product with no constant side.
static bool peelConstantFactors(const ScalarExpr *&e, double &factor,
                                unsigned *length = nullptr) {
  while (true) {
    std::optional<double> c;
    if (isOp<arith::MulFOp>(e)) {
      unsigned side = 1;
      c = getConstantValue(e->operands[1]);
      if (!c) {
        side = 0;
        c = getConstantValue(e->operands[0]);
      }
      if (!c)
        return false;
      factor *= *c;
      e = stripCasts(e->operands[1 - side]);
    } else if (isOp<arith::DivFOp>(e)) {
      c = getConstantValue(e->operands[1]);
      if (!c || *c == 0.0)
        return false;
      factor /= *c;
      e = stripCasts(e->operands[0]);
    } else {
      return true;
    }
    if (length)
      ++*length;
  }
}

/// Fills `match.scoreMod`, `qk`, `scaledScores` and `scale` for a score_mod
/// `e`: exactly one tensor, a contraction's result, is read at the identity,
/// and every path to it passes through one node `c * qk` (constant factors),
/// which the region's score argument stands for (else the leaf itself, scale
/// 1). False when `e` reads no such tensor, or two.
static bool matchScoreMod(const ScalarExprBuilder &builder, const ScalarExpr *e,
                          ScoresMatch &match) {
  // The qk leaf and its scaled forms, over the DAG; `otherRead`: a second
  // contraction result, or the scores read at other positions.
  const ScalarExpr *leaf = nullptr;
  bool otherRead = false;
  // (node, its factor, the number of factors peeled).
  SmallVector<std::tuple<const ScalarExpr *, double, unsigned>> scaled;
  DenseSet<const ScalarExpr *> seen;
  std::function<void(const ScalarExpr *)> visit = [&](const ScalarExpr *x) {
    if (!seen.insert(x).second)
      return;
    if (isTensorLeaf(x) && isContractionResult(x->tensor)) {
      // One contraction result, read at the identity only.
      if ((leaf && leaf->tensor != x->tensor) ||
          !builder.isIdentityUpToUnitDims(x->map))
        otherRead = true;
      leaf = leaf ? leaf : x;
      return;
    }
    if (isOp<arith::MulFOp>(x) || isOp<arith::DivFOp>(x)) {
      const ScalarExpr *inner = x;
      double factor = 1.0;
      unsigned length = 0;
      if (peelConstantFactors(inner, factor, &length) && isTensorLeaf(inner) &&
          builder.isIdentityUpToUnitDims(inner->map) &&
          isContractionResult(inner->tensor))
        scaled.push_back({x, factor, length});
    }
    for (const ScalarExpr *o : x->operands)
      visit(o);
  };
  visit(e);
  if (!leaf || otherRead)
    return false;
  match.scoreMod = e;
  match.qk = leaf->tensor;
  match.scaledScores = leaf;
  match.scale = 1.0;
  // The outermost scaled form (the longest chain of factors), when the leaf
  // is reached only through it.
  // Longest first; among equals, in the order found (deterministic).
  SmallVector<unsigned> order(scaled.size());
  for (unsigned n = 0; n < order.size(); ++n)
    order[n] = n;
  llvm::sort(order, [&](unsigned a, unsigned b) {
    unsigned la = std::get<2>(scaled[a]), lb = std::get<2>(scaled[b]);
    return la != lb ? la > lb : a < b;
  });
  for (unsigned n : order) {
    const ScalarExpr *node = std::get<0>(scaled[n]);
    double factor = std::get<1>(scaled[n]);
    if (!std::isfinite(static_cast<float>(factor)) || factor == 0.0)
      continue;
    // Every path from `e` to the leaf passes through `node`.
    DenseMap<const ScalarExpr *, bool> reaches;
    std::function<bool(const ScalarExpr *)> bypasses =
        [&](const ScalarExpr *x) -> bool {
      if (x == node)
        return false;
      if (x == leaf || (isTensorLeaf(x) && x->tensor == leaf->tensor))
        return true;
      if (auto it = reaches.find(x); it != reaches.end())
        return it->second;
      bool r = llvm::any_of(x->operands, bypasses);
      reaches[x] = r;
      return r;
    };
    if (bypasses(e))
      continue;
    match.scaledScores = node;
    match.scale = factor;
    break;
  }
  return true;
}

std::optional<MaskCondition>
mlir::fa::raise::matchAdditiveCondition(const ScalarExpr *e) {
  e = stripCasts(e);
  if (!isOp<arith::SelectOp>(e) ||
      !getElementTypeOrSelf(e->op->getOperand(0).getType()).isInteger(1))
    return std::nullopt;
  auto isNegInf = [](const ScalarExpr *x) {
    std::optional<double> v = getConstantValue(x);
    return v && std::isinf(*v) && *v < 0;
  };
  if (getConstantValue(e->operands[1]) == 0.0 && isNegInf(e->operands[2]))
    return MaskCondition{e->operands[0], false, false};
  if (getConstantValue(e->operands[2]) == 0.0 && isNegInf(e->operands[1]))
    return MaskCondition{e->operands[0], true, false};
  return std::nullopt;
}

std::optional<ScoresMatch>
mlir::fa::raise::matchScores(const ScalarExprBuilder &builder,
                             const ScalarExpr *scores) {
  unsigned rank = builder.getRank();
  ScoresMatch match;
  const ScalarExpr *e = stripCasts(scores);
  DenseMap<const ScalarExpr *, bool> positionalMemo, scoresMemo;
  auto isPositional = [&](const ScalarExpr *x, unsigned rank) {
    return ::isPositional(x, rank, positionalMemo);
  };
  auto readsScores = [&](const ScalarExpr *x) {
    return ::readsContractionResult(x, scoresMemo);
  };
  DenseMap<const ScalarExpr *, bool> negInfMemo;
  auto mentionsNegInf = [&](const ScalarExpr *x) {
    return ::mentionsNegInf(x, negInfMemo);
  };
  // A boolean mask tensor read by `cond`: hides where it is false, or where
  // it is true when `hidesWhereTrue`. It must be the only one, and its -inf a
  // real one (whether a row loses every key depends on the data: a finite
  // "-inf" would average such a row where fa gives 0).
  auto takeBooleanMask = [&](const ScalarExpr *cond, bool hidesWhereTrue,
                             bool finite) {
    bool negated;
    const ScalarExpr *m = matchBooleanLeaf(cond, negated);
    if (!m || finite || match.boolMask)
      return false;
    match.boolMask = m;
    match.boolMaskHides = hidesWhereTrue != negated;
    return true;
  };
  // Masks come last (fa's order: scale, softcap, then masks): peel them
  // first. What is not a mask ends the peeling; it is then the scale (and
  // cap) of the scores, or a score_mod.
  while (true) {
    if (isOp<arith::SelectOp>(e)) {
      const ScalarExpr *cond = e->operands[0];
      bool finite = false, hides;
      const ScalarExpr *rest;
      if (isNegInfLike(e->operands[2], finite)) {
        hides = false;
        rest = e->operands[1];
      } else if (isNegInfLike(e->operands[1], finite)) {
        hides = true;
        rest = e->operands[2];
      } else {
        break; // select(c, s, -1e9): a finite bias, part of a score_mod
      }
      if (readsScores(cond))
        break; // a condition on the score itself: part of a score_mod
      if (isPositional(cond, rank)) {
        match.finiteNegInf |= finite;
        (hides ? match.dropIf : match.keepIf).push_back(cond);
      } else if (!takeBooleanMask(cond, hides, finite)) {
        match.finiteNegInf |= finite;
        match.maskModIf.push_back({cond, hides, /*zero=*/false});
      }
      e = stripCasts(rest);
      continue;
    }
    if (isOp<arith::AddFOp>(e)) {
      const ScalarExpr *rest = nullptr;
      for (unsigned side : {0u, 1u}) {
        const ScalarExpr *m = stripCasts(e->operands[side]);
        // A positional mask made additive (0 or -inf); a positional term
        // with no -inf in it is a bias (a score_mod).
        if (m->kind == ScalarExpr::Kind::Op && isPositional(m, rank) &&
            mentionsNegInf(m)) {
          match.zeroIf.push_back(m);
          rest = e->operands[1 - side];
          break;
        }
        // A mask made additive: select(c, 0, -inf) or select(c, -inf, 0)
        // (torch.where(mask, 0, -inf)), c a boolean tensor (the mask
        // operand) or a condition on positions and tensors (a mask_mod).
        if (isOp<arith::SelectOp>(m) && !isPositional(m->operands[0], rank) &&
            !readsScores(m->operands[0])) {
          bool finite = false;
          std::optional<double> t = getConstantValue(m->operands[1]);
          std::optional<double> f = getConstantValue(m->operands[2]);
          bool keeps = t == 0.0 && isNegInfLike(m->operands[2], finite);
          bool hides = f == 0.0 && isNegInfLike(m->operands[1], finite);
          if ((keeps || hides) &&
              takeBooleanMask(m->operands[0], hides, finite)) {
            rest = e->operands[1 - side];
            break;
          }
          if (keeps || hides) {
            match.finiteNegInf |= finite;
            match.maskModIf.push_back({m->operands[0], hides, false});
            rest = e->operands[1 - side];
            break;
          }
        }
        if (isTensorLeaf(m) && !match.mask && m->map != builder.identity()) {
          // A mask broadcast over some dims (the identity is ambiguous with
          // the scores themselves: decided below).
          match.mask = m;
          rest = e->operands[1 - side];
          break;
        }
      }
      if (!rest && !match.mask) {
        // Both read at the identity: the mask is the one that is not a
        // contraction's result.
        for (unsigned side : {0u, 1u}) {
          const ScalarExpr *m = stripCasts(e->operands[side]);
          const ScalarExpr *o = stripCasts(e->operands[1 - side]);
          if (isTensorLeaf(m) && !isContractionResult(m->tensor) &&
              (o->kind != ScalarExpr::Kind::Leaf ||
               isContractionResult(o->tensor))) {
            match.mask = m;
            rest = e->operands[1 - side];
            break;
          }
        }
      }
      if (!rest)
        break; // a bias that is not a tensor as it is: part of a score_mod
      e = stripCasts(rest);
      continue;
    }
    break;
  }
  // The scale: products and quotients by constants; with a softcap,
  // c * tanh(x) with x = (scale / c) * qk (Gemma 2: s / c, tanh, * c).
  const ScalarExpr *fixed = e;
  double outer = 1.0;
  if (peelConstantFactors(fixed, outer)) {
    match.scale = outer;
    if (isOp<math::TanhOp>(fixed) && outer > 0.0 && std::isfinite(outer)) {
      const ScalarExpr *inner = stripCasts(fixed->operands[0]);
      double factor = 1.0;
      if (peelConstantFactors(inner, factor) && isTensorLeaf(inner) &&
          builder.isIdentityUpToUnitDims(inner->map)) {
        match.softcap = outer;
        match.scale = factor * outer;
        match.qk = inner->tensor;
        return match;
      }
    }
    if (isTensorLeaf(fixed) && builder.isIdentityUpToUnitDims(fixed->map)) {
      match.qk = fixed->tensor;
      return match;
    }
  }
  // Anything else: a score_mod of the scores, found as the one contraction
  // result read at the identity (possibly times constants).
  if (!matchScoreMod(builder, e, match))
    return std::nullopt;
  return match;
}
