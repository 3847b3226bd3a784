//===- QuantizeFP8.cpp - fa.attention to the two-pass FP8 form ------------===//
//
// FlashAttention-3's FP8 scheme as IR: per group of Q, K and V (the tensor,
// each (batch, head), or each block of rows) an amax, the scale
// delta = max(amax, 2^-117) / 448, the values x / delta rounded to f8E4M3FN,
// and an fa.attention on them whose descales are the deltas. Optionally Q and
// K are first rotated along D by a random Hadamard transform (incoherent
// processing), built as a fast Walsh-Hadamard transform.
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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace mlir::fa {
#define GEN_PASS_DEF_FAQUANTIZEFP8PASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;
using Granularity = QuantizeFP8Options::Granularity;

/// E4M3FN's largest finite magnitude.
constexpr float kE4M3Max = 448.0f;
/// The amax floor: keeps delta = amax / 448 a normal f32 (>= 2^-126) for an
/// all-zero group, so that x / delta never divides by zero or a subnormal.
constexpr float kAmaxFloor = 0x1p-117f;

/// A static size, or kDynamic.
int64_t staticSize(OpFoldResult size) {
  return getConstantIntValue(size).value_or(ShapedType::kDynamic);
}

RankedTensorType tensorType(ArrayRef<OpFoldResult> sizes, Type elt) {
  SmallVector<int64_t> shape = llvm::map_to_vector(sizes, staticSize);
  return RankedTensorType::get(shape, elt);
}

/// Builds the quantization of one [B, H, N, D] operand.
struct OperandQuantizer {
  OpBuilder &b;
  Location loc;
  Granularity granularity;

  /// max |x| over D: [B, H, N] f32.
  Value rowAmax(Value x) {
    MLIRContext *ctx = b.getContext();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
    Value init = createFilledF32Tensor(b, loc, ArrayRef(sizes).take_front(3), 0.0f);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{x}, ValueRange{init},
               ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx),
                                   getProjectionMap(ctx, 4, {0, 1, 2})},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value a = math::AbsFOp::create(nb, l, extendToF32(nb, l, args[0]));
                 linalg::YieldOp::create(
                     nb, l, Value(arith::MaximumFOp::create(nb, l, args[1], a)));
               })
        .getResult(0);
  }

  /// A max-reduction of `source` (rank r) onto the dims `kept` of it.
  Value reduceMax(Value source, ArrayRef<unsigned> kept) {
    MLIRContext *ctx = b.getContext();
    auto type = cast<RankedTensorType>(source.getType());
    unsigned rank = type.getRank();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
    SmallVector<OpFoldResult> outSizes;
    SmallVector<IteratorType> iterators(rank, kRed);
    for (unsigned d : kept) {
      outSizes.push_back(sizes[d]);
      iterators[d] = kPar;
    }
    Value init = createFilledF32Tensor(b, loc, outSizes, 0.0f);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{source}, ValueRange{init},
               ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                                   getProjectionMap(ctx, rank, kept)},
               iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     nb, l,
                     Value(arith::MaximumFOp::create(nb, l, args[1], args[0])));
               })
        .getResult(0);
  }

  /// The amax of each block of `block` rows: [B, H, NB], NB = ceil(N / block).
  /// The row maxima are padded with zeros to NB * block rows, expanded to
  /// [B, H, NB, block] and reduced.
  Value blockAmax(Value rows, int64_t block) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, rows);
    Value n = getValueOrCreateConstantIndexOp(b, loc, sizes[2]);
    Value blockSize = arith::ConstantIndexOp::create(b, loc, block);
    OpFoldResult numBlocks = getAsOpFoldResult(
        b.createOrFold<arith::CeilDivSIOp>(loc, n, blockSize));
    Value padded = b.createOrFold<arith::MulIOp>(
        loc, getValueOrCreateConstantIndexOp(b, loc, numBlocks), blockSize);
    OpFoldResult high =
        getAsOpFoldResult(b.createOrFold<arith::SubIOp>(loc, padded, n));
    OpFoldResult zero = b.getIndexAttr(0);
    Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    Value pad = tensor::PadOp::create(
        b, loc, Type(), rows, ArrayRef<OpFoldResult>{zero, zero, zero},
        ArrayRef<OpFoldResult>{zero, zero, high}, zeroF);
    SmallVector<OpFoldResult> expandedSizes = {sizes[0], sizes[1], numBlocks,
                                               b.getIndexAttr(block)};
    Value expanded = tensor::ExpandShapeOp::create(
        b, loc, tensorType(expandedSizes, b.getF32Type()), pad,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, expandedSizes);
    return reduceMax(expanded, {0, 1, 2});
  }

  /// delta = max(amax, floor) / 448.
  Value delta(OpBuilder &nb, Location l, Value amax) {
    Value floor = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(kAmaxFloor));
    Value max = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(kE4M3Max));
    return arith::DivFOp::create(
        nb, l, arith::MaximumFOp::create(nb, l, amax, floor), max);
  }

  /// The scale of each group: an f32 scalar (tensor), [B, H] (head) or
  /// [B, H, NB] (block).
  Value scales(Value x, int64_t block) {
    Value rows = rowAmax(x);
    if (granularity == Granularity::Tensor) {
      Value amax = tensor::ExtractOp::create(b, loc, reduceMax(rows, {}),
                                             ValueRange{});
      return delta(b, loc, amax);
    }
    Value amax = granularity == Granularity::Head ? reduceMax(rows, {0, 1})
                                                  : blockAmax(rows, block);
    auto type = cast<RankedTensorType>(amax.getType());
    unsigned rank = type.getRank();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
    Value init = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, amax), b.getF32Type());
    return linalg::GenericOp::create(
               b, loc, type, ValueRange{amax}, ValueRange{init},
               ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(rank, kPar),
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, delta(nb, l, args[0]));
               })
        .getResult(0);
  }

  /// truncf(clamp(x / delta, -448, 448)) to f8E4M3FN, delta of x's group.
  Value quantize(Value x, Value scale, int64_t block) {
    MLIRContext *ctx = b.getContext();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
    Type f8 = Float8E4M3FNType::get(ctx);
    Value init = tensor::EmptyOp::create(b, loc, sizes, f8);
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    SmallVector<Value> ins = {x};
    SmallVector<AffineMap> maps = {id4};
    if (granularity == Granularity::Head) {
      ins.push_back(scale);
      maps.push_back(getProjectionMap(ctx, 4, {0, 1}));
    } else if (granularity == Granularity::Block) {
      ins.push_back(scale);
      maps.push_back(AffineMap::get(
          4, 0,
          {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
           getAffineDimExpr(2, ctx).floorDiv(block)},
          ctx));
    }
    maps.push_back(id4);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ins, ValueRange{init}, maps,
               SmallVector<IteratorType>(4, kPar),
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value d = granularity == Granularity::Tensor ? scale : args[1];
                 Value v = arith::DivFOp::create(
                     nb, l, extendToF32(nb, l, args[0]), d);
                 Value hi = arith::ConstantOp::create(
                     nb, l, nb.getF32FloatAttr(kE4M3Max));
                 Value lo = arith::ConstantOp::create(
                     nb, l, nb.getF32FloatAttr(-kE4M3Max));
                 v = arith::MinimumFOp::create(
                     nb, l, arith::MaximumFOp::create(nb, l, v, lo), hi);
                 linalg::YieldOp::create(
                     nb, l, Value(arith::TruncFOp::create(nb, l, f8, v)));
               })
        .getResult(0);
  }
};
} // namespace

SmallVector<float> mlir::fa::randomSigns(int64_t d, uint64_t seed) {
  SmallVector<float> signs;
  uint64_t state = seed;
  for (int64_t i = 0; i < d; ++i) {
    // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    signs.push_back((z >> 63) ? -1.0f : 1.0f);
  }
  return signs;
}

Value mlir::fa::buildRandomizedHadamard(OpBuilder &b, Location loc, Value x,
                                        ArrayRef<float> signs) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  int64_t d = type.getDimSize(rank - 1);
  assert(llvm::isPowerOf2_64(d) && d == (int64_t)signs.size() &&
         "a power-of-two head dim and one sign per column");
  Type f32 = b.getF32Type();

  // y = x * signs / sqrt(D), in f32.
  float norm = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  SmallVector<float> factors =
      llvm::map_to_vector(signs, [&](float s) { return s * norm; });
  auto factorType = RankedTensorType::get({d}, f32);
  Value factorTensor = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(factorType, ArrayRef<float>(factors)));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value y = linalg::GenericOp::create(
                b, loc, tensorType(sizes, f32), ValueRange{x, factorTensor},
                ValueRange{tensor::EmptyOp::create(b, loc, sizes, f32)},
                ArrayRef<AffineMap>{id, getProjectionMap(ctx, rank, {rank - 1}), id},
                SmallVector<IteratorType>(rank, kPar),
                [&](OpBuilder &nb, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      nb, l,
                      Value(arith::MulFOp::create(
                          nb, l, extendToF32(nb, l, args[0]), args[1])));
                })
                .getResult(0);

  // Butterfly stages h = 1, 2, ..., D/2 on [..., D / 2h, 2, h]:
  // (a, b) -> (a + b, a - b). Their product is the Sylvester H_D.
  SmallVector<ReassociationIndices> reassociation;
  for (unsigned i = 0; i + 1 < rank; ++i)
    reassociation.push_back({i});
  reassociation.push_back({rank - 1, rank, rank + 1});
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  for (int64_t h = 1; h < d; h *= 2) {
    SmallVector<OpFoldResult> lead(ArrayRef(sizes).drop_back());
    SmallVector<OpFoldResult> split(lead);
    split.append({b.getIndexAttr(d / (2 * h)), b.getIndexAttr(2),
                  b.getIndexAttr(h)});
    Value expanded = tensor::ExpandShapeOp::create(
        b, loc, tensorType(split, f32), y, reassociation, split);
    SmallVector<OpFoldResult> halfSizes(split);
    halfSizes[rank] = one;
    SmallVector<OpFoldResult> reduced(lead);
    reduced.append({b.getIndexAttr(d / (2 * h)), b.getIndexAttr(h)});
    SmallVector<OpFoldResult> strides(rank + 2, one);
    auto half = [&](int64_t t) -> Value {
      SmallVector<OpFoldResult> offsets(rank + 2, zero);
      offsets[rank] = b.getIndexAttr(t);
      return tensor::ExtractSliceOp::create(b, loc, tensorType(reduced, f32),
                                            expanded, offsets, halfSizes,
                                            strides);
    };
    Value lo = half(0), hi = half(1);
    SmallVector<unsigned> halfDims;
    for (unsigned i = 0; i < rank + 2; ++i)
      if (i != rank)
        halfDims.push_back(i);
    AffineMap halfMap = getProjectionMap(ctx, rank + 2, halfDims);
    AffineMap idSplit = AffineMap::getMultiDimIdentityMap(rank + 2, ctx);
    Value stage =
        linalg::GenericOp::create(
            b, loc, expanded.getType(), ValueRange{lo, hi},
            ValueRange{tensor::EmptyOp::create(b, loc, split, f32)},
            ArrayRef<AffineMap>{halfMap, halfMap, idSplit},
            SmallVector<IteratorType>(rank + 2, kPar),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value t = linalg::IndexOp::create(nb, l, rank);
              Value isFirst = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::eq, t,
                  arith::ConstantIndexOp::create(nb, l, 0));
              Value sum = arith::AddFOp::create(nb, l, args[0], args[1]);
              Value diff = arith::SubFOp::create(nb, l, args[0], args[1]);
              linalg::YieldOp::create(
                  nb, l, Value(arith::SelectOp::create(nb, l, isFirst, sum, diff)));
            })
            .getResult(0);
    y = tensor::CollapseShapeOp::create(b, loc, stage, reassociation);
  }
  return y;
}

FailureOr<SmallVector<Value>>
mlir::fa::quantizeAttentionFP8(RewriterBase &rewriter, AttentionOp op,
                               const QuantizeFP8Options &options) {
  if (isa<Float8E4M3FNType>(op.getQueryType().getElementType()))
    return failure();
  // The verifier rejects fp8 descales with kv_lens or pages (not supported
  // by the lowerings yet): quantizing would build an invalid op.
  if (op.hasKVLens() || op.isPaged())
    return op.emitOpError() << "fa-quantize-fp8 does not support kv_lens or "
                               "pages (fp8 descales are not supported with "
                               "them yet)";
  if (op.isVarlen())
    return op.emitOpError() << "fa-quantize-fp8 does not support varlen "
                               "(fp8 inputs are not supported with it yet)";
  int64_t headDim = op.getQueryType().getDimSize(3);
  if (options.incoherent && !llvm::isPowerOf2_64(headDim))
    return op.emitOpError()
           << "incoherent processing (fa-quantize-fp8 incoherent=true) needs a "
              "power-of-two head dim D for the Walsh-Hadamard transform, got "
           << headDim;
  if (options.granularity == Granularity::Block &&
      (options.blockQ <= 0 || options.blockKV <= 0))
    return op.emitOpError() << "fa-quantize-fp8 block sizes must be positive, "
                               "got block-q = "
                            << options.blockQ << ", block-kv = " << options.blockKV;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  if (options.incoherent) {
    SmallVector<float> signs = randomSigns(headDim, options.seed);
    q = buildRandomizedHadamard(rewriter, loc, q, signs);
    k = buildRandomizedHadamard(rewriter, loc, k, signs);
  }
  OperandQuantizer quantizer{rewriter, loc, options.granularity};
  auto quantize = [&](Value x, int64_t block) -> std::pair<Value, Value> {
    Value scale = quantizer.scales(x, block);
    return {quantizer.quantize(x, scale, block), scale};
  };
  auto [q8, dq] = quantize(q, options.blockQ);
  auto [k8, dk] = quantize(k, options.blockKV);
  auto [v8, dv] = quantize(v, options.blockKV);

  DenseI64ArrayAttr descaleBlock;
  if (options.granularity == Granularity::Block)
    descaleBlock =
        rewriter.getDenseI64ArrayAttr({options.blockQ, options.blockKV});
  Type lseType = op.getLse() ? op.getLse().getType() : Type();
  auto fp8 = AttentionOp::create(
      rewriter, loc, op.getOutType(), lseType, q8, k8, v8, op.getMask(), dq, dk,
      dv, op.getDiagonal(), op.getKvLens(), op.getPages(), op.getCuSeqlensQ(),
      op.getCuSeqlensK(), op.getScaleAttr(),
      op.getCausalAttr(),
      op.getWindowAttr(), op.getSoftcapAttr(), descaleBlock,
      op->getNumRegions());
  // score_mod sees the descaled score, as it saw the unquantized one.
  cloneModifierRegions(rewriter, op, fp8);
  // Discardable (dialect-prefixed) attributes travel with the op.
  for (NamedAttribute attr : op->getDiscardableAttrs())
    fp8->setAttr(attr.getName(), attr.getValue());
  return SmallVector<Value>(fp8->getResults());
}

namespace {
struct FAQuantizeFP8Pass : fa::impl::FAQuantizeFP8PassBase<FAQuantizeFP8Pass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<Granularity> parsed =
        llvm::StringSwitch<std::optional<Granularity>>(granularity)
            .Case("tensor", Granularity::Tensor)
            .Case("head", Granularity::Head)
            .Case("block", Granularity::Block)
            .Default(std::nullopt);
    if (!parsed) {
      getOperation()->emitError()
          << "fa-quantize-fp8: granularity must be tensor, head or block, got '"
          << granularity << "'";
      return signalPassFailure();
    }
    QuantizeFP8Options options{*parsed, blockQ, blockKV, incoherent, seed};
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      if (isa<Float8E4M3FNType>(op.getQueryType().getElementType())) {
        op.emitRemark() << "fa-quantize-fp8: inputs are f8E4M3FN already, left "
                           "as they are";
        continue;
      }
      FailureOr<SmallVector<Value>> results =
          quantizeAttentionFP8(rewriter, op, options);
      if (failed(results))
        return signalPassFailure();
      rewriter.replaceOp(op, *results);
    }
  }
};
} // namespace
