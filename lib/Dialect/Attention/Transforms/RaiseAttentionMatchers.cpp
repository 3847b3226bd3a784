//===- RaiseAttentionMatchers.cpp - attention in linalg, recognized -------===//
//
// The symbolic evaluator of elementwise linalg chains and the matchers of
// fa-raise-attention built on it (include/fa/Dialect/Attention/Transforms/
// RaiseAttention.h). Every matcher proves what it accepts from the IR and
// answers "no" otherwise; nothing here changes the IR.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/RaiseAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

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

template <typename OpTy>
static bool isOp(const ScalarExpr *e) {
  return e && e->kind == ScalarExpr::Kind::Op && isa<OpTy>(e->op);
}

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

/// A leaf that reads an element of a ranked tensor (not a scalar).
static bool isTensorLeaf(const ScalarExpr *e) {
  return e && e->kind == ScalarExpr::Kind::Leaf && e->map &&
         isa<RankedTensorType>(e->tensor.getType());
}

/// -inf, or a finite value <= -1e30 (the lowest f32 / bf16, -1e38, ...) when
/// `finite` may be set.
static bool isNegInfLike(const ScalarExpr *e, bool &finite) {
  std::optional<double> v = getConstantValue(e);
  if (!v)
    return false;
  if (std::isinf(*v) && *v < 0)
    return true;
  if (*v <= -1e30) {
    finite = true;
    return true;
  }
  return false;
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

/// True for the i1 constant true.
static bool isTrueConstant(const ScalarExpr *e) {
  if (!e || e->kind != ScalarExpr::Kind::Constant)
    return false;
  auto i = dyn_cast<IntegerAttr>(e->constant);
  return i && i.getType().isInteger(1) && i.getValue().isOne();
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
  // The qk leaves, and the scaled forms of them, over the DAG.
  const ScalarExpr *leaf = nullptr;
  bool twoLeaves = false;
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
        twoLeaves = true;
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
  if (!leaf || twoLeaves)
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

//===----------------------------------------------------------------------===//
// Positional conditions, evaluated
//===----------------------------------------------------------------------===//

namespace {
/// A scalar of the interpreter: integers (index, iN, i1) as int64, floats as
/// double.
struct Scalar {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0.0;
};

/// Evaluates positional expressions at one (i, j).
struct PositionInterpreter {
  unsigned rank;
  int64_t row = 0, col = 0;

  std::optional<int64_t> affine(AffineExpr e) const {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (d.getPosition() == rank - 2)
        return row;
      if (d.getPosition() == rank - 1)
        return col;
      return std::nullopt;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return c.getValue();
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return std::nullopt;
    std::optional<int64_t> l = affine(bin.getLHS()), r = affine(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    int64_t v;
    switch (e.getKind()) {
    case AffineExprKind::Add:
      return llvm::AddOverflow(*l, *r, v) ? std::nullopt
                                          : std::optional<int64_t>(v);
    case AffineExprKind::Mul:
      return llvm::MulOverflow(*l, *r, v) ? std::nullopt
                                          : std::optional<int64_t>(v);
    case AffineExprKind::Mod:
      return *r > 0 ? std::optional<int64_t>(llvm::mod(*l, *r)) : std::nullopt;
    case AffineExprKind::FloorDiv:
      return *r > 0 ? std::optional<int64_t>(llvm::divideFloorSigned(*l, *r)) : std::nullopt;
    case AffineExprKind::CeilDiv:
      return *r > 0 ? std::optional<int64_t>(llvm::divideCeilSigned(*l, *r)) : std::nullopt;
    default:
      return std::nullopt;
    }
  }

  /// Two's complement arithmetic, as arith's integer ops do it.
  static int64_t wrapping(int64_t a, int64_t b, char op) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    uint64_t r = op == '+' ? ua + ub : op == '-' ? ua - ub : ua * ub;
    return static_cast<int64_t>(r);
  }

  static unsigned widthOf(Type t) {
    if (t.isIndex())
      return 64;
    if (auto it = dyn_cast<IntegerType>(t))
      return it.getWidth();
    return 0;
  }
  /// Wraps `v` to the signed range of `t` (i1 to 0 / -1 read as 0 / 1).
  static int64_t wrap(int64_t v, Type t) {
    unsigned w = widthOf(t);
    if (w == 0 || w >= 64)
      return v;
    if (w == 1)
      return v & 1;
    return llvm::SignExtend64(static_cast<uint64_t>(v), w);
  }
  static uint64_t asUnsigned(int64_t v, Type t) {
    unsigned w = widthOf(t);
    if (w == 1)
      return v & 1;
    if (w == 0 || w >= 64)
      return static_cast<uint64_t>(v);
    return static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
  }

  std::optional<Scalar> eval(const ScalarExpr *e) const;
  std::optional<Scalar> evalOp(Operation *op, ArrayRef<Scalar> x) const;
};
} // namespace

std::optional<Scalar> PositionInterpreter::eval(const ScalarExpr *e) const {
  switch (e->kind) {
  case ScalarExpr::Kind::Leaf:
    return std::nullopt;
  case ScalarExpr::Kind::Constant:
    if (auto f = dyn_cast<FloatAttr>(e->constant))
      return Scalar{true, 0, f.getValueAsDouble()};
    if (auto i = dyn_cast<IntegerAttr>(e->constant)) {
      if (i.getValue().getBitWidth() > 64)
        return std::nullopt;
      return Scalar{false, wrap(i.getValue().getSExtValue(), i.getType()), 0};
    }
    return std::nullopt;
  case ScalarExpr::Kind::Index:
    if (std::optional<int64_t> v = affine(e->index))
      return Scalar{false, *v, 0};
    return std::nullopt;
  case ScalarExpr::Kind::Op: {
    SmallVector<Scalar, 3> x;
    for (const ScalarExpr *o : e->operands) {
      std::optional<Scalar> v = eval(o);
      if (!v)
        return std::nullopt;
      x.push_back(*v);
    }
    return evalOp(e->op, x);
  }
  }
  return std::nullopt;
}

std::optional<Scalar> PositionInterpreter::evalOp(Operation *op,
                                                  ArrayRef<Scalar> x) const {
  Type t = op->getResult(0).getType();
  auto integer = [&](int64_t v) { return Scalar{false, wrap(v, t), 0}; };
  auto real = [](double v) { return Scalar{true, 0, v}; };
  // Operands of integer ops are integers, of float ops floats: checked once.
  for (const Scalar &s : x)
    if (s.isFloat != isa<FloatType>(op->getOperand(&s - x.data()).getType()))
      return std::nullopt;
  Type in = op->getNumOperands() ? op->getOperand(0).getType() : t;
  return llvm::TypeSwitch<Operation *, std::optional<Scalar>>(op)
      .Case([&](arith::IndexCastOp) { return integer(x[0].i); })
      .Case([&](arith::IndexCastUIOp) {
        return integer(static_cast<int64_t>(asUnsigned(x[0].i, in)));
      })
      .Case([&](arith::ExtSIOp) { return integer(x[0].i); })
      .Case([&](arith::ExtUIOp) {
        return integer(static_cast<int64_t>(asUnsigned(x[0].i, in)));
      })
      .Case([&](arith::TruncIOp) { return integer(x[0].i); })
      .Case([&](arith::AddIOp) { return integer(wrapping(x[0].i, x[1].i, '+')); })
      .Case([&](arith::SubIOp) { return integer(wrapping(x[0].i, x[1].i, '-')); })
      .Case([&](arith::MulIOp) { return integer(wrapping(x[0].i, x[1].i, '*')); })
      .Case([&](arith::AndIOp) { return integer(x[0].i & x[1].i); })
      .Case([&](arith::OrIOp) { return integer(x[0].i | x[1].i); })
      .Case([&](arith::XOrIOp) { return integer(x[0].i ^ x[1].i); })
      .Case([&](arith::MaxSIOp) { return integer(std::max(x[0].i, x[1].i)); })
      .Case([&](arith::MinSIOp) { return integer(std::min(x[0].i, x[1].i)); })
      .Case([&](arith::SIToFPOp) {
        return real(static_cast<double>(x[0].i));
      })
      .Case([&](arith::UIToFPOp) {
        return real(static_cast<double>(asUnsigned(x[0].i, in)));
      })
      .Case([&](arith::ExtFOp) { return x[0]; })
      .Case([&](arith::TruncFOp) { return x[0]; })
      .Case([&](arith::AddFOp) { return real(x[0].f + x[1].f); })
      .Case([&](arith::SubFOp) { return real(x[0].f - x[1].f); })
      .Case([&](arith::MulFOp) { return real(x[0].f * x[1].f); })
      .Case([&](arith::NegFOp) { return real(-x[0].f); })
      .Case([&](arith::SelectOp) { return x[0].i ? x[1] : x[2]; })
      .Case([&](arith::CmpIOp cmp) -> std::optional<Scalar> {
        int64_t a = x[0].i, b = x[1].i;
        uint64_t ua = asUnsigned(a, in), ub = asUnsigned(b, in);
        using P = arith::CmpIPredicate;
        bool r;
        switch (cmp.getPredicate()) {
        case P::eq: r = a == b; break;
        case P::ne: r = a != b; break;
        case P::slt: r = a < b; break;
        case P::sle: r = a <= b; break;
        case P::sgt: r = a > b; break;
        case P::sge: r = a >= b; break;
        case P::ult: r = ua < ub; break;
        case P::ule: r = ua <= ub; break;
        case P::ugt: r = ua > ub; break;
        case P::uge: r = ua >= ub; break;
        }
        return Scalar{false, r ? 1 : 0, 0};
      })
      .Case([&](arith::CmpFOp cmp) -> std::optional<Scalar> {
        double a = x[0].f, b = x[1].f;
        if (std::isnan(a) || std::isnan(b))
          return std::nullopt;
        using P = arith::CmpFPredicate;
        bool r;
        switch (cmp.getPredicate()) {
        case P::OEQ: case P::UEQ: r = a == b; break;
        case P::ONE: case P::UNE: r = a != b; break;
        case P::OLT: case P::ULT: r = a < b; break;
        case P::OLE: case P::ULE: r = a <= b; break;
        case P::OGT: case P::UGT: r = a > b; break;
        case P::OGE: case P::UGE: r = a >= b; break;
        default: return std::nullopt;
        }
        return Scalar{false, r ? 1 : 0, 0};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// The number of nodes the conditions of `scores` have as trees (shared
/// subexpressions counted at each use: what a recursive evaluation visits),
/// or std::nullopt above `cap`.
static std::optional<int64_t> conditionTreeSize(const ScoresMatch &scores,
                                                int64_t cap) {
  DenseMap<const ScalarExpr *, int64_t> sizes;
  std::function<int64_t(const ScalarExpr *)> size =
      [&](const ScalarExpr *e) -> int64_t {
    if (auto it = sizes.find(e); it != sizes.end())
      return it->second;
    int64_t n = 1;
    for (const ScalarExpr *o : e->operands)
      n = std::min(cap + 1, n + size(o));
    sizes[e] = n;
    return n;
  };
  int64_t total = 0;
  for (ArrayRef<const ScalarExpr *> list :
       {ArrayRef(scores.keepIf), ArrayRef(scores.dropIf),
        ArrayRef(scores.zeroIf)})
    for (const ScalarExpr *c : list)
      if ((total += size(c)) > cap)
        return std::nullopt;
  return total;
}

std::optional<KeyBand> mlir::fa::raise::inferKeyBand(
    const ScoresMatch &scores, unsigned rank, int64_t nq, int64_t nk,
    function_ref<std::optional<bool>(int64_t, int64_t)> alsoVisible) {
  // Every point is evaluated: the proof is exhaustive, so the work (points
  // times the nodes evaluated at each) is bounded.
  constexpr int64_t kMaxPoints = int64_t(1) << 22, kMaxWork = int64_t(1) << 27;
  if (nq <= 0 || nk <= 0 || nq > kMaxPoints / nk)
    return std::nullopt;
  std::optional<int64_t> nodes = conditionTreeSize(scores, kMaxWork);
  if (!nodes || *nodes > kMaxWork / (nq * nk))
    return std::nullopt;
  KeyBand band;
  band.finiteNegInf = scores.finiteNegInf;
  PositionInterpreter interp{rank};
  auto visible = [&](int64_t i, int64_t j) -> std::optional<bool> {
    interp.row = i;
    interp.col = j;
    bool keep = true;
    for (const ScalarExpr *c : scores.keepIf) {
      std::optional<Scalar> v = interp.eval(c);
      if (!v || v->isFloat)
        return std::nullopt;
      keep &= v->i != 0;
    }
    for (const ScalarExpr *c : scores.dropIf) {
      std::optional<Scalar> v = interp.eval(c);
      if (!v || v->isFloat)
        return std::nullopt;
      keep &= v->i == 0;
    }
    for (const ScalarExpr *c : scores.zeroIf) {
      std::optional<Scalar> v = interp.eval(c);
      if (!v || !v->isFloat)
        return std::nullopt;
      if (v->f == 0.0)
        continue;
      if (!(std::isinf(v->f) && v->f < 0)) {
        if (v->f > -1e30)
          return std::nullopt; // a bias, not a mask
        band.finiteNegInf = true;
      }
      keep = false;
    }
    if (alsoVisible) {
      std::optional<bool> v = alsoVisible(i, j);
      if (!v)
        return std::nullopt;
      keep &= *v;
    }
    return keep;
  };
  // Candidate bounds from the rows' visible keys: the upper bound from the
  // first row whose last key is inside the grid, the lower from the first
  // whose first key is; rows that see nothing before the first row that sees
  // something (or after the last) bound the open side instead. Then every
  // point is checked against the band.
  std::optional<int64_t> firstRow, lastRow;
  for (int64_t i = 0; i < nq; ++i) {
    std::optional<int64_t> first, last;
    for (int64_t j = 0; j < nk; ++j) {
      std::optional<bool> v = visible(i, j);
      if (!v)
        return std::nullopt;
      if (*v) {
        first = first.value_or(j);
        last = j;
      }
    }
    if (!first) {
      band.emptyRows = true;
      continue;
    }
    firstRow = firstRow.value_or(i);
    lastRow = i;
    if (!band.upper && *last < nk - 1)
      band.upper = *last - i;
    if (!band.lower && *first > 0)
      band.lower = *first - i;
  }
  if (!firstRow)
    return std::nullopt; // every key of every row masked
  if (!band.upper && *firstRow > 0)
    band.upper = -*firstRow;
  if (!band.lower && *lastRow < nq - 1)
    band.lower = nk - 1 - *lastRow;
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j) {
      bool inBand = (!band.lower || j >= i + *band.lower) &&
                    (!band.upper || j <= i + *band.upper);
      if (visible(i, j) != std::optional<bool>(inBand))
        return std::nullopt;
    }
  return band;
}

std::optional<ConstantMask>
mlir::fa::raise::matchConstantMask(const ScalarExpr *leaf, unsigned rank,
                                   bool hidesWhereTrue) {
  if (!isTensorLeaf(leaf))
    return std::nullopt;
  DenseElementsAttr attr;
  if (!matchPattern(leaf->tensor, m_Constant(&attr)))
    return std::nullopt;
  // Read at (i, j) only: every result is the row, the key or a constant 0.
  ConstantMask mask;
  auto type = cast<RankedTensorType>(leaf->tensor.getType());
  MLIRContext *ctx = leaf->map.getContext();
  for (auto [r, e] : llvm::enumerate(leaf->map.getResults())) {
    if (e == getAffineDimExpr(rank - 2, ctx))
      mask.rowDim = r;
    else if (e == getAffineDimExpr(rank - 1, ctx))
      mask.colDim = r;
    else if (e != getAffineConstantExpr(0, ctx) || type.getDimSize(r) != 1)
      return std::nullopt;
  }
  if (mask.rowDim < 0 && mask.colDim < 0)
    return std::nullopt;
  mask.shape.assign(type.getShape().begin(), type.getShape().end());
  int64_t n = type.getNumElements();
  if (n > (int64_t(1) << 22))
    return std::nullopt;
  mask.visible.reserve(n);
  Type elt = type.getElementType();
  if (elt.isInteger(1)) {
    for (bool b : attr.getValues<bool>())
      mask.visible.push_back(b != hidesWhereTrue);
  } else if (isa<FloatType>(elt)) {
    for (const APFloat &f : attr.getValues<APFloat>()) {
      if (f.isZero()) {
        mask.visible.push_back(true);
      } else if (f.isInfinity() && f.isNegative()) {
        mask.visible.push_back(false);
      } else {
        // Only 0 and -inf make a mask (a finite value is a bias, and a
        // finite "-inf" averages a row that loses every key).
        return std::nullopt;
      }
    }
  } else {
    return std::nullopt;
  }
  return mask;
}

std::optional<bool> ConstantMask::at(int64_t i, int64_t j) const {
  int64_t flat = 0;
  for (auto [r, size] : llvm::enumerate(shape)) {
    int64_t index = static_cast<int64_t>(r) == rowDim   ? i
                    : static_cast<int64_t>(r) == colDim ? j
                                                        : 0;
    if (index < 0 || index >= size)
      return std::nullopt;
    flat = flat * size + index;
  }
  return visible[flat];
}

//===----------------------------------------------------------------------===//
// Positional conditions, derived for any size
//===----------------------------------------------------------------------===//

namespace {
/// An integer a * i + b * j + c of the positions.
struct LinearForm {
  int64_t a = 0, b = 0, c = 0;
};

/// A set of diagonals d = j - i: lo <= d <= hi (a missing bound: open), or
/// nothing.
struct DiagonalSet {
  std::optional<int64_t> lo, hi;
  bool empty = false;

  static DiagonalSet all() { return {}; }
  static DiagonalSet none() { return {std::nullopt, std::nullopt, true}; }
  DiagonalSet intersect(const DiagonalSet &o) const {
    if (empty || o.empty)
      return none();
    DiagonalSet r;
    r.lo = !lo ? o.lo : !o.lo ? lo : std::max(*lo, *o.lo);
    r.hi = !hi ? o.hi : !o.hi ? hi : std::min(*hi, *o.hi);
    if (r.lo && r.hi && *r.lo > *r.hi)
      return none();
    return r;
  }
  /// The complement, when it is one interval.
  std::optional<DiagonalSet> complement() const {
    if (empty)
      return all();
    if (!lo && !hi)
      return none();
    if (lo && hi)
      return std::nullopt;
    if (lo)
      return DiagonalSet{std::nullopt, *lo - 1, false};
    return DiagonalSet{*hi + 1, std::nullopt, false};
  }
  bool isAll() const { return !empty && !lo && !hi; }
};

/// Derives the diagonal set of positional conditions symbolically. Integer
/// values must be index or 64-bit and their forms small (|a|, |b| <= 2^20,
/// |c| <= 2^40), so that for positions below 2^40 (any tensor that fits in
/// memory) no value wraps.
struct BandDeriver {
  unsigned rank;

  static bool isWide(Type t) { return t.isIndex() || t.isInteger(64); }
  static bool small(const LinearForm &f) {
    constexpr int64_t kCoef = int64_t(1) << 20, kConst = int64_t(1) << 40;
    return std::abs(f.a) <= kCoef && std::abs(f.b) <= kCoef &&
           std::abs(f.c) <= kConst;
  }

  std::optional<LinearForm> affine(AffineExpr e) const {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (d.getPosition() == rank - 2)
        return LinearForm{1, 0, 0};
      if (d.getPosition() == rank - 1)
        return LinearForm{0, 1, 0};
      return std::nullopt;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return LinearForm{0, 0, c.getValue()};
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return std::nullopt;
    std::optional<LinearForm> l = affine(bin.getLHS()),
                              r = affine(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    if (e.getKind() == AffineExprKind::Add)
      return check({l->a + r->a, l->b + r->b, l->c + r->c});
    if (e.getKind() == AffineExprKind::Mul)
      return scaled(*l, *r);
    return std::nullopt;
  }
  std::optional<LinearForm> check(LinearForm f) const {
    return small(f) ? std::optional<LinearForm>(f) : std::nullopt;
  }
  std::optional<LinearForm> scaled(LinearForm x, LinearForm y) const {
    if (x.a || x.b)
      std::swap(x, y);
    if (x.a || x.b || std::abs(x.c) > (int64_t(1) << 20))
      return std::nullopt;
    return check({x.c * y.a, x.c * y.b, x.c * y.c});
  }

  std::optional<LinearForm> integer(const ScalarExpr *e) const {
    switch (e->kind) {
    case ScalarExpr::Kind::Leaf:
      return std::nullopt;
    case ScalarExpr::Kind::Constant: {
      auto i = dyn_cast<IntegerAttr>(e->constant);
      if (!i || !isWide(i.getType()))
        return std::nullopt;
      return check({0, 0, i.getValue().getSExtValue()});
    }
    case ScalarExpr::Kind::Index:
      return affine(e->index);
    case ScalarExpr::Kind::Op:
      break;
    }
    if (!isWide(e->op->getResult(0).getType()))
      return std::nullopt;
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(e->op) &&
        isWide(e->op->getOperand(0).getType()))
      return integer(e->operands[0]);
    if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(e->op))
      return std::nullopt;
    std::optional<LinearForm> l = integer(e->operands[0]);
    std::optional<LinearForm> r = integer(e->operands[1]);
    if (!l || !r)
      return std::nullopt;
    if (isa<arith::AddIOp>(e->op))
      return check({l->a + r->a, l->b + r->b, l->c + r->c});
    if (isa<arith::SubIOp>(e->op))
      return check({l->a - r->a, l->b - r->b, l->c - r->c});
    return scaled(*l, *r);
  }

  /// The diagonals where the i1 expression `e` is true.
  std::optional<DiagonalSet> condition(const ScalarExpr *e) const {
    if (e->kind == ScalarExpr::Kind::Constant) {
      auto i = dyn_cast<IntegerAttr>(e->constant);
      if (!i || !i.getType().isInteger(1))
        return std::nullopt;
      return i.getValue().isOne() ? DiagonalSet::all() : DiagonalSet::none();
    }
    if (e->kind != ScalarExpr::Kind::Op)
      return std::nullopt;
    if (auto cmp = dyn_cast<arith::CmpIOp>(e->op))
      return comparison(cmp.getPredicate(), e->operands[0], e->operands[1]);
    if (isa<arith::AndIOp>(e->op)) {
      std::optional<DiagonalSet> l = condition(e->operands[0]);
      std::optional<DiagonalSet> r = condition(e->operands[1]);
      if (!l || !r)
        return std::nullopt;
      return l->intersect(*r);
    }
    if (isa<arith::XOrIOp>(e->op)) {
      for (unsigned side : {0u, 1u})
        if (isTrueConstant(e->operands[side]))
          if (std::optional<DiagonalSet> x = condition(e->operands[1 - side]))
            return x->complement();
      return std::nullopt;
    }
    if (isa<arith::SelectOp>(e->op)) {
      // select(c, x, false) = c and x; select(c, false, true) = not c.
      std::optional<DiagonalSet> c = condition(e->operands[0]);
      std::optional<DiagonalSet> x = condition(e->operands[1]);
      std::optional<DiagonalSet> y = condition(e->operands[2]);
      if (!c || !x || !y)
        return std::nullopt;
      if (y->empty)
        return c->intersect(*x);
      if (x->empty && y->isAll())
        return c->complement();
      if (x->isAll() && y->isAll())
        return DiagonalSet::all();
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<DiagonalSet> comparison(arith::CmpIPredicate pred,
                                        const ScalarExpr *lhs,
                                        const ScalarExpr *rhs) const {
    std::optional<LinearForm> l = integer(lhs), r = integer(rhs);
    if (!l || !r)
      return std::nullopt;
    // lhs - rhs = s * d + c with d = j - i, s = +-1 (or a constant).
    LinearForm f{l->a - r->a, l->b - r->b, l->c - r->c};
    using P = arith::CmpIPredicate;
    if (f.a == 0 && f.b == 0) {
      bool t;
      switch (pred) {
      case P::eq:
        t = f.c == 0;
        break;
      case P::ne:
        t = f.c != 0;
        break;
      case P::slt:
        t = f.c < 0;
        break;
      case P::sle:
        t = f.c <= 0;
        break;
      case P::sgt:
        t = f.c > 0;
        break;
      case P::sge:
        t = f.c >= 0;
        break;
      default:
        return std::nullopt;
      }
      return t ? DiagonalSet::all() : DiagonalSet::none();
    }
    if (f.a != -f.b || std::abs(f.b) != 1)
      return std::nullopt;
    // With s = -1, s d + c pred 0 is d + (-c) (pred swapped) 0.
    if (f.b == -1) {
      f.c = -f.c;
      switch (pred) {
      case P::slt:
        pred = P::sgt;
        break;
      case P::sle:
        pred = P::sge;
        break;
      case P::sgt:
        pred = P::slt;
        break;
      case P::sge:
        pred = P::sle;
        break;
      default:
        break;
      }
    }
    // d + c pred 0.
    switch (pred) {
    case P::eq:
      return DiagonalSet{-f.c, -f.c, false};
    case P::slt:
      return DiagonalSet{std::nullopt, -f.c - 1, false};
    case P::sle:
      return DiagonalSet{std::nullopt, -f.c, false};
    case P::sgt:
      return DiagonalSet{-f.c + 1, std::nullopt, false};
    case P::sge:
      return DiagonalSet{-f.c, std::nullopt, false};
    default:
      return std::nullopt; // ne (two intervals), unsigned
    }
  }

  /// The diagonals where the float expression `e` is 0 (elsewhere -inf-like).
  std::optional<DiagonalSet> zeroWhere(const ScalarExpr *e,
                                       bool &finite) const {
    e = stripCasts(e);
    if (!isOp<arith::SelectOp>(e))
      return std::nullopt;
    std::optional<DiagonalSet> c = condition(e->operands[0]);
    if (!c)
      return std::nullopt;
    if (getConstantValue(e->operands[1]) == 0.0 &&
        isNegInfLike(e->operands[2], finite))
      return c;
    if (getConstantValue(e->operands[2]) == 0.0 &&
        isNegInfLike(e->operands[1], finite))
      return c->complement();
    return std::nullopt;
  }
};
} // namespace

std::optional<KeyBand> mlir::fa::raise::deriveKeyBand(const ScoresMatch &scores,
                                                      unsigned rank) {
  // The derivation recurses through the conditions as trees.
  if (!conditionTreeSize(scores, int64_t(1) << 16))
    return std::nullopt;
  BandDeriver deriver{rank};
  KeyBand band;
  band.finiteNegInf = scores.finiteNegInf;
  DiagonalSet visible = DiagonalSet::all();
  for (const ScalarExpr *c : scores.keepIf) {
    std::optional<DiagonalSet> s = deriver.condition(c);
    if (!s)
      return std::nullopt;
    visible = visible.intersect(*s);
  }
  for (const ScalarExpr *c : scores.dropIf) {
    std::optional<DiagonalSet> s = deriver.condition(c);
    std::optional<DiagonalSet> keep = s ? s->complement() : std::nullopt;
    if (!keep)
      return std::nullopt;
    visible = visible.intersect(*keep);
  }
  for (const ScalarExpr *c : scores.zeroIf) {
    std::optional<DiagonalSet> s = deriver.zeroWhere(c, band.finiteNegInf);
    if (!s)
      return std::nullopt;
    visible = visible.intersect(*s);
  }
  if (visible.empty)
    return std::nullopt; // every key of every row masked
  band.lower = visible.lo;
  band.upper = visible.hi;
  // Without the sizes, a row may see nothing unless the band is open to the
  // left and reaches key 0 from row 0 (then every row sees key 0).
  band.emptyRows = band.lower || (band.upper && *band.upper < 0);
  return band;
}
