//===- AttentionTilingInterface.cpp - TilingInterface of fa.attention -----===//
//
// fa.attention tiles over (batch, query head, query row), all parallel. The
// key dimension is not a loop of the interface: it is the softmax reduction,
// which the op's lowering performs itself (online softmax over key blocks), so
// a tile reads every key of the K/V heads it needs.
//
// Two things make a tile more than a slice of every operand:
// * grouped-query attention: the tiled op maps its local query head h to K/V
//   head h / (hs / kvs), which is the original mapping only when the head tile
//   lines up with the groups of Hq / Hkv query heads sharing a K/V head;
// * causal/window bands are bottom-right aligned on the op's own Nq, so a row
//   tile carries `diagonal(d + i0)` to keep each row's band where it was;
// * with kv_lens that alignment is per sequence (L_b - Nq), which one
//   diagonal value only expresses for a tile of one sequence;
// * paged pools have no batch dim: a batch tile slices the page table and
//   kv_lens, and keeps every page.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Divisibility of index values
//===----------------------------------------------------------------------===//

namespace {
/// The largest divisor of an index value that its definition proves, looking
/// through constants, loop induction variables (lb + k * step), affine.apply,
/// affine.min/max and arith add/sub/mul. 0 stands for the value 0, which every
/// number divides; 1 means nothing is known.
struct DivisorAnalysis {
  static constexpr unsigned kMaxDepth = 8;

  static int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

  static int64_t mul(int64_t a, int64_t b) {
    int64_t result;
    if (llvm::MulOverflow(a, b, result))
      return 1;
    return result;
  }

  static int64_t ofExpr(AffineExpr expr, ArrayRef<int64_t> dims,
                        ArrayRef<int64_t> symbols) {
    switch (expr.getKind()) {
    case AffineExprKind::Constant:
      return std::abs(cast<AffineConstantExpr>(expr).getValue());
    case AffineExprKind::DimId:
      return dims[cast<AffineDimExpr>(expr).getPosition()];
    case AffineExprKind::SymbolId:
      return symbols[cast<AffineSymbolExpr>(expr).getPosition()];
    case AffineExprKind::Add: {
      auto bin = cast<AffineBinaryOpExpr>(expr);
      return gcd(ofExpr(bin.getLHS(), dims, symbols),
                 ofExpr(bin.getRHS(), dims, symbols));
    }
    case AffineExprKind::Mul: {
      auto bin = cast<AffineBinaryOpExpr>(expr);
      return mul(ofExpr(bin.getLHS(), dims, symbols),
                 ofExpr(bin.getRHS(), dims, symbols));
    }
    default: // floordiv, ceildiv, mod
      return 1;
    }
  }

  /// gcd over the results of `map` applied to `operands`.
  static int64_t ofMap(AffineMap map, ValueRange operands, unsigned depth) {
    SmallVector<int64_t> divisors;
    for (Value operand : operands)
      divisors.push_back(of(operand, depth + 1));
    ArrayRef<int64_t> all(divisors);
    int64_t result = 0;
    for (AffineExpr expr : map.getResults())
      result = gcd(result, ofExpr(expr, all.take_front(map.getNumDims()),
                                  all.drop_front(map.getNumDims())));
    return result;
  }

  static int64_t of(OpFoldResult ofr, unsigned depth = 0) {
    if (std::optional<int64_t> cst = getConstantIntValue(ofr))
      return std::abs(*cst);
    if (depth > kMaxDepth)
      return 1;
    Value value = cast<Value>(ofr);
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto loop = dyn_cast<LoopLikeOpInterface>(arg.getOwner()->getParentOp());
      if (!loop)
        return 1;
      std::optional<SmallVector<Value>> ivs = loop.getLoopInductionVars();
      std::optional<SmallVector<OpFoldResult>> lbs =
          loop.getLoopLowerBounds();
      std::optional<SmallVector<OpFoldResult>> steps = loop.getLoopSteps();
      if (!ivs || !lbs || !steps)
        return 1;
      for (auto [iv, lb, step] : llvm::zip(*ivs, *lbs, *steps))
        if (iv == value)
          return gcd(of(lb, depth + 1), of(step, depth + 1));
      return 1;
    }
    Operation *def = value.getDefiningOp();
    if (auto apply = dyn_cast<affine::AffineApplyOp>(def))
      return ofMap(apply.getAffineMap(), apply.getMapOperands(), depth);
    if (auto min = dyn_cast<affine::AffineMinOp>(def))
      return ofMap(min.getAffineMap(), min.getMapOperands(), depth);
    if (auto max = dyn_cast<affine::AffineMaxOp>(def))
      return ofMap(max.getAffineMap(), max.getMapOperands(), depth);
    if (isa<arith::AddIOp, arith::SubIOp>(def))
      return gcd(of(def->getOperand(0), depth + 1),
                 of(def->getOperand(1), depth + 1));
    if (isa<arith::MulIOp>(def))
      return mul(of(def->getOperand(0), depth + 1),
                 of(def->getOperand(1), depth + 1));
    return 1;
  }
};
} // namespace

/// Whether `ofr` is provably a multiple of `factor` (> 0).
static bool isMultipleOf(OpFoldResult ofr, int64_t factor) {
  int64_t divisor = DivisorAnalysis::of(ofr);
  return divisor % factor == 0; // 0 (the value 0) is a multiple of anything
}

/// Whether `size` provably equals dim `dim` of `tensor`.
static bool isWholeDim(OpFoldResult size, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return isConstantIntValue(size, type.getDimSize(dim));
  FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual(
      ValueBoundsConstraintSet::Variable(size),
      ValueBoundsConstraintSet::Variable(tensor, dim));
  return succeeded(equal) && *equal;
}

//===----------------------------------------------------------------------===//
// Tile geometry
//===----------------------------------------------------------------------===//

namespace {
/// The K/V heads [offset, offset + size) that a tile of query heads reads.
struct KVHeadRange {
  OpFoldResult offset;
  OpFoldResult size;
};
} // namespace

/// `value floordiv divisor` for a static divisor.
static OpFoldResult floorDiv(OpBuilder &b, Location loc, OpFoldResult value,
                             int64_t divisor) {
  AffineExpr d0 = b.getAffineDimExpr(0);
  return affine::makeComposedFoldedAffineApply(b, loc, d0.floorDiv(divisor),
                                               {value});
}

/// The K/V heads read by query heads [h0, h0 + hs), or failure when the tiled
/// op's head mapping (local head h -> K/V head h / (hs / kvs)) cannot be proven
/// to match the original one (h -> h / r, r = Hq / Hkv).
static FailureOr<KVHeadRange> getKVHeadRange(OpBuilder &b, Location loc,
                                             AttentionOp op, OpFoldResult h0,
                                             OpFoldResult hs) {
  int64_t hq = op.getQueryType().getDimSize(1);
  int64_t hkv = op.getKeyType().getDimSize(1);
  std::optional<int64_t> ratio;
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv))
    ratio = hq / hkv;

  // All heads: the op itself.
  if (isConstantIntValue(h0, 0) && isWholeDim(hs, op.getQuery(), 1))
    return KVHeadRange{b.getIndexAttr(0),
                       tensor::getMixedSize(b, loc, op.getKey(), 1)};
  // Multi-query: every query head reads K/V head 0.
  if (hkv == 1)
    return KVHeadRange{b.getIndexAttr(0), b.getIndexAttr(1)};

  // The tile lies within one group: hs divides r and h0 is a multiple of hs.
  // Always so for hs = 1, whatever r.
  std::optional<int64_t> size = getConstantIntValue(hs);
  if (size == 1) {
    if (ratio)
      return KVHeadRange{floorDiv(b, loc, h0, *ratio), b.getIndexAttr(1)};
    Value qHeads = tensor::DimOp::create(b, loc, op.getQuery(), 1);
    Value kvHeads = tensor::DimOp::create(b, loc, op.getKey(), 1);
    Value r = arith::DivUIOp::create(b, loc, qHeads, kvHeads);
    Value kvHead = arith::DivUIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, h0), r);
    return KVHeadRange{kvHead, b.getIndexAttr(1)};
  }
  if (!ratio)
    return failure();
  if (size && *size > 0 && *ratio % *size == 0 && isMultipleOf(h0, *size))
    return KVHeadRange{floorDiv(b, loc, h0, *ratio), b.getIndexAttr(1)};

  // The tile covers whole groups: h0 and hs are multiples of r. A partial
  // last tile min(ts, Hq - h0) is one when ts is, since Hq is.
  if (isMultipleOf(h0, *ratio) && isMultipleOf(hs, *ratio))
    return KVHeadRange{floorDiv(b, loc, h0, *ratio),
                       floorDiv(b, loc, hs, *ratio)};
  return failure();
}

/// A tile size for a diagnostic: its value, else its constant upper bound.
static std::string describeSize(OpFoldResult size) {
  if (std::optional<int64_t> cst = getConstantIntValue(size))
    return std::to_string(*cst);
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(size),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (succeeded(bound))
    return "at most " + std::to_string(*bound);
  return "?";
}

/// A tile offset for a diagnostic: its value, else what divides it.
static std::string describeOffset(OpFoldResult offset) {
  if (std::optional<int64_t> cst = getConstantIntValue(offset))
    return std::to_string(*cst);
  int64_t divisor = DivisorAnalysis::of(offset);
  if (divisor > 1)
    return "a multiple of " + std::to_string(divisor);
  return "?";
}

static std::string describeDim(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

//===----------------------------------------------------------------------===//
// TilingInterface
//===----------------------------------------------------------------------===//

/// Clones the modifier region `from` into `to` (of a tile of the op) and
/// shifts its (b, h, i) block arguments, the ones from `firstPosition` on, by
/// the tile's `offsets` (a null offset is 0): at the top of the region,
/// `b + b0`, `h + h0`, `i + i0` replace every use of b, h, i.
static void cloneWithOffsets(OpBuilder &b, Location loc, Region &from,
                             Region &to, unsigned firstPosition,
                             ArrayRef<Value> offsets) {
  if (from.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  b.cloneRegionBefore(from, to, to.end());
  Block &block = to.front();
  b.setInsertionPointToStart(&block);
  for (auto [k, offset] : llvm::enumerate(offsets)) {
    if (!offset)
      continue;
    BlockArgument arg = block.getArgument(firstPosition + k);
    auto shifted = arith::AddIOp::create(b, loc, arg, offset);
    arg.replaceAllUsesExcept(shifted, shifted);
  }
}

/// The diagonal of a row tile starting at row `i0` of `op`: d + i0 for the
/// op's diagonal d, which is the op's own, Ncap - Nq, or with kv_lens the
/// per-sequence L_b - Nq. The last is one value only for a batch tile of one
/// sequence (b0): otherwise a diagnostic on the op and failure.
static FailureOr<Value> getRowTileDiagonal(OpBuilder &b, AttentionOp op,
                                           OpFoldResult b0, OpFoldResult bs,
                                           OpFoldResult i0) {
  Location loc = op.getLoc();
  AffineExpr d0, d1, d2;
  bindDims(b.getContext(), d0, d1, d2);
  OpFoldResult rows = tensor::getMixedSize(b, loc, op.getQuery(), 2);
  if (Value diagonal = op.getDiagonal())
    return getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, d0 + d1,
                                              {OpFoldResult(diagonal), i0}));
  if (!op.hasKVLens())
    return getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(
            b, loc, d0 - d1 + d2,
            {op.getMixedKeyCapacity(b, loc), rows, i0}));
  if (!isConstantIntValue(bs, 1)) {
    op.emitOpError() << "cannot tile the query rows of a causal/window op with "
                        "kv_lens and no diagonal(...) with a batch tile of "
                     << describeSize(bs)
                     << ": each sequence's diagonal is L_b - Nq + i0, one "
                        "value only for a batch tile of size 1";
    return failure();
  }
  Value length = op.getSequenceKeyLength(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, b0),
      op.getKeyCapacity(b, loc));
  return getValueOrCreateConstantIndexOp(
      b, loc,
      affine::makeComposedFoldedAffineApply(b, loc, d0 - d1 + d2,
                                            {OpFoldResult(length), rows, i0}));
}

SmallVector<utils::IteratorType> AttentionOp::getLoopIteratorTypes() {
  // (batch, query head, query row). The key loop is a reduction that stays
  // inside the op: see the file comment.
  return SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel);
}

SmallVector<Range> AttentionOp::getIterationDomain(OpBuilder &b) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Range> domain;
  for (int64_t dim = 0; dim < 3; ++dim)
    domain.push_back(
        Range{zero, tensor::getMixedSize(b, loc, getQuery(), dim), one});
  return domain;
}

FailureOr<TilingResult>
AttentionOp::getTiledImplementation(OpBuilder &b,
                                    ArrayRef<OpFoldResult> offsets,
                                    ArrayRef<OpFoldResult> sizes) {
  assert(offsets.size() == 3 && sizes.size() == 3 && "tile of (b, h, i)");
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  OpFoldResult b0 = offsets[0], h0 = offsets[1], i0 = offsets[2];
  OpFoldResult bs = sizes[0], hs = sizes[1], is = sizes[2];

  FailureOr<KVHeadRange> kv = getKVHeadRange(b, loc, *this, h0, hs);
  if (failed(kv)) {
    int64_t hq = getQueryType().getDimSize(1);
    int64_t hkv = getKeyType().getDimSize(1);
    std::string ratio = ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv)
                            ? std::string("?")
                            : std::to_string(hq / hkv);
    emitOpError() << "cannot tile query heads with a tile of size "
                  << describeSize(hs) << " at offset " << describeOffset(h0)
                  << ": with Hq = " << describeDim(hq)
                  << " and Hkv = " << describeDim(hkv) << " (r = Hq / Hkv = "
                  << ratio
                  << " query heads per K/V head), a head tile must lie in "
                     "one group (size dividing r, offset a multiple of the "
                     "size) or cover whole groups (size and offset multiples "
                     "of r), provably from static sizes";
    return failure();
  }

  // Tensor descales would need slicing along (b, h) and rows: not done.
  if (Value qd = getQDescale(); qd && !qd.getType().isF32()) {
    emitOpError() << "cannot tile with per-head or per-block descales (only "
                     "per-tensor f32 descales are supported by tiling)";
    return failure();
  }

  // Packed sequences: a row tile would cut sequences (their offsets are
  // run-time values), so only head tiles are expressible.
  if (isVarlen() && !(isConstantIntValue(i0, 0) &&
                      isWholeDim(is, getQuery(), /*dim=*/2))) {
    emitOpError() << "cannot tile the query rows of a varlen op (a tile would "
                     "cut its packed sequences); tile the heads only";
    return failure();
  }

  SmallVector<Operation *> slices;
  auto slice = [&](Value source, ArrayRef<OpFoldResult> sliceOffsets,
                   ArrayRef<OpFoldResult> sliceSizes) -> Value {
    SmallVector<OpFoldResult> strides(sliceOffsets.size(), one);
    auto op = tensor::ExtractSliceOp::create(b, loc, source, sliceOffsets,
                                             sliceSizes, strides);
    slices.push_back(op);
    return op.getResult();
  };
  auto mixedSize = [&](Value tensor, int64_t dim) {
    return tensor::getMixedSize(b, loc, tensor, dim);
  };

  Value query = getQuery(), key = getKey(), value = getValue();
  Value querySlice = slice(query, {b0, h0, i0, zero},
                           {bs, hs, is, mixedSize(query, 3)});
  // All keys of the K/V heads of the tile: of its sequences, or every page of
  // the pools.
  OpFoldResult kvOffset0 = isPaged() ? zero : b0;
  OpFoldResult kvSize0 = isPaged() ? mixedSize(key, 0) : bs;
  Value keySlice =
      slice(key, {kvOffset0, kv->offset, zero, zero},
            {kvSize0, kv->size, mixedSize(key, 2), mixedSize(key, 3)});
  Value valueSlice =
      slice(value, {kvOffset0, kv->offset, zero, zero},
            {kvSize0, kv->size, mixedSize(value, 2), mixedSize(value, 3)});
  Value lensSlice = hasKVLens() ? slice(getKvLens(), {b0}, {bs}) : Value();
  Value pagesSlice = isPaged() ? slice(getPages(), {b0, zero},
                                       {bs, mixedSize(getPages(), 1)})
                               : Value();

  Value maskSlice;
  if (Value mask = getMask()) {
    // Size-1 batch/head/row dims broadcast (isMaskDimBroadcast, as in
    // getMaskBroadcastMap): keep them whole.
    maskSlice = slice(
        mask,
        {isMaskDimBroadcast(0) ? zero : b0, isMaskDimBroadcast(1) ? zero : h0,
         isMaskDimBroadcast(2) ? zero : i0, zero},
        {isMaskDimBroadcast(0) ? one : bs, isMaskDimBroadcast(1) ? one : hs,
         isMaskDimBroadcast(2) ? one : is, mixedSize(mask, 3)});
  }

  // Keep each row's causal/window band: the tile's row 0 is row i0 of the op,
  // whose diagonal sits at column d + i0 (d = the op's diagonal, Nk - Nq by
  // default). Rows left untiled keep the op's own diagonal.
  Value diagonal = getDiagonal();
  bool rowsUntiled =
      isConstantIntValue(i0, 0) && isWholeDim(is, query, /*dim=*/2);
  if (hasPositionalMask() && !rowsUntiled) {
    FailureOr<Value> tileDiagonal = getRowTileDiagonal(b, *this, b0, bs, i0);
    if (failed(tileDiagonal))
      return failure();
    diagonal = *tileDiagonal;
  }

  SmallVector<int64_t> tileShape;
  for (OpFoldResult size : sizes) {
    std::optional<int64_t> cst = getConstantIntValue(size);
    tileShape.push_back(cst ? *cst : ShapedType::kDynamic);
  }
  SmallVector<int64_t> outShape(tileShape);
  outShape.push_back(getOutType().getDimSize(3));
  Type outType = RankedTensorType::get(outShape, getOutType().getElementType());
  Type lseType;
  if (Value lse = getLse())
    lseType = RankedTensorType::get(
        tileShape, cast<RankedTensorType>(lse.getType()).getElementType());

  // The modifier regions see absolute (b, h, i): the tile's are relative to
  // its offsets. The offsets are materialized here, before the tiled op.
  SmallVector<Value> regionOffsets;
  if (hasModifiers())
    for (OpFoldResult offset : {b0, h0, i0})
      regionOffsets.push_back(
          isConstantIntValue(offset, 0)
              ? Value()
              : getValueOrCreateConstantIndexOp(b, loc, offset));

  auto tiled = AttentionOp::create(
      b, loc, outType, lseType, querySlice, keySlice, valueSlice, maskSlice,
      getQDescale(), getKDescale(), getVDescale(), diagonal, lensSlice,
      pagesSlice, getCuSeqlensQ(), getCuSeqlensK(), getScaleAttr(),
      getCausalAttr(), getWindowAttr(), getSoftcapAttr(), getDescaleBlockAttr(),
      (*this)->getNumRegions());
  if (!regionOffsets.empty()) {
    // Regions 0 and 1: score_mod (s, b, h, i, j) and mask_mod (b, h, i, j).
    cloneWithOffsets(b, loc, getModifiers()[0], tiled.getModifiers()[0],
                     /*firstPosition=*/1, regionOffsets);
    cloneWithOffsets(b, loc, getModifiers()[1], tiled.getModifiers()[1],
                     /*firstPosition=*/0, regionOffsets);
  }
  return TilingResult{{tiled},
                      SmallVector<Value>(tiled->getResults()),
                      slices};
}

LogicalResult AttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  // out[b, h, i, :] and lse[b, h, i]: the iteration tile, plus all of Dv.
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  if (resultNumber == 0) {
    resultOffsets.push_back(b.getIndexAttr(0));
    resultSizes.push_back(b.getIndexAttr(getOutType().getDimSize(3)));
  }
  return success();
}

FailureOr<TilingResult>
AttentionOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                     ArrayRef<OpFoldResult> offsets,
                                     ArrayRef<OpFoldResult> sizes) {
  // A tile of out must span all of Dv: each output element is produced with
  // the whole row of the op.
  if (resultNumber == 0 &&
      (!isConstantIntValue(offsets[3], 0) ||
       !isConstantIntValue(sizes[3], getOutType().getDimSize(3))))
    return failure();
  FailureOr<TilingResult> tiled = getTiledImplementation(
      b, offsets.take_front(3), sizes.take_front(3));
  if (failed(tiled))
    return failure();
  return TilingResult{tiled->tiledOps,
                      {tiled->tiledValues[resultNumber]},
                      tiled->generatedSlices};
}
