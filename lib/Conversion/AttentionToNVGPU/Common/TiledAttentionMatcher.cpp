//===- TiledAttentionMatcher.cpp - read the tiled form into TiledAttention ===//
//
// The chip-independent half of convert-fa-to-nvgpu's input side: reads the
// tiled form of fa-tile-attention (scf.forall over (batch, head, query block),
// slices of the function arguments, fa.kv_block_range, fa.online_attention
// steps, epilogue and parallel_insert_slice) into a TiledAttention that every
// chip's kernel builder consumes. Each failure is a diagnostic on the op at
// fault.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

using namespace mlir;
using namespace mlir::fa;

namespace {
/// The function argument number `v` is, if it is one of `func`'s.
std::optional<unsigned> funcArgNumber(func::FuncOp func, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  return arg.getArgNumber();
}

/// `c` when `v` is `iv * c` (either operand order) with a constant c.
std::optional<int64_t> matchTimesConstant(OpFoldResult v, Value iv) {
  auto value = dyn_cast<Value>(v);
  if (!value)
    return std::nullopt;
  auto mul = value.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return std::nullopt;
  if (mul.getLhs() == iv)
    return getConstantIntValue(mul.getRhs());
  if (mul.getRhs() == iv)
    return getConstantIntValue(mul.getLhs());
  return std::nullopt;
}

bool isValue(OpFoldResult v, Value expected) {
  return dyn_cast<Value>(v) == expected;
}

bool isConstant(OpFoldResult v, int64_t c) {
  std::optional<int64_t> got = getConstantIntValue(v);
  return got && *got == c;
}

/// The tensor.extract under `v`'s clamps and index_cast (minsi, maxsi), if
/// any: how fa-tile-attention reads a per-sequence length or offset.
tensor::ExtractOp clampedExtract(Value v) {
  while (v && (v.getDefiningOp<arith::MinSIOp>() ||
               v.getDefiningOp<arith::MaxSIOp>() ||
               v.getDefiningOp<arith::IndexCastOp>()))
    v = v.getDefiningOp()->getOperand(0);
  return v ? v.getDefiningOp<tensor::ExtractOp>() : nullptr;
}

/// Whether `v` is the size of dim `dim` of `tensor` (tensor.dim or, for a
/// static size, a constant).
bool isDimOf(Value v, Value tensor, int64_t dim) {
  if (auto d = v.getDefiningOp<tensor::DimOp>())
    return d.getSource() == tensor && isConstant(d.getIndex(), dim);
  int64_t size = cast<RankedTensorType>(tensor.getType()).getDimSize(dim);
  return !ShapedType::isDynamic(size) && isConstant(v, size);
}

/// The matcher; each failure is a diagnostic on the op at fault.
struct Matcher {
  func::FuncOp func;
  TiledAttention attn;
  Value qTile;
  Value kSource, vSource, rowBegin;
  int64_t stepsSeen = 0;

  InFlightDiagnostic fail(Operation *op, const Twine &msg) {
    return op->emitOpError("convert-fa-to-nvgpu: ") << msg;
  }

  /// varlen: the function arguments read at [batch + 1] (rank-1 i32), the
  /// sequences' end offsets; which is the query's and which the key's is
  /// decided by the slices that start at them.
  SmallVector<unsigned, 2> offsetArgs;

  /// With varlen, `v` = start + rest where start is the clamped offset of the
  /// forall's sequence read from one of offsetArgs: returns rest and records
  /// the argument in `arg` (which must agree with an earlier one). Without
  /// varlen, returns `v`.
  std::optional<OpFoldResult> stripSequenceStart(OpFoldResult v,
                                                 std::optional<unsigned> &arg) {
    if (offsetArgs.empty())
      return v;
    auto add = dyn_cast_or_null<arith::AddIOp>(
        dyn_cast<Value>(v) ? cast<Value>(v).getDefiningOp() : nullptr);
    tensor::ExtractOp extract = add ? clampedExtract(add.getLhs()) : nullptr;
    std::optional<unsigned> source =
        extract ? funcArgNumber(func, extract.getTensor()) : std::nullopt;
    if (!source || !llvm::is_contained(offsetArgs, *source) ||
        extract.getIndices().front() != attn.forall.getInductionVars()[0] ||
        (arg && *arg != *source))
      return std::nullopt;
    arg = source;
    return OpFoldResult(add.getRhs());
  }

  /// The planes' batch offset: the forall's batch, or 0 with varlen.
  bool isPlaneBatch(OpFoldResult v) {
    return offsetArgs.empty() ? isValue(v, attn.forall.getInductionVars()[0])
                              : isConstant(v, 0);
  }

  /// The query slice: func arg [iv0, iv1, iv2 * BQ, 0] [1, 1, rows, D];
  /// with varlen [0, iv1, qs + iv2 * BQ, 0].
  LogicalResult matchQuery(OnlineAttentionOp step) {
    auto slice = step.getQuery().getDefiningOp<tensor::ExtractSliceOp>();
    std::optional<unsigned> arg =
        slice ? funcArgNumber(func, slice.getSource()) : std::nullopt;
    if (!arg)
      return fail(step, "the query tile must be a tensor.extract_slice of a "
                        "function argument");
    auto ivs = attn.forall.getInductionVars();
    auto offsets = slice.getMixedOffsets(), sizes = slice.getMixedSizes();
    std::optional<OpFoldResult> row =
        offsets.size() == 4 ? stripSequenceStart(offsets[2], attn.cuSeqlensQArg)
                            : std::nullopt;
    std::optional<int64_t> blockQ =
        row ? matchTimesConstant(*row, ivs[2]) : std::nullopt;
    if (offsets.size() != 4 || !isPlaneBatch(offsets[0]) ||
        !isValue(offsets[1], ivs[1]) || !blockQ || !isConstant(offsets[3], 0) ||
        !isConstant(sizes[0], 1) || !isConstant(sizes[1], 1) ||
        !slice.hasUnitStride())
      return fail(step, "the query tile must be the slice [batch, head, "
                        "block * block-q, 0] of the forall's (batch, head, "
                        "block)");
    attn.queryArg = *arg;
    attn.blockQ = *blockQ;
    rowBegin = cast<Value>(*row);
    qTile = step.getQuery();
    return success();
  }

  /// A key or value slice: func arg [iv0, kvHead, kb * BKV, 0] where kvHead
  /// is the head iv divided by the GQA ratio; paged (matchPage), func arg
  /// [page, kvHead, (kb * BKV) % S, 0].
  LogicalResult matchKV(OnlineAttentionOp step, Value tile, StringRef what,
                        Value &source) {
    auto slice = tile.getDefiningOp<tensor::ExtractSliceOp>();
    std::optional<unsigned> arg =
        slice ? funcArgNumber(func, slice.getSource()) : std::nullopt;
    if (!arg)
      return fail(step, "the ") << what << " tile must be a "
                                   "tensor.extract_slice of a function argument";
    auto loop = dyn_cast<scf::ForOp>(step->getParentOp());
    auto ivs = attn.forall.getInductionVars();
    auto offsets = slice.getMixedOffsets(), sizes = slice.getMixedSizes();
    Value head = offsets.size() == 4 ? dyn_cast<Value>(offsets[1]) : Value();
    auto div = head ? head.getDefiningOp<arith::DivUIOp>() : nullptr;
    bool headOk = head == ivs[1] || (div && div.getLhs() == ivs[1]);
    bool shapeOk = offsets.size() == 4 && headOk &&
                   isConstant(offsets[3], 0) && isConstant(sizes[0], 1) &&
                   isConstant(sizes[1], 1) && slice.hasUnitStride();
    std::optional<int64_t> blockKV;
    std::optional<OpFoldResult> keyRow =
        shapeOk ? stripSequenceStart(offsets[2], attn.cuSeqlensKArg)
                : std::nullopt;
    if (shapeOk && loop && keyRow && isPlaneBatch(offsets[0]))
      blockKV = matchTimesConstant(*keyRow, loop.getInductionVar());
    else if (shapeOk && loop && offsetArgs.empty())
      blockKV = matchPage(slice, loop.getInductionVar());
    if (!blockKV)
      return fail(step, "the ")
             << what
             << " tile must be the slice [batch, head / (Hq / Hkv), block * "
                "block-kv, 0] of the forall's (batch, head) and the loop's "
                "block, or of a paged pool [page, head / (Hq / Hkv), (block * "
                "block-kv) % page_size, 0]";
    if (attn.blockKV && attn.blockKV != *blockKV)
      return fail(step, "all steps must use one block-kv");
    if (source && source != slice.getSource())
      return fail(step, "all steps must read one ") << what << " tensor";
    attn.blockKV = *blockKV;
    source = slice.getSource();
    (what == "key" ? attn.keyArg : attn.valueArg) = *arg;
    return success();
  }

  /// A paged K/V slice of fa-tile-attention: offsets
  ///   [clamp(index_cast(extract %table[batch, start / S])), head,
  ///    start % S, 0]
  /// with start = block * block-kv and S = the pool's dim 2. Records the
  /// table argument and S; returns block-kv.
  std::optional<int64_t> matchPage(tensor::ExtractSliceOp slice, Value iv) {
    auto offsets = slice.getMixedOffsets();
    int64_t pageSize = slice.getSourceType().getDimSize(2);
    auto rem = dyn_cast_or_null<arith::RemUIOp>(
        dyn_cast<Value>(offsets[2]) ? cast<Value>(offsets[2]).getDefiningOp()
                                    : nullptr);
    if (!rem || !isConstant(rem.getRhs(), pageSize) ||
        ShapedType::isDynamic(pageSize))
      return std::nullopt;
    std::optional<int64_t> blockKV = matchTimesConstant(rem.getLhs(), iv);
    // The page id: tensor.extract under index_cast and the clamps.
    Value id = dyn_cast<Value>(offsets[0]);
    while (id && (id.getDefiningOp<arith::MinSIOp>() ||
                  id.getDefiningOp<arith::MaxSIOp>() ||
                  id.getDefiningOp<arith::IndexCastOp>()))
      id = id.getDefiningOp()->getOperand(0);
    auto extract = id ? id.getDefiningOp<tensor::ExtractOp>() : nullptr;
    std::optional<unsigned> table =
        extract ? funcArgNumber(func, extract.getTensor()) : std::nullopt;
    if (!blockKV || !table || extract.getIndices().size() != 2 ||
        extract.getIndices()[0] != attn.forall.getInductionVars()[0])
      return std::nullopt;
    auto pageIndex = extract.getIndices()[1].getDefiningOp<arith::DivUIOp>();
    if (!pageIndex || pageIndex.getLhs() != rem.getLhs() ||
        !isConstant(pageIndex.getRhs(), pageSize))
      return std::nullopt;
    if ((attn.pageTableArg && *attn.pageTableArg != *table) ||
        (attn.pageSize && attn.pageSize != pageSize))
      return std::nullopt;
    attn.pageTableArg = *table;
    attn.pageSize = pageSize;
    return blockKV;
  }

  /// kv_lens: a `tensor.extract %lens[batch]` of a rank-1 i32 function
  /// argument directly in the forall (fa-tile-attention reads the tile's
  /// key count there).
  LogicalResult matchKeyLengths() {
    Value batch = attn.forall.getInductionVars()[0];
    // varlen first: its offsets are read at [batch] and [batch + 1].
    for (auto extract : attn.forall.getBody()->getOps<tensor::ExtractOp>()) {
      std::optional<unsigned> arg = funcArgNumber(func, extract.getTensor());
      auto ty = extract.getTensor().getType();
      auto next = extract.getIndices().front().getDefiningOp<arith::AddIOp>();
      if (arg && ty.getRank() == 1 && ty.getElementType().isInteger(32) &&
          next && next.getLhs() == batch && isConstant(next.getRhs(), 1) &&
          !llvm::is_contained(offsetArgs, *arg))
        offsetArgs.push_back(*arg);
    }
    // One tensor when queries and keys share their offsets (self-attention).
    if (offsetArgs.size() > 2)
      return fail(attn.forall, "the kernel reads one query and one key offset "
                               "tensor (varlen)");
    for (auto extract : attn.forall.getBody()->getOps<tensor::ExtractOp>()) {
      std::optional<unsigned> arg = funcArgNumber(func, extract.getTensor());
      auto ty = extract.getTensor().getType();
      if (!arg || ty.getRank() != 1 || !ty.getElementType().isInteger(32) ||
          extract.getIndices().front() != batch ||
          llvm::is_contained(offsetArgs, *arg))
        continue;
      if (attn.kvLensArg && *attn.kvLensArg != *arg)
        return fail(extract, "the kernel reads one kv_lens tensor");
      attn.kvLensArg = *arg;
    }
    return success();
  }

  /// The key count the window's diagonal starts from: Nk (dim 2 of the key),
  /// the pool's capacity (a constant) or the kv_lens count of the tile
  /// (clamped index_cast of its tensor.extract).
  bool isKeyCount(Value v) {
    if (attn.isVarlen())
      return isSequenceLength(v, attn.cuSeqlensKArg);
    if (!attn.pageSize && !attn.kvLensArg)
      return isDimOf(v, kSource, 2);
    if (!attn.kvLensArg)
      return static_cast<bool>(getConstantIntValue(v)) ||
             v.getDefiningOp<arith::MulIOp>();
    while (v && (v.getDefiningOp<arith::MinSIOp>() ||
                 v.getDefiningOp<arith::MaxSIOp>() ||
                 v.getDefiningOp<arith::IndexCastOp>()))
      v = v.getDefiningOp()->getOperand(0);
    auto extract = v ? v.getDefiningOp<tensor::ExtractOp>() : nullptr;
    return extract && funcArgNumber(func, extract.getTensor()) == attn.kvLensArg;
  }

  /// varlen: `v` is a sequence's length end - start, both clamped offsets
  /// read from the function argument `arg`.
  bool isSequenceLength(Value v, std::optional<unsigned> arg) {
    auto sub = v.getDefiningOp<arith::SubIOp>();
    tensor::ExtractOp start = sub ? clampedExtract(sub.getRhs()) : nullptr;
    tensor::ExtractOp end = sub ? clampedExtract(sub.getLhs()) : nullptr;
    return arg && start && end &&
           funcArgNumber(func, start.getTensor()) == arg &&
           funcArgNumber(func, end.getTensor()) == arg;
  }

  /// The query row count the diagonal subtracts: Nq, or with varlen the
  /// sequence's.
  bool isQueryCount(Value v) {
    if (attn.isVarlen())
      return isSequenceLength(v, attn.cuSeqlensQArg);
    return isDimOf(v, func.getArgument(attn.queryArg), 2);
  }

  /// The function argument `v` is, if it is one of type f32.
  std::optional<unsigned> scalarArg(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        !arg.getType().isF32())
      return std::nullopt;
    return arg.getArgNumber();
  }

  /// The function argument a descale comes from: itself (an f32 scalar) or
  /// the tensor a `tensor.extract` reads.
  std::optional<unsigned> descaleArg(Value v) {
    if (std::optional<unsigned> a = scalarArg(v))
      return a;
    auto extract = v.getDefiningOp<tensor::ExtractOp>();
    auto arg = extract ? dyn_cast<BlockArgument>(extract.getTensor())
                       : BlockArgument();
    if (!arg || arg.getOwner() != &func.getBody().front())
      return std::nullopt;
    return arg.getArgNumber();
  }

  /// A descale as the tiled form reads it: an f32 function argument (rank
  /// 0), or `tensor.extract %arg[b, h]` (rank 2) or `%arg[b, h, blk]` (rank
  /// 3) of an f32 tensor argument, where blk must be the tile's block index
  /// `blockIv` (`(blockIv * t) / t`: descale blocks equal to the tiles).
  struct DescaleSource {
    unsigned arg;
    int64_t rank;
  };
  FailureOr<DescaleSource> descaleSource(Operation *at, Value v, Value blockIv,
                                         StringRef what) {
    std::optional<unsigned> arg = descaleArg(v);
    if (!arg)
      return fail(at, "the kernel needs the ")
             << what
             << " descale to be an f32 function argument or an element of "
                "one (per tensor, head or block)";
    auto extract = v.getDefiningOp<tensor::ExtractOp>();
    if (!extract)
      return DescaleSource{*arg, 0}; // an f32 argument: per tensor
    int64_t rank = extract.getTensor().getType().getRank();
    if (rank == 3) {
      Value blk = extract.getIndices()[2];
      auto div = blk.getDefiningOp<arith::DivUIOp>();
      auto mul = div ? div.getLhs().getDefiningOp<arith::MulIOp>()
                     : arith::MulIOp();
      std::optional<int64_t> tile, block;
      if (mul) {
        tile = getConstantIntValue(mul.getRhs());
        block = getConstantIntValue(div.getRhs());
      }
      if (blk != blockIv &&
          !(mul && mul.getLhs() == blockIv && tile && block && *tile == *block))
        return fail(at, "the kernel needs per-block ")
               << what
               << " descales over blocks equal to its tiles (descale_block = "
                  "[block-q, block-kv] of the tiled form)";
    }
    return DescaleSource{*arg, rank};
  }

  /// fp8: every step's descale is `arith.mulf q_descale, k_descale`
  /// (fa-tile-attention's form), the same function arguments for all, and a
  /// per-block v descale is the step's second descale.
  LogicalResult matchScoreDescale(OnlineAttentionOp step, Value descale) {
    auto mul = descale.getDefiningOp<arith::MulFOp>();
    if (!mul)
      return fail(step, "the kernel needs the descale to be the product of "
                        "the q and k descales");
    auto loop = cast<scf::ForOp>(step->getParentOp());
    FailureOr<DescaleSource> qd = descaleSource(
        step, mul.getLhs(), attn.forall.getInductionVars()[2], "q");
    if (failed(qd))
      return failure();
    FailureOr<DescaleSource> kd =
        descaleSource(step, mul.getRhs(), loop.getInductionVar(), "k");
    if (failed(kd))
      return failure();
    if (qd->rank != kd->rank)
      return fail(step, "the kernel needs q and k descales of one "
                        "granularity");
    std::array<unsigned, 3> args = {qd->arg, kd->arg, 0};
    if (Value vdValue = step.getValueDescale()) {
      FailureOr<DescaleSource> vd =
          descaleSource(step, vdValue, loop.getInductionVar(), "v");
      if (failed(vd))
        return failure();
      if (vd->rank != kd->rank)
        return fail(step, "the kernel needs q, k and v descales of one "
                          "granularity");
      args[2] = vd->arg;
    } else if (kd->rank == 3) {
      return fail(step, "the kernel needs per-block v descales with per-block "
                        "q and k descales");
    }
    if (attn.descaleArgs && (*attn.descaleArgs != args ||
                             attn.descaleRank != kd->rank))
      return fail(step, "all steps must use one descale");
    attn.descaleArgs = args;
    attn.descaleRank = kd->rank;
    return success();
  }

  /// fp8 per tensor or per head: the v descale is the one other f32 function
  /// argument (or element of one) that the normalization multiplies by.
  LogicalResult matchValueDescale() {
    if (attn.descaleRank == 3)
      return success(); // per block: a step operand (matchScoreDescale)
    std::optional<unsigned> vd;
    bool ambiguous = false;
    auto &da = *attn.descaleArgs;
    attn.forall.walk([&](arith::MulFOp mul) {
      for (Value operand : mul->getOperands()) {
        std::optional<unsigned> a = descaleArg(operand);
        if (!a || *a == da[0] || *a == da[1])
          continue;
        ambiguous |= vd && *vd != *a;
        vd = a;
      }
    });
    if (!vd || ambiguous)
      return fail(attn.forall, "the kernel needs the output multiplied by one "
                               "v descale, an f32 function argument or an "
                               "element of one");
    da[2] = *vd;
    return success();
  }

  /// The mask tile: func arg [b | 0, head | 0, block * BQ, kvBlock * BKV]
  /// [1, 1, rows, keys], 0 where the mask broadcasts (its dim is 1).
  LogicalResult matchMask(OnlineAttentionOp step, Value tile) {
    auto slice = tile.getDefiningOp<tensor::ExtractSliceOp>();
    std::optional<unsigned> arg =
        slice ? funcArgNumber(func, slice.getSource()) : std::nullopt;
    if (!arg)
      return fail(step, "the mask tile must be a tensor.extract_slice of a "
                        "function argument");
    RankedTensorType ty = slice.getSourceType();
    auto loop = cast<scf::ForOp>(step->getParentOp());
    auto ivs = attn.forall.getInductionVars();
    auto offsets = slice.getMixedOffsets(), sizes = slice.getMixedSizes();
    ScoreModifierSpec::Mask mask;
    mask.arg = *arg;
    mask.elementType = ty.getElementType();
    auto broadcastOr = [&](int64_t d, Value iv, bool &broadcast) {
      broadcast = ty.getDimSize(d) == 1 && isConstant(offsets[d], 0);
      return broadcast || isValue(offsets[d], iv);
    };
    std::optional<int64_t> keys =
        offsets.size() == 4
            ? matchTimesConstant(offsets[3], loop.getInductionVar())
            : std::nullopt;
    // A one-row mask (a static 1 read at 0, size 1) broadcasts over the rows.
    auto rowOr = [&](bool &broadcast) {
      broadcast = ty.getDimSize(2) == 1 && isConstant(offsets[2], 0) &&
                  isConstant(sizes[2], 1);
      return broadcast || isValue(offsets[2], rowBegin);
    };
    if (offsets.size() != 4 || !broadcastOr(0, ivs[0], mask.batchBroadcast) ||
        !broadcastOr(1, ivs[1], mask.headBroadcast) ||
        !rowOr(mask.rowBroadcast) || !keys || *keys != attn.blockKV ||
        !isConstant(sizes[0], 1) || !isConstant(sizes[1], 1) ||
        !slice.hasUnitStride())
      return fail(step, "the mask tile must be the slice [batch or 0, head or "
                        "0, block * block-q or 0, kv block * block-kv] of the "
                        "forall's (batch, head, block) and the loop's block");
    Type elt = mask.elementType;
    if (!elt.isF16() && !elt.isBF16() && !elt.isF32() && !elt.isInteger(1))
      return fail(step, "the kernel needs an f16, bf16, f32 or i1 mask");
    auto &have = attn.modifiers.mask;
    if (have &&
        (have->arg != mask.arg || have->batchBroadcast != mask.batchBroadcast ||
         have->headBroadcast != mask.headBroadcast ||
         have->rowBroadcast != mask.rowBroadcast))
      return fail(step, "all steps must read one mask the same way");
    have = mask;
    return success();
  }

  /// softcap and the mask operand, the same in every step.
  LogicalResult matchModifiers(OnlineAttentionOp step) {
    std::optional<double> cap;
    if (FloatAttr c = step.getSoftcapAttr())
      cap = c.getValueAsDouble();
    if (stepsSeen && cap != attn.modifiers.softcap)
      return fail(step, "all steps must use one softcap");
    attn.modifiers.softcap = cap;
    if (stepsSeen &&
        static_cast<bool>(step.getMask()) != attn.modifiers.mask.has_value())
      return fail(step, "all steps must have a mask, or none");
    if (Value m = step.getMask())
      if (failed(matchMask(step, m)))
        return failure();
    if (failed(matchRegions(step)))
      return failure();
    ++stepsSeen;
    return success();
  }

  /// score_mod / mask_mod: the same regions in every step (fa-tile-attention
  /// copies one fa.attention's), evaluated at coords(batch, head, the tile's
  /// first row, the block's first key); what they read from above must be
  /// something the kernel can take (checkModifierRegionForKernel).
  LogicalResult matchRegions(OnlineAttentionOp step) {
    Region *scoreMod = step.getScoreMod(), *maskMod = step.getMaskMod();
    ScoreModifierSpec &spec = attn.modifiers;
    if (stepsSeen) {
      auto same = [](Region *a, Region *b) {
        if (!a || !b)
          return a == b;
        return OperationEquivalence::isRegionEquivalentTo(
            a, b, OperationEquivalence::Flags::None);
      };
      if (!same(scoreMod, spec.scoreMod) || !same(maskMod, spec.maskMod))
        return fail(step, "all steps must have the same score_mod and "
                          "mask_mod");
    }
    if (!scoreMod && !maskMod)
      return success();
    auto ivs = attn.forall.getInductionVars();
    auto loop = cast<scf::ForOp>(step->getParentOp());
    std::optional<int64_t> keys =
        step.getCoordCol()
            ? matchTimesConstant(step.getCoordCol(), loop.getInductionVar())
            : std::nullopt;
    if (step.getCoordBatch() != ivs[0] || step.getCoordHead() != ivs[1] ||
        step.getCoordRow() != rowBegin || !keys || *keys != attn.blockKV)
      return fail(step, "the kernel needs coords(batch, head, block * "
                        "block-q, kv block * block-kv) of the forall's "
                        "(batch, head, block) and the loop's block");
    if (stepsSeen)
      return success();
    for (Region *r : {scoreMod, maskMod})
      if (r && failed(checkModifierRegionForKernel(step, *r, func,
                                                   spec.captures)))
        return failure();
    spec.scoreMod = scoreMod;
    spec.maskMod = maskMod;
    if (maskMod)
      spec.maskModBound = boundMaskMod(*maskMod);
    return success();
  }

  LogicalResult matchStep(OnlineAttentionOp step) {
    auto loop = dyn_cast<scf::ForOp>(step->getParentOp());
    if (!loop || loop->getParentOp() != attn.forall.getOperation())
      return fail(step, "each step must sit directly in an scf.for directly "
                        "in the scf.forall");
    if (Value descale = step.getDescale())
      if (failed(matchScoreDescale(step, descale)))
        return failure();
    if (!qTile) {
      if (failed(matchQuery(step)))
        return failure();
      attn.scale = step.getScale().convertToDouble();
    } else if (step.getQuery() != qTile) {
      return fail(step, "all steps must use one query tile");
    } else if (step.getScale().convertToDouble() != attn.scale) {
      return fail(step, "all steps must use one scale");
    }
    if (failed(matchKV(step, step.getKey(), "key", kSource)) ||
        failed(matchKV(step, step.getValue(), "value", vSource)))
      return failure();
    if (step.getRow0() && step.getRow0() != rowBegin)
      return fail(step, "the positions' row must be the query tile's row");
    return matchModifiers(step);
  }

  /// One loop without a window; three over fa.kv_block_range with one.
  LogicalResult matchLoops(SmallVector<OnlineAttentionOp> &steps) {
    SmallVector<std::pair<scf::ForOp, bool>> loops; // (loop, masked)
    for (OnlineAttentionOp step : steps) {
      DenseI64ArrayAttr window = step.getWindowAttr();
      bool masked = static_cast<bool>(step.getRow0());
      if (masked != static_cast<bool>(window))
        return fail(step, "a step must have both positions and a window, or "
                          "neither");
      if (window) {
        if (window.size() != 2)
          return fail(step, "the window must have two entries");
        // Bounds past kMaxWindowBound mean the same and would overflow the
        // kernel's band arithmetic.
        attn.windowLeft = clampWindowBound(window[0]);
        attn.windowRight = clampWindowBound(window[1]);
      }
      loops.push_back({cast<scf::ForOp>(step->getParentOp()), masked});
    }
    for (OnlineAttentionOp step : steps)
      if (DenseI64ArrayAttr w = step.getWindowAttr())
        if (clampWindowBound(w[0]) != attn.windowLeft ||
            clampWindowBound(w[1]) != attn.windowRight)
          return fail(step, "all masked steps must use one window");

    SmallVector<fa::KVBlockRangeOp> ranges(
        attn.forall.getBody()->getOps<fa::KVBlockRangeOp>());
    if (!attn.hasWindow()) {
      if (loops.size() != 1 || !ranges.empty() ||
          !isConstant(loops[0].first.getLowerBound(), 0))
        return fail(steps.front(), "without a window the tiled form must "
                                   "have one key/value loop from 0");
      return success();
    }
    if (ranges.size() != 1 || loops.size() != 3)
      return fail(attn.forall, "with a window the tiled form must have one "
                               "fa.kv_block_range and three key/value loops");
    fa::KVBlockRangeOp range = ranges.front();
    if (static_cast<int64_t>(range.getBlockKv()) != attn.blockKV)
      return fail(range, "block_kv differs from the steps' block-kv");
    ArrayRef<int64_t> w = range.getWindow();
    if (w.size() != 2 || clampWindowBound(w[0]) != attn.windowLeft ||
        clampWindowBound(w[1]) != attn.windowRight)
      return fail(range, "window differs from the steps' window");
    if (range.getRowBegin() != rowBegin)
      return fail(range, "rows must start at the query tile's row");
    // The diagonal must be the default bottom-right one, Nk - Nq (the
    // sequence's key count with kv_lens).
    auto diag = range.getDiagonal().getDefiningOp<arith::SubIOp>();
    if (!diag || !isKeyCount(diag.getLhs()) || !isQueryCount(diag.getRhs()))
      return fail(range, "the kernel supports only the bottom-right diagonal "
                         "Nk - Nq, not a diagonal operand");
    Value bounds[3][2] = {{range.getBegin(), range.getFullBegin()},
                          {range.getFullBegin(), range.getFullEnd()},
                          {range.getFullEnd(), range.getEnd()}};
    for (int i = 0; i < 3; ++i) {
      scf::ForOp loop = loops[i].first;
      if (loop.getLowerBound() != bounds[i][0] ||
          loop.getUpperBound() != bounds[i][1] || loops[i].second != (i != 1))
        return fail(loop, "the key/value loops must be masked [begin, "
                          "full_begin), unmasked [full_begin, full_end), "
                          "masked [full_end, end) of fa.kv_block_range");
    }
    return success();
  }

  /// The forall's results are the function's results: out, then lse; each
  /// is written by a tensor.parallel_insert_slice at [batch, head, row, 0].
  LogicalResult matchOutputs() {
    scf::ForallOp forall = attn.forall;
    unsigned n = forall.getNumResults();
    if (n != 1 && n != 2)
      return fail(forall, "the scf.forall must have one result (out) or two "
                          "(out, lse)");
    attn.hasLse = n == 2;
    auto outTy = cast<RankedTensorType>(forall.getResult(0).getType());
    attn.outputType = outTy.getElementType();
    if (attn.descaleArgs) {
      if (!attn.outputType.isF16() && !attn.outputType.isBF16())
        return fail(forall, "the fp8 kernel needs an f16 or bf16 output");
      if (failed(matchValueDescale()))
        return failure();
    } else if (attn.outputType != attn.elementType) {
      return fail(forall, "the kernel needs query, key, value and out of one "
                          "element type: mixed precision (")
             << attn.elementType << " in, " << attn.outputType
             << " out) is not supported on the GPU; produce "
             << attn.elementType << " and convert after the attention "
                                    "(arith.extf)";
    }
    if (outTy.getDimSize(3) != attn.headDim)
      return fail(forall, "the kernel needs the output head dim equal to the "
                          "query head dim");
    auto ivs = forall.getInductionVars();
    for (Operation &op : forall.getTerminator().getYieldingOps()) {
      auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(op);
      if (!insert)
        return fail(&op, "expected tensor.parallel_insert_slice");
      auto offsets = insert.getMixedOffsets();
      std::optional<unsigned> rowsArg = attn.cuSeqlensQArg;
      std::optional<OpFoldResult> row =
          offsets.size() < 3 ? std::nullopt
                             : stripSequenceStart(offsets[2], rowsArg);
      if (offsets.size() < 3 || !isPlaneBatch(offsets[0]) ||
          !isValue(offsets[1], ivs[1]) || !row || !isValue(*row, rowBegin) ||
          rowsArg != attn.cuSeqlensQArg)
        return fail(insert, "the result tiles must be written at [batch, "
                            "head, block * block-q] (varlen: [0, head, "
                            "start + block * block-q])");
    }
    // varlen: rows of no sequence are 0 / -inf on the CPU; the kernel leaves
    // them unwritten (docs/Attention.md): whatever fills them is dropped.
    for (Value init : forall.getOutputs()) {
      if (!attn.isVarlen() && !init.getDefiningOp<tensor::EmptyOp>())
        return fail(forall, "the results must start as tensor.empty (the "
                            "kernel writes every element)");
    }
    // The results reach func.return (possibly through tensor.cast), in order.
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    if (ret.getNumOperands() != n)
      return fail(ret, "the function must return exactly the attention's "
                       "results");
    for (unsigned i = 0; i < n; ++i) {
      Value v = ret.getOperand(i);
      if (auto cast = v.getDefiningOp<tensor::CastOp>())
        v = cast.getSource();
      if (v != forall.getResult(i))
        return fail(ret, "the function must return the scf.forall's results "
                         "(out, then lse)");
    }
    return success();
  }

  FailureOr<TiledAttention> run() {
    attn.func = func;
    if (!func.getOps<AttentionOp>().empty() ||
        func.walk([](AttentionOp) { return WalkResult::interrupt(); })
            .wasInterrupted()) {
      func.emitError("convert-fa-to-nvgpu expects the tiled form: run "
                     "fa-tile-attention first (fa-to-ptx does)");
      return failure();
    }
    SmallVector<scf::ForallOp> foralls;
    func.walk([&](scf::ForallOp f) {
      if (f.walk([](OnlineAttentionOp) { return WalkResult::interrupt(); })
              .wasInterrupted())
        foralls.push_back(f);
    });
    if (foralls.size() != 1) {
      func.emitError("convert-fa-to-nvgpu expects exactly one tiled attention "
                     "(scf.forall with fa.online_attention) per func.func, "
                     "found ")
          << foralls.size();
      return failure();
    }
    attn.forall = foralls.front();
    if (attn.forall.getRank() != 3 || attn.forall.getMapping()) {
      attn.forall.emitOpError("convert-fa-to-nvgpu: expected an unmapped "
                              "scf.forall over (batch, head, query block)");
      return failure();
    }
    if (failed(matchKeyLengths()))
      return failure();
    SmallVector<OnlineAttentionOp> steps;
    attn.forall.walk([&](OnlineAttentionOp s) { steps.push_back(s); });
    for (OnlineAttentionOp step : steps)
      if (failed(matchStep(step)))
        return failure();
    auto qTy = cast<RankedTensorType>(qTile.getType());
    auto kTy = cast<RankedTensorType>(steps.front().getKey().getType());
    auto vTy = cast<RankedTensorType>(steps.front().getValue().getType());
    attn.elementType = qTy.getElementType();
    attn.headDim = qTy.getDimSize(1);
    if (kTy.getElementType() != attn.elementType ||
        vTy.getElementType() != attn.elementType) {
      fail(steps.front(), "the kernel needs query, key, value and out of one "
                          "element type");
      return failure();
    }
    if (ShapedType::isDynamic(attn.headDim) ||
        kTy.getDimSize(1) != attn.headDim) {
      fail(steps.front(), "the kernel needs a static head dim shared by query "
                          "and key");
      return failure();
    }
    if (vTy.getDimSize(1) != attn.headDim) {
      fail(steps.front(), "the kernel needs the value head dim (")
          << vTy.getDimSize(1) << ") equal to the query head dim ("
          << attn.headDim << ")";
      return failure();
    }
    if (failed(matchLoops(steps)) || failed(matchOutputs()))
      return failure();
    if (!offsetArgs.empty() && (!attn.cuSeqlensQArg || !attn.cuSeqlensKArg)) {
      fail(attn.forall, "varlen: the query and key slices must start at the "
                        "sequence's offsets");
      return failure();
    }
    return attn;
  }
};
} // namespace

FailureOr<TiledAttention> mlir::fa::matchTiledAttention(func::FuncOp func) {
  Matcher m{func, {}, {}, {}, {}, {}, 0, {}};
  return m.run();
}
