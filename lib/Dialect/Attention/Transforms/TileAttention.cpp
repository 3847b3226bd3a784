//===- TileAttention.cpp - fa.attention to the FlashAttention form --------===//
//
// Rewrites fa.attention into an scf.forall over (batch, query head, query
// block) around scf.for loops over key/value blocks whose body is one
// fa.online_attention: the online-softmax recurrence on tiles. Fully masked
// key blocks are never visited (fa.kv_block_range), and only the blocks that
// straddle a window edge carry positional masks.
//
// With kv_lens, each iteration reads its sequence's key count L_b and uses it
// where the op's key count was (block count, tail sizes, default diagonal);
// with pages, each key step reads one page (or part of one) whose pool index
// comes from the page table (docs/TiledForm.md). With varlen, the forall's
// batch is the packed sequence: each iteration reads its sequence's query and
// key ranges and slices the batch-1 tensors at their starts.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>
#include <numeric>

namespace mlir::fa {
#define GEN_PASS_DEF_FATILEATTENTIONPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
/// Builds the body of one (batch, head, query block) iteration.
struct QueryBlockBuilder {
  OpBuilder &b;
  Location loc;
  AttentionOp op;
  const AttentionShape &shape;
  const AttentionTileSizes &sizes;
  Value batch = {}, head = {}, rowBegin = {}, rows = {}, kvHead = {};
  // The batch index of the query/key/value/out planes: `batch`, or 0 with
  // varlen (whose `batch` is the packed sequence).
  Value planeBatch = {};
  // With varlen: the first query row and first key of the sequence in the
  // packed tensors (rowBegin and the key columns count from them).
  Value queryStart = {}, keyStart = {};
  Value queryLength = {}; // the sequence's query rows, with varlen
  // The keys of this block's sequence and the diagonal of its row 0: the
  // op's (shape.keyLength, shape.diagonal), or L_b and L_b - Nq with kv_lens.
  Value keyLength = {}, diagonal = {};
  Value lastPage = {}; // P - 1, with pages
  Value scoreDescale = {}; // q_descale * k_descale for fp8, else null
  // Per-block descales: the query block's q descale (the step's score descale
  // is qBlockDescale * kd of the key block, the value_descale vd of it).
  Value qBlockDescale = {};
  Value vDescale = {}; // applied in the epilogue (per tensor / per head)

  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// A rank-reduced slice [rowCount x lastDimSize] of a 4-D tensor at
  /// (b, h, row, 0).
  Value slice2D(Value source, Value b0, Value h0, Value row, Value rowCount,
                OpFoldResult lastSize) {
    auto srcType = cast<RankedTensorType>(source.getType());
    SmallVector<OpFoldResult> offsets = {b0, h0, row, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes4 = {b.getIndexAttr(1), b.getIndexAttr(1),
                                        rowCount, lastSize};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto type = RankedTensorType::get(
        {ShapedType::kDynamic, getConstantIntValue(lastSize).value_or(
                                   ShapedType::kDynamic)},
        srcType.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes4,
                                          strides);
  }

  /// The mask tile [rows x cols] at (row0, col0), broadcast dims read at 0;
  /// [1 x cols] of row 0 when the mask broadcasts over the query rows (the
  /// step broadcasts it).
  Value maskTile(Value col0, Value cols) {
    Value mask = op.getMask();
    auto maskType = cast<RankedTensorType>(mask.getType());
    auto pick = [&](unsigned dim, Value index) -> OpFoldResult {
      return op.isMaskDimBroadcast(dim) ? OpFoldResult(b.getIndexAttr(0))
                                        : OpFoldResult(index);
    };
    bool oneRow = op.isMaskDimBroadcast(2);
    SmallVector<OpFoldResult> offsets = {pick(0, batch), pick(1, head),
                                         pick(2, rowBegin), col0};
    SmallVector<OpFoldResult> sizes4 = {
        b.getIndexAttr(1), b.getIndexAttr(1),
        oneRow ? OpFoldResult(b.getIndexAttr(1)) : OpFoldResult(rows), cols};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto type = RankedTensorType::get(
        {oneRow ? 1 : ShapedType::kDynamic, ShapedType::kDynamic},
        maskType.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, type, mask, offsets, sizes4,
                                          strides);
  }

  /// The key and value tiles [cols x D]: rows [row0, row0 + cols) of
  /// (plane, kvHead), plane = batch (contiguous) or a page of the pools.
  std::pair<Value, Value> kvTiles(Value plane, Value row0, Value cols) {
    int64_t headDim = op.getKeyType().getDimSize(3);
    int64_t headDimV = op.getValueType().getDimSize(3);
    return {slice2D(op.getKey(), plane, kvHead, row0, cols,
                    b.getIndexAttr(headDim)),
            slice2D(op.getValue(), plane, kvHead, row0, cols,
                    b.getIndexAttr(headDimV))};
  }

  /// Keys [col0, col0 + cols) from the page pools: the step's keys lie in
  /// one page (its block divides the page size), the page table's entry for
  /// it, clamped into [0, P - 1] so that a bad id never reads outside the
  /// pool. (Called in a loop body: scf.for hands its builder, `b`, to it.)
  std::pair<Value, Value> pagedKVTiles(Value col0, Value cols) {
    Value pageSize = cst(op.getPageSize());
    Value pageIndex = arith::DivUIOp::create(b, loc, col0, pageSize);
    Value pageOffset = arith::RemUIOp::create(b, loc, col0, pageSize);
    Value id = tensor::ExtractOp::create(b, loc, op.getPages(),
                                         ValueRange{batch, pageIndex});
    Value page =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), id).getResult();
    page = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, page, cst(0)), lastPage);
    return kvTiles(page, pageOffset, cols);
  }

  /// With kv_lens: this sequence's key count clamp(lens[batch], 0, Ncap)
  /// replaces Ncap, and bottom-right alignment moves with it (the diagonal
  /// L_b - Nq) unless the op has an explicit diagonal.
  void setSequenceKeys() {
    keyLength = shape.keyLength;
    diagonal = shape.diagonal;
    if (op.isVarlen()) {
      PackedSequence keys = getPackedSequence(b, loc, op.getCuSeqlensK(),
                                              batch, shape.keyLength);
      keyStart = keys.start;
      keyLength = keys.length;
      if (op.hasPositionalMask())
        diagonal = arith::SubIOp::create(b, loc, keyLength, queryLength);
      return;
    }
    if (!op.hasKVLens())
      return;
    keyLength = op.getSequenceKeyLength(b, loc, batch, shape.keyLength);
    if (!op.getDiagonal() && op.hasPositionalMask())
      diagonal = arith::SubIOp::create(b, loc, keyLength, shape.queryLength);
  }

  /// What the steps of one key block share.
  struct StepOperands {
    Value qTile, kTile, vTile, maskTile;
    Value col0; // the block's first key
    Value positionRow0 = {}, positionCol0 = {}, diagonal = {}; // masked blocks
    DenseI64ArrayAttr window = {};
    SmallVector<Value> descales = {};
  };

  /// One fa.online_attention on `state` with the op's modifier regions,
  /// cloned verbatim and evaluated at coords(batch, head, first row, first
  /// key); without `withMaskMod` the mask_mod is left out (a block it hides
  /// nothing of), and a step left without regions has no coords.
  ValueRange createStep(OpBuilder &nb, Location l, ValueRange state,
                        const StepOperands &s, bool withMaskMod) {
    Region *scoreMod = op.getScoreMod();
    Region *maskMod = withMaskMod ? op.getMaskMod() : nullptr;
    bool regions = scoreMod || maskMod;
    Value coordBatch, coordHead, coordRow, coordCol;
    if (regions) {
      coordBatch = batch;
      coordHead = head;
      coordRow = rowBegin;
      coordCol = s.col0;
    }
    auto step = OnlineAttentionOp::create(
        nb, l, state.getTypes(), s.qTile, s.kTile, s.vTile, state[0], state[1],
        state[2], s.maskTile, s.descales, s.positionRow0, s.positionCol0,
        s.diagonal, coordBatch, coordHead, coordRow, coordCol,
        nb.getF32FloatAttr(static_cast<float>(op.getEffectiveScale())),
        s.window, op.getSoftcapAttr(), regions ? 2 : 0);
    Region *sources[] = {scoreMod, maskMod};
    for (auto [from, to] : llvm::zip(sources, step.getModifiers()))
      if (from)
        nb.cloneRegionBefore(*from, to, to.end());
    return step.getResults();
  }

  /// One scf.for over key blocks [lb, ub) carrying (max, sum, acc); with
  /// `masked`, each step applies the positional mask.
  SmallVector<Value> buildKVLoop(Value qTile, Value lb, Value ub,
                                 ValueRange state, bool masked) {
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, cst(1), state,
        [&](OpBuilder &nb, Location l, Value kb, ValueRange iterArgs) {
          Value col0 = arith::MulIOp::create(nb, l, kb, cst(sizes.blockKV));
          Value cols = arith::MinSIOp::create(
              nb, l, cst(sizes.blockKV),
              arith::SubIOp::create(nb, l, keyLength, col0));
          Value keyRow =
              keyStart ? arith::AddIOp::create(nb, l, keyStart, col0) : col0;
          auto [kTile, vTile] =
              op.isPaged() ? pagedKVTiles(col0, cols)
                           : kvTiles(planeBatch, keyRow, cols);
          Value mTile = op.getMask() ? maskTile(col0, cols) : Value();
          Value stepDescale = scoreDescale, valueDescale;
          if (qBlockDescale) {
            int64_t blockKV = (*op.getDescaleBlock())[1];
            Value kd = extractDescale(nb, l, op.getKDescale(), batch, kvHead,
                                      col0, blockKV);
            stepDescale = arith::MulFOp::create(nb, l, qBlockDescale, kd);
            valueDescale = extractDescale(nb, l, op.getVDescale(), batch,
                                          kvHead, col0, blockKV);
          }
          ScoreModifiers mods = ScoreModifiers::get(op);
          StepOperands step{qTile, kTile, vTile, mTile, col0};
          if (masked) {
            step.window = nb.getDenseI64ArrayAttr({mods.left, mods.right});
            step.positionRow0 = rowBegin;
            step.positionCol0 = col0;
            step.diagonal = diagonal;
          }
          if (stepDescale)
            step.descales.push_back(stepDescale);
          if (valueDescale)
            step.descales.push_back(valueDescale);
          if (!sizes.maskModSparsity || !op.getMaskMod()) {
            scf::YieldOp::create(
                nb, l, createStep(nb, l, iterArgs, step, /*withMaskMod=*/true));
            return;
          }
          // Block sparsity from mask_mod: a block it hides entirely is
          // skipped, one it hides nothing of drops it.
          Value rowEnd = arith::AddIOp::create(nb, l, rowBegin, rows);
          Value colEnd = arith::AddIOp::create(nb, l, col0, cols);
          MaskModBlockVisibility visibility =
              classifyMaskModBlock(nb, l, *op.getMaskMod(), batch, head,
                                   rowBegin, rowEnd, col0, colEnd);
          auto visit = scf::IfOp::create(
              nb, l, visibility.someVisible,
              [&](OpBuilder &tb, Location tl) {
                auto full = scf::IfOp::create(
                    tb, tl, visibility.allVisible,
                    [&](OpBuilder &fb, Location fl) {
                      scf::YieldOp::create(
                          fb, fl, createStep(fb, fl, iterArgs, step, false));
                    },
                    [&](OpBuilder &pb, Location pl) {
                      scf::YieldOp::create(
                          pb, pl, createStep(pb, pl, iterArgs, step, true));
                    });
                scf::YieldOp::create(tb, tl, full.getResults());
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, iterArgs);
              });
          scf::YieldOp::create(nb, l, visit.getResults());
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// Fills of the initial state: max = -inf, sum = 0, acc = 0.
  SmallVector<Value> initialState() {
    int64_t headDimV = op.getValueType().getDimSize(3);
    auto fill = [&](ArrayRef<OpFoldResult> shapeSizes, float value) {
      return createFilledF32Tensor(b, loc, shapeSizes, value);
    };
    return {fill({rows}, -std::numeric_limits<float>::infinity()),
            fill({rows}, 0.0f), fill({rows, b.getIndexAttr(headDimV)}, 0.0f)};
  }

  /// The key/value loops of this query block; returns the final state.
  SmallVector<Value> buildKVLoops(Value qTile) {
    SmallVector<Value> state = initialState();
    ScoreModifiers mods = ScoreModifiers::get(op);
    if (!mods.hasWindow()) {
      Value numBlocks = arith::CeilDivSIOp::create(b, loc, keyLength,
                                                   cst(sizes.blockKV));
      return buildKVLoop(qTile, cst(0), numBlocks, state, /*masked=*/false);
    }
    Value rowEnd = arith::AddIOp::create(b, loc, rowBegin, rows);
    auto range = KVBlockRangeOp::create(
        b, loc, rowBegin, rowEnd, keyLength, diagonal,
        b.getI64IntegerAttr(sizes.blockKV),
        b.getDenseI64ArrayAttr({mods.left, mods.right}));
    state = buildKVLoop(qTile, range.getBegin(), range.getFullBegin(), state,
                        /*masked=*/true);
    state = buildKVLoop(qTile, range.getFullBegin(), range.getFullEnd(), state,
                        /*masked=*/false);
    return buildKVLoop(qTile, range.getFullEnd(), range.getEnd(), state,
                       /*masked=*/true);
  }

  /// out = acc / sum (cast to the output type) and lse, for this block.
  std::pair<Value, Value> buildEpilogue(ArrayRef<Value> state) {
    MLIRContext *ctx = b.getContext();
    Type outElt = op.getOutType().getElementType();
    Value accTile = state[2];
    SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(b, loc, accTile);
    Value outInit = tensor::EmptyOp::create(b, loc, outSizes, outElt);
    AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap row2 = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    auto par = utils::IteratorType::parallel;
    Value outTile =
        linalg::GenericOp::create(
            b, loc, outInit.getType(), ValueRange{accTile, state[1]},
            ValueRange{outInit}, ArrayRef<AffineMap>{id2, row2, id2},
            ArrayRef<utils::IteratorType>{par, par},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value o = normalizeOutput(nb, l, args[0], args[1], vDescale);
              linalg::YieldOp::create(nb, l, truncateFromF32(nb, l, o, outElt));
            })
            .getResult(0);
    Value lseTile;
    if (op.getLse()) {
      Value lseInit = tensor::EmptyOp::create(
          b, loc, ArrayRef<OpFoldResult>{rows}, b.getF32Type());
      AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
      lseTile = linalg::GenericOp::create(
                    b, loc, lseInit.getType(), ValueRange{state[0], state[1]},
                    ValueRange{lseInit}, ArrayRef<AffineMap>{id1, id1, id1},
                    ArrayRef<utils::IteratorType>{par},
                    [&](OpBuilder &nb, Location l, ValueRange args) {
                      linalg::YieldOp::create(
                          nb, l,
                          logSumExpFromLog2(nb, l, safeRowMax(nb, l, args[0]),
                                            args[1]));
                    })
                    .getResult(0);
    }
    return {outTile, lseTile};
  }
};
} // namespace

/// P - 1, the last page of the pools (a constant when P is static).
static Value getLastPage(OpBuilder &b, Location loc, AttentionOp op) {
  int64_t numPages = op.getStaticNumPages();
  if (!ShapedType::isDynamic(numPages))
    return arith::ConstantIndexOp::create(b, loc, numPages - 1);
  Value pages = tensor::DimOp::create(b, loc, op.getKey(), 0);
  return arith::SubIOp::create(b, loc, pages,
                               arith::ConstantIndexOp::create(b, loc, 1));
}

FailureOr<SmallVector<Value>>
mlir::fa::tileAttention(RewriterBase &rewriter, AttentionOp op,
                        const AttentionTileSizes &requestedSizes) {
  if (requestedSizes.blockQ <= 0 || requestedSizes.blockKV <= 0)
    return op.emitOpError() << "tile sizes must be positive, got block-q = "
                            << requestedSizes.blockQ
                            << ", block-kv = " << requestedSizes.blockKV;
  // Per-block descales: every tile must lie in one descale block, so that the
  // q and k descales of a step are scalars. The tile sizes become
  // gcd(requested, descale_block) (equal when the kernel's tiles are the
  // descale blocks, as fa-quantize-fp8 makes them by default).
  AttentionTileSizes sizes = requestedSizes;
  int64_t descaleRank = getDescaleRank(op);
  if (descaleRank == 3) {
    ArrayRef<int64_t> block = *op.getDescaleBlock();
    sizes.blockQ = std::gcd(sizes.blockQ, block[0]);
    sizes.blockKV = std::gcd(sizes.blockKV, block[1]);
  }
  // Paged: a key step never straddles two pages.
  if (op.isPaged())
    sizes.blockKV = std::gcd(sizes.blockKV, op.getPageSize());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  AttentionShape shape = getAttentionShape(rewriter, loc, op);
  emitDynamicShapeChecks(rewriter, loc, op, shape);

  // Results, initialized empty: every element is written by exactly one
  // iteration of the forall.
  SmallVector<OpFoldResult> outSizes =
      tensor::getMixedSizes(rewriter, loc, op.getQuery());
  outSizes[3] = rewriter.getIndexAttr(op.getValueType().getDimSize(3));
  SmallVector<Value> inits = {tensor::EmptyOp::create(
      rewriter, loc, outSizes, op.getOutType().getElementType())};
  if (op.getLse())
    inits.push_back(tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>(outSizes).take_front(3),
        rewriter.getF32Type()));
  // With varlen, rows of no sequence keep out = 0 and lse = -inf.
  if (op.isVarlen()) {
    auto fill = [&](Value init, double value) -> Value {
      Type elt = cast<RankedTensorType>(init.getType()).getElementType();
      Value cst = arith::ConstantOp::create(
          rewriter, loc, rewriter.getFloatAttr(elt, value));
      return linalg::FillOp::create(rewriter, loc, cst, init).getResult(0);
    };
    inits[0] = fill(inits[0], 0.0);
    if (op.getLse())
      inits[1] = fill(inits[1], -std::numeric_limits<double>::infinity());
  }

  Value blockQ = arith::ConstantIndexOp::create(rewriter, loc, sizes.blockQ);
  Value numQBlocks =
      arith::CeilDivSIOp::create(rewriter, loc, shape.queryLength, blockQ);
  SmallVector<OpFoldResult> upperBounds = {outSizes[0], shape.queryHeads,
                                           numQBlocks};
  // With varlen the batch loop runs over the B packed sequences, and each
  // sequence's query blocks are at most the packed length's.
  if (op.isVarlen()) {
    Value offsets = tensor::DimOp::create(rewriter, loc, op.getCuSeqlensQ(), 0);
    upperBounds[0] = arith::MaxSIOp::create(
                         rewriter, loc,
                         arith::SubIOp::create(
                             rewriter, loc, offsets,
                             arith::ConstantIndexOp::create(rewriter, loc, 1)),
                         arith::ConstantIndexOp::create(rewriter, loc, 0))
                         .getResult();
  }
  // Per tensor: the score descale is computed once, before the forall.
  Value scoreDescale;
  if (Value qd = op.getQDescale(); qd && descaleRank == 0)
    scoreDescale = arith::MulFOp::create(rewriter, loc, qd, op.getKDescale());

  auto forall = scf::ForallOp::create(rewriter, loc, upperBounds, inits,
                                      /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard bodyGuard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> ivs(forall.getInductionVars());
    QueryBlockBuilder qbb{rewriter, loc, op, shape, sizes};
    qbb.batch = ivs[0];
    qbb.head = ivs[1];
    qbb.planeBatch = qbb.batch;
    qbb.rowBegin = arith::MulIOp::create(rewriter, loc, ivs[2], blockQ);
    Value queryLength = shape.queryLength;
    if (op.isVarlen()) {
      qbb.planeBatch = arith::ConstantIndexOp::create(rewriter, loc, 0);
      PackedSequence rows = getPackedSequence(
          rewriter, loc, op.getCuSeqlensQ(), qbb.batch, shape.queryLength);
      qbb.queryStart = rows.start;
      qbb.queryLength = queryLength = rows.length;
    }
    qbb.rows = arith::MinSIOp::create(
        rewriter, loc, blockQ,
        arith::SubIOp::create(rewriter, loc, queryLength, qbb.rowBegin));
    // A varlen sequence shorter than the packed length has empty blocks.
    if (op.isVarlen())
      qbb.rows = arith::MaxSIOp::create(
          rewriter, loc, qbb.rows,
          arith::ConstantIndexOp::create(rewriter, loc, 0));
    qbb.kvHead = getKVHead(rewriter, loc, qbb.head, shape);
    qbb.setSequenceKeys();
    if (op.isPaged())
      qbb.lastPage = getLastPage(rewriter, loc, op);
    qbb.scoreDescale = scoreDescale;
    if (descaleRank == 0) {
      qbb.vDescale = op.getVDescale();
    } else if (descaleRank == 2) {
      // Per (batch, head): one score descale per query block, vd in the
      // epilogue.
      Value qd = extractDescale(rewriter, loc, op.getQDescale(), qbb.batch,
                                qbb.head, Value(), 1);
      Value kd = extractDescale(rewriter, loc, op.getKDescale(), qbb.batch,
                                qbb.kvHead, Value(), 1);
      qbb.scoreDescale = arith::MulFOp::create(rewriter, loc, qd, kd);
      qbb.vDescale = extractDescale(rewriter, loc, op.getVDescale(), qbb.batch,
                                    qbb.kvHead, Value(), 1);
    } else {
      qbb.qBlockDescale =
          extractDescale(rewriter, loc, op.getQDescale(), qbb.batch, qbb.head,
                         qbb.rowBegin, (*op.getDescaleBlock())[0]);
    }
    int64_t headDim = op.getQueryType().getDimSize(3);
    // The block's first row in the query/out planes.
    Value planeRow = qbb.queryStart ? arith::AddIOp::create(rewriter, loc,
                                                            qbb.queryStart,
                                                            qbb.rowBegin)
                                          .getResult()
                                    : qbb.rowBegin;
    Value qTile = qbb.slice2D(op.getQuery(), qbb.planeBatch, qbb.head,
                              planeRow, qbb.rows,
                              rewriter.getIndexAttr(headDim));
    SmallVector<Value> state = qbb.buildKVLoops(qTile);
    auto [outTile, lseTile] = qbb.buildEpilogue(state);

    // Write back the tiles.
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> one4(4, rewriter.getIndexAttr(1));
    ValueRange sharedOuts = forall.getRegionIterArgs();
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, outTile, sharedOuts[0],
        ArrayRef<OpFoldResult>{qbb.planeBatch, qbb.head, planeRow,
                               rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1), qbb.rows,
                               outSizes[3]},
        one4);
    if (lseTile)
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, lseTile, sharedOuts[1],
          ArrayRef<OpFoldResult>{qbb.planeBatch, qbb.head, planeRow},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                                 rewriter.getIndexAttr(1), qbb.rows},
          ArrayRef<OpFoldResult>(one4).take_front(3));
  }

  // The forall's results carry the op's (possibly more static) types.
  SmallVector<Value> results;
  for (auto [result, original] :
       llvm::zip(forall.getResults(), op->getResults())) {
    Value r = result;
    if (r.getType() != original.getType())
      r = tensor::CastOp::create(rewriter, loc, original.getType(), r);
    results.push_back(r);
  }
  return results;
}

namespace {
struct TileAttentionPattern : OpRewritePattern<AttentionOp> {
  TileAttentionPattern(MLIRContext *ctx, const AttentionTileSizes &sizes)
      : OpRewritePattern(ctx), sizes(sizes) {}
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> results = tileAttention(rewriter, op, sizes);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }
  AttentionTileSizes sizes;
};

struct FATileAttentionPass
    : fa::impl::FATileAttentionPassBase<FATileAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    AttentionTileSizes sizes{blockQ, blockKV, maskModSparsity};
    if (sizes.blockQ <= 0 || sizes.blockKV <= 0) {
      getOperation()->emitError()
          << "fa-tile-attention: block-q and block-kv must be positive, got "
          << sizes.blockQ << " and " << sizes.blockKV;
      return signalPassFailure();
    }
    // Walk rather than a greedy driver: one rewrite per op, and no folding of
    // the tiled IR (the FileCheck tests show it as built).
    IRRewriter rewriter(&getContext());
    WalkResult walk = getOperation()->walk([&](AttentionOp op) {
      FailureOr<SmallVector<Value>> results = tileAttention(rewriter, op, sizes);
      if (failed(results))
        return WalkResult::interrupt();
      rewriter.replaceOp(op, *results);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void mlir::fa::populateTileAttentionPatterns(RewritePatternSet &patterns,
                                             const AttentionTileSizes &sizes) {
  patterns.add<TileAttentionPattern>(patterns.getContext(), sizes);
}
