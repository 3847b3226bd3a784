//===- Kernel.cpp - the sm_90a FlashAttention-3 style kernel, composed ----===//
//
// Composes the sm_90a components into the forward kernel of one attention:
// grid (ceil(Nq/blockQ), Hq, B) (or persistent CTAs), 2 (or 3) consumer
// warpgroups of 64 query rows (+ a producer warpgroup when warp specialized).
// The pieces:
//   KernelState     the switches, arguments, thread ids, tile, key range,
//                   shared memory as explicit structs
//   SharedMemoryPlan / Barriers   where tiles live, mbarrier slots
//   LoadPipeline    TMA + mbarrier ring (producer and consumer sides)
//   WarpRoles       producer warpgroup / thread-0 issuer
//   Mainloop        wgmma S, online softmax, wgmma P V; serial or pipelined
//   Epilogue        normalization, lse, O store
//   Common/TileScheduler  one tile per CTA or persistent tiles
// See docs/SM90.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/FP8Quantize.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/SplitKV.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/WarpRoles.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <cmath>
#include <iterator>

#include <optional>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

/// The gpu.func's arguments: the q, k, v tensor-map pointers (cast to
/// !nvgpu.tensormap.descriptor: 3-D (D, N, B*H) boxes of (64, rows, 1)),
/// out, lse when present, then B, Hq, Hkv, Nq, Nk as i32.
static KernelArgs readKernelArgs(KernelBuilder &kb, const KernelConfig &cfg,
                                 gpu::GPUFuncOp kfn) {
  MLIRContext *ctx = kb.b.getContext();
  auto args = kfn.getArguments();
  bool hasLse = cfg.desc.hasLse;
  KernelArgs a;
  a.out = args[3];
  a.lse = hasLse ? args[4] : Value();
  unsigned s0 = hasLse ? 5 : 4;
  if (cfg.fp8) {
    a.qDescale = args[s0];
    a.kDescale = args[s0 + 1];
    a.vDescale = args[s0 + 2];
    s0 += 3;
  }
  const ScoreModifierSpec &mods = cfg.desc.modifiers;
  unsigned numModifierParams = mods.numParams();
  a.modifierParams.assign(args.begin() + s0,
                          args.begin() + s0 + numModifierParams);
  s0 += numModifierParams;
  const KVCacheLayout &cache = cfg.desc.kvCache;
  if (cache.kvLens)
    a.kvCache.kvLens = args[s0++];
  if (cache.paged())
    a.kvCache.pageTable = args[s0++];
  if (cfg.desc.varlen) {
    a.cuSeqlensQ = args[s0++];
    a.cuSeqlensK = args[s0++];
  }
  if (cfg.splitKV) {
    a.splitO = args[s0++];
    a.splitLse = args[s0++];
    a.splitCounter = args[s0++];
  }
  if (cfg.dynamicTiles)
    a.tileCounter = args[s0++];
  a.batchArg = args[s0];
  a.sizes.batch = args[s0];
  a.sizes.queryHeads = kb.asIndex(args[s0 + 1]);
  a.sizes.kvHeads = kb.asIndex(args[s0 + 2]);
  a.sizes.queryLength = kb.asIndex(args[s0 + 3]);
  a.sizes.keyLength = kb.asIndex(args[s0 + 4]);
  if (cache.paged()) {
    a.kvCache.numPages = kb.asIndex(args[s0 + 5]);
    a.kvCache.maxPages = kb.asIndex(args[s0 + 6]);
  }
  if (cfg.desc.varlen)
    a.maxSeqlenQ = kb.asIndex(args[s0 + 5]);
  if (cfg.splitKV) // the last size
    a.numSplits = kb.asIndex(args.back());
  auto mapType = [&](MemRefType box, bool swizzle64 = false) {
    return nvgpu::TensorMapDescriptorType::get(
        ctx, box,
        swizzle64 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_64B
                  : nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  };
  auto cast = [&](Value ptr, Type ty) {
    return UnrealizedConversionCastOp::create(kb.b, kb.loc, ty, ptr)
        .getResult(0);
  };
  a.qMap = cast(args[0],
                mapType(SharedMemory::boxType(cfg, kSM90RowsPerWarpgroup),
                        cfg.qkSwizzle64()));
  // Paged: boxes of one page or part of one.
  int64_t kvRows = cfg.desc.kvBoxRows();
  a.kMap = cast(args[1], mapType(SharedMemory::boxType(cfg, kvRows),
                                 cfg.qkSwizzle64()));
  // fp8: V^T, boxes of D rows of 128 keys (transpose-v: V as stored, like
  // K).
  a.vMap = cast(args[2], cfg.fp8 && !cfg.transposeV
                             ? mapType(SharedMemory::vTransposedBoxType(cfg))
                             : mapType(SharedMemory::boxType(cfg, kvRows),
                                       cfg.transposeV && cfg.qkSwizzle64()));
  return a;
}

/// The consumer warpgroups: (persistent: a tile loop around) wait for Q, the
/// mainloop, the epilogue.
static void buildConsumers(KernelBuilder &kb, const KernelConfig &cfg,
                           const TMALoadPipeline &loads,
                           const SharedMemory &smem, const KernelArgs &args,
                           const ThreadIds &thread,
                           const std::optional<TileState> &oneTile,
                           const std::optional<KVRange> &oneRange,
                           const std::optional<PersistentTiles> &tiles,
                           const std::optional<KVSplit> &split,
                           Value isIssuer) {
  ThreadIds t = thread;
  TileState tile;
  KVRange range;
  Value tileIdx, tileN;
  Value qBuffer; // persistent with two Q tiles: this tile's, tileN % 2
  scf::IfOp rowsIf; // persistent varlen: the tile has rows of its sequence
  int64_t buffers = cfg.smem.qBuffers;
  // The Q tile of the CTA's n-th tile and the phase that says it is loaded.
  auto qBufferOf = [&](Value n) {
    return buffers > 1 ? kb.rem(n, buffers) : Value();
  };
  auto waitForQ = [&](Value n, Value buffer) {
    loads.wait(loads.qFullSlot(buffer),
               loads.parityOf(buffer ? kb.div(n, buffers) : n));
  };
  bool dynamic = tiles && tiles->scheduler.isDynamic();
  if (dynamic) {
    // The producer's tiles as it claims them: each tile's coordinates are
    // in its Q tile's words once its Q-full phase completes; kEndOfTiles
    // ends the loop. Carries the running block counter and n.
    Type index = kb.b.getIndexType();
    auto wloop = scf::WhileOp::create(kb.b, kb.loc, TypeRange{index, index},
                                      ValueRange{kb.idx(0), kb.idx(0)});
    Block *before = kb.b.createBlock(&wloop.getBefore(), {}, {index, index},
                                     {kb.loc, kb.loc});
    Value n = before->getArgument(1);
    Value buffer = qBufferOf(n);
    waitForQ(n, buffer);
    Value qBlock = smem.loadTileCoord(kb, cfg, buffer).qBlock;
    scf::ConditionOp::create(
        kb.b, kb.loc,
        kb.cmp(arith::CmpIPredicate::ult, qBlock, tiles->count.queryBlocks),
        before->getArguments());
    Block *after = kb.b.createBlock(&wloop.getAfter(), {}, {index, index},
                                    {kb.loc, kb.loc});
    tileN = after->getArgument(1);
    qBuffer = qBufferOf(tileN);
    tile = TileState::of(kb, cfg, smem.loadTileCoord(kb, cfg, qBuffer),
                         tiles->sizes);
    range = KVRange::of(kb, cfg, tile.q0, tiles->sizes);
    range.base = after->getArgument(0);
    t = ThreadIds::of(kb, opaqueThreadIdX(kb));
  } else if (tiles) {
    // The same tile loop as the producer's, carrying the running block
    // counter and the tile count n (the Q parity); it ends after the
    // epilogue (Q-free arrival).
    auto tloop = scf::ForOp::create(
        kb.b, kb.loc, gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x),
        tiles->count.tiles,
        gpu::GridDimOp::create(kb.b, kb.loc, gpu::Dimension::x),
        ValueRange{kb.idx(0), kb.idx(0)});
    kb.b.setInsertionPointToStart(tloop.getBody());
    tileIdx = tloop.getInductionVar();
    tile = TileState::of(kb, cfg,
                         tiles->scheduler.decodeTile(kb, tileIdx, tiles->count,
                                                     tiles->sizes),
                         tiles->sizes)
               .withSequenceKeys(kb, cfg, args);
    range.base = tloop.getRegionIterArgs()[0];
    tileN = tloop.getRegionIterArgs()[1];
    if (Value hasRows = tile.hasRows(kb)) {
      // varlen: a tile past its sequence's rows is skipped by the producer
      // and the consumers alike (the same test), counting nothing.
      rowsIf = scf::IfOp::create(kb.b, kb.loc, TypeRange{range.base.getType(),
                                                         tileN.getType()},
                                 hasRows, /*withElseRegion=*/true);
      kb.b.setInsertionPointToStart(&rowsIf.getElseRegion().front());
      scf::YieldOp::create(kb.b, kb.loc, ValueRange{range.base, tileN});
      kb.b.setInsertionPointToStart(&rowsIf.getThenRegion().front());
    }
    Value base = range.base;
    range = KVRange::of(kb, cfg, tile.q0, tile.sequenceSizes(tiles->sizes));
    range.base = base;
    // The thread index again, through an opaque read, so that what the tile
    // body derives from it (swizzled epilogue addresses, descriptors) stays
    // in the body instead of being hoisted out of the tile loop and held in
    // registers across the K/V loop (spills at the 168-register cap).
    t = ThreadIds::of(kb, opaqueThreadIdX(kb));
    qBuffer = qBufferOf(tileN);
    waitForQ(tileN, qBuffer);
  } else {
    tile = *oneTile;
    range = *oneRange;
    loads.wait(kb.idx(MBarrierLayout::kQFull),
               arith::ConstantOp::create(kb.b, kb.loc, kb.b.getBoolAttr(false)));
  }
  ConsumerFrame frame =
      ConsumerFrame::of(kb, cfg, t, smem, tile, range, qBuffer);
  std::optional<FP8Descales> descales;
  if (cfg.fp8)
    descales = FP8Descales::of(kb, cfg, args, tile, range);
  // varlen: the sequence's lengths (regions count positions within it).
  KernelScoreModifiers modifiers(
      kb, cfg.desc.modifiers, args.modifierParams,
      cfg.desc.varlen ? tile.sequenceSizes(args.sizes) : args.sizes,
      tile.coord.batch, tile.coord.head,
      /*splitBias=*/true);
  // The rows' side of a mask_mod over captured tensors, once per tile.
  modifiers.hoistRowRanges(tile.q0, modifiers.lastRow(tile.q0, cfg.blockQ));
  ConsumerMainloop mainloop(kb, cfg, loads, smem, frame, range,
                            tile.sequenceSizes(args.sizes).keyLength, tile,
                            isIssuer, modifiers,
                            descales ? &*descales : nullptr);
  MainloopResult result = mainloop.build();
  // fp8: O is in units of the last block's v descale (per tensor / head: of
  // the v descale); an empty key range leaves O = 0 (block `begin` read).
  Value outScale;
  if (descales) {
    Value last = arith::MaxSIOp::create(kb.b, kb.loc,
                                        kb.sub(range.end, kb.idx(1)),
                                        range.begin);
    outScale = descales->vUnit(kb, last);
  }
  EpilogueRows rows{tile.qPlane,
                    frame.wgRow0,
                    {frame.rowQ[0], frame.rowQ[1]},
                    tile.qRow0,
                    tile.queryLength,
                    cfg.desc.varlenTokenMajor ? args.sizes.queryHeads : Value()};
  KVRange endRange = range;
  if (tiles) {
    // The tile's coordinates again for the epilogue, from an opaque copy of
    // the tile index: only the index stays live across the K/V loop, not
    // the values derived from it (ptxas cannot rematerialize them as it
    // does the ones derived from blockIdx).
    // Dynamic: from the Q tile's words (the producer rewrites them only
    // after this tile's Q-free arrival).
    TileState again =
        TileState::of(
            kb, cfg,
            dynamic ? smem.loadTileCoord(kb, cfg, qBuffer)
                    : tiles->scheduler.decodeTile(kb, opaqueIndex(kb, tileIdx),
                                                  tiles->count, tiles->sizes),
            tiles->sizes)
            .withSequenceKeys(kb, cfg, args);
    endRange = KVRange::of(kb, cfg, again.q0, again.sequenceSizes(tiles->sizes));
    rows.qPlane = again.qPlane;
    rows.rowOffset = again.qRow0;
    rows.rowEnd = again.queryLength;
    rows.wgRow0 = kb.add(again.q0,
                         kb.mul(t.warpgroup, kb.idx(kSM90RowsPerWarpgroup)));
    for (int r = 0; r < 2; ++r)
      rows.rowQ[r] = kb.add(rows.wgRow0, frame.rowInWG[r]);
  }
  if (split) {
    // The tile and chunk again, from an opaque blockIdx.z (KVSplit::again).
    TileCoord coord = tile.coord;
    KVSplit chunk =
        KVSplit::again(kb, coord, cfg.longestFirst, args.numSplits);
    TileState again = TileState::of(kb, cfg, coord, args.sizes);
    rows.qPlane = again.qPlane;
    buildSplitKVEpilogue(kb, cfg, args, smem, frame, rows, result, again,
                         chunk);
  } else {
    buildEpilogue(kb, cfg, args, smem, frame, rows, result, outScale);
  }
  if (tiles) {
    // This thread is done with the Q tile (O read back): order its generic
    // accesses before the next Q's TMA (async proxy) write, then release it.
    NVVM::FenceProxyOp::create(
        kb.b, kb.loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    loads.releaseQTile(qBuffer);
    SmallVector<Value, 2> next = {
        kb.add(range.base, kb.sub(endRange.end, endRange.begin)),
        kb.add(tileN, kb.idx(1))};
    if (rowsIf) {
      scf::YieldOp::create(kb.b, kb.loc, next);
      kb.b.setInsertionPointAfter(rowsIf);
      next.assign(rowsIf.getResults().begin(), rowsIf.getResults().end());
    }
    scf::YieldOp::create(kb.b, kb.loc, next);
  }
}

static FP8DescaleShape
descaleShapeOf(SM90AttentionDesc::DescaleGranularity g) {
  using G = SM90AttentionDesc::DescaleGranularity;
  switch (g) {
  case G::Tensor:
    return FP8DescaleShape::Tensor;
  case G::Head:
    return FP8DescaleShape::Head;
  case G::Block:
    return FP8DescaleShape::Block;
  }
  llvm_unreachable("unknown descale granularity");
}

/// The kernel's parameters in launch order: the gpu.func signature and the
/// manifest's parameter list, from one description.
static std::vector<KernelParam> kernelParams(OpBuilder &b,
                                             const KernelConfig &cfg) {
  const SM90AttentionDesc &d = cfg.desc;
  Type out = d.getOutputType();
  AttentionArgTypes types{LLVM::LLVMPointerType::get(b.getContext()),
                          MemRefType::get({kGlobalExtent}, out),
                          MemRefType::get({kGlobalExtent}, b.getF32Type()),
                          b.getI32Type()};
  auto i32Pointer = MemRefType::get({kGlobalExtent}, b.getI32Type());
  std::vector<KernelParam> params;
  if (d.isFP8()) {
    params = getFP8AttentionKernelParams(
        types, out.isF16() ? "f16" : "bf16", d.hasLse,
        descaleShapeOf(d.descaleGranularity), cfg.blockQ, cfg.blockKV,
        /*vAsStored=*/cfg.transposeV);
  } else {
    params = getAttentionKernelParams(
        types, d.elementType.isF16() ? "f16" : "bf16",
        /*tensorMaps=*/true, d.hasLse);
    insertScoreModifierParams(params, d.modifiers);
    insertKVCacheParams(params, d.kvCache.kvLens, d.kvCache.pageSize,
                        i32Pointer, b.getI32Type());
    if (d.varlen)
      insertVarlenParams(params, i32Pointer, b.getI32Type(),
                         d.varlenTokenMajor);
  }
  if (cfg.splitKV)
    insertSplitKVParams(params, /*f32PointerType=*/types.lse, i32Pointer,
                        b.getI32Type(), cfg.blockQ);
  if (cfg.dynamicTiles)
    insertTileCounterParam(params, i32Pointer);
  return params;
}

/// split-kv: the measured number of chunks for a launch (fa.decode's
/// plan_kernel_splits, measured on the H200: bench/results/
/// decode_h200_2026-12-02_s14): as many CTAs as fit one wave (one more is a
/// second wave), chunks of at least kMinSplitBlocks key blocks, at most
/// kMaxSplits; then as few chunks as give the same chunk length. At least 1
/// (no tile, no key: 1).
static SizeExpr splitKVPlan(int64_t blockQ, int64_t blockKV) {
  using Sym = SizeSymbol;
  constexpr int64_t kMinSplitBlocks = 2, kMaxSplits = 128;
  SizeExpr tiles =
      SizeExpr::mul({Sym::B, Sym::Hq, SizeExpr::ceilDiv(Sym::Nq, blockQ)});
  SizeExpr blocks = SizeExpr::ceilDiv(Sym::Nk, blockKV);
  SizeExpr most = SizeExpr::max(
      {1, SizeExpr::min({SizeExpr::floorDiv(Sym::NumSMs,
                                            SizeExpr::max({1, tiles})),
                         SizeExpr::floorDiv(blocks, kMinSplitBlocks),
                         kMaxSplits})});
  SizeExpr perChunk = SizeExpr::max({1, SizeExpr::ceilDiv(blocks, most)});
  return SizeExpr::max({1, SizeExpr::ceilDiv(blocks, perChunk)});
}

/// The launch manifest of the kernel.
static LaunchManifest buildManifest(const KernelConfig &cfg,
                                    std::vector<KernelParam> params) {
  using Sym = SizeSymbol;
  const SM90AttentionDesc &d = cfg.desc;
  LaunchManifest manifest;
  manifest.kernel = d.kernelName;
  manifest.chip = "sm_90a";
  manifest.function = d.sourceName;
  manifest.dtype = d.isFP8() ? "f8e4m3"
                  : d.elementType.isF16() ? "f16"
                                          : "bf16";
  if (d.isFP8()) {
    manifest.outDtype = d.getOutputType().isF16() ? "f16" : "bf16";
    if (!cfg.transposeV)
      manifest.vKeyOrder.assign(std::begin(kFP8VKeyOrder),
                                std::end(kFP8VKeyOrder));
  }
  manifest.headDim = d.headDim;
  manifest.causal = d.isCausal();
  manifest.windowLeft = d.windowLeft;
  manifest.windowRight = d.windowRight;
  manifest.scale = d.scale;
  manifest.lse = d.hasLse;
  manifest.blockQ = cfg.blockQ;
  manifest.blockKV = cfg.blockKV;
  manifest.kvLens = d.kvCache.kvLens;
  manifest.pageSize = d.kvCache.pageSize;
  manifest.varlen = d.varlen;
  if (d.varlen)
    manifest.varlenLayout = d.varlenTokenMajor ? "thd" : "htd";
  manifest.params = std::move(params);
  // Q, K, V as 3-D (D, N, B*H) maps of boxes (64, rows, 1), 128-byte
  // swizzle, zero fill out of bounds (readKernelArgs' descriptor types).
  int64_t eltBytes = d.elementType.getIntOrFloatBitWidth() / 8;
  auto tensorMap = [&](StringRef tensor, Sym n, Sym h, int64_t rows) {
    TensorMapSpec m = TensorMapSpec::headMajor(
        tensor, manifest.dtype,
        d.isFP8()               ? cuda::TensorMapDataType::UInt8
        : d.elementType.isF16() ? cuda::TensorMapDataType::Float16
                                : cuda::TensorMapDataType::BFloat16,
        eltBytes, h, n, cfg.swizzleElems, rows);
    // varlen: batch 1, h planes of the packed length.
    if (d.varlen) {
      m.dims[2] = h;
      m.layout = (tensor + " [1, " + getSizeSymbolName(h) + ", " +
                  getSizeSymbolName(n) + ", D] contiguous (packed sequences)")
                     .str();
    }
    if (d.varlenTokenMajor) {
      // [N, H, D] seen as (D, N, H): rows H * D elements apart, planes D.
      m.layout = (tensor + " [" + getSizeSymbolName(n) + ", " +
                  getSizeSymbolName(h) +
                  ", D] contiguous (packed sequences, token-major)")
                     .str();
      m.stridesBytes = {SizeExpr::mul({h, Sym::D, eltBytes}),
                        SizeExpr::mul({Sym::D, eltBytes})};
    }
    // fp8 at head dim 64: Q and K rows of 64 bytes, the 64-byte swizzle
    // (readKernelArgs' descriptor types, the S GEMM's descriptors).
    m.swizzle = cfg.qkSwizzle64() ? cuda::TensorMapSwizzle::B64
                                  : cuda::TensorMapSwizzle::B128;
    m.l2Promotion = cuda::TensorMapL2Promotion::B128;
    m.oobFill = cuda::TensorMapFloatOOBFill::None;
    return m;
  };
  manifest.tensorMaps = {
      tensorMap("q", Sym::Nq, Sym::Hq, kSM90RowsPerWarpgroup),
      tensorMap("k", Sym::Nk, Sym::Hkv, cfg.blockKV),
      tensorMap("v", Sym::Nk, Sym::Hkv, cfg.blockKV)};
  if (int64_t s = d.kvCache.pageSize) {
    // The pools [P, Hkv, S, D] as (D, S, P * Hkv): a box is rows of one
    // page of one head.
    for (TensorMapSpec &m :
         MutableArrayRef<TensorMapSpec>(manifest.tensorMaps).drop_front()) {
      m.layout = m.tensor + " pool [num_pages, Hkv, " + std::to_string(s) +
                 ", D] contiguous";
      m.dims = {Sym::D, s, SizeExpr::mul({Sym::NumPages, Sym::Hkv})};
      m.stridesBytes = {SizeExpr::mul({Sym::D, eltBytes}),
                        SizeExpr::mul({s, Sym::D, eltBytes})};
      m.box[1] = d.kvBoxRows();
    }
  }
  if (d.isFP8() && !cfg.transposeV) {
    // V^T [B, Hkv, D, Nk padded to 32 keys], each 32-key group in
    // kFP8VKeyOrder (manifest "v_key_order"): boxes of D rows of 128 keys.
    TensorMapSpec &m = manifest.tensorMaps[2];
    SizeExpr keys = SizeExpr::mul({SizeExpr::ceilDiv(Sym::Nk, kFP8VKeyGroup),
                                   kFP8VKeyGroup});
    m.tensor = "v_t";
    m.layout = "v_t [B, Hkv, D, ceil(Nk / 32) * 32] contiguous: v transposed, "
               "keys of each 32-key group in v_key_order, zero padded";
    m.dims = {keys, Sym::D, SizeExpr::mul({Sym::B, Sym::Hkv})};
    m.stridesBytes = {keys, SizeExpr::mul({keys, Sym::D})};
    m.box = {kSwizzleRowBytes, cfg.headDim, 1};
    m.swizzle = cuda::TensorMapSwizzle::B128;
  }
  // varlen: blocks of the longest sequence (the others' extra CTAs exit).
  SizeExpr queryBlocks =
      SizeExpr::ceilDiv(d.varlen ? Sym::MaxSeqlenQ : Sym::Nq, cfg.blockQ);
  if (cfg.persistent) {
    manifest.tiles = SizeExpr::mul({queryBlocks, Sym::Hq, Sym::B});
    manifest.grid = {SizeExpr::min({*manifest.tiles, Sym::NumSMs}), 1, 1};
  } else {
    // split-kv: num_splits CTAs per tile, blockIdx.z = batch * num_splits +
    // chunk.
    manifest.grid = {queryBlocks, Sym::Hq,
                     cfg.splitKV ? SizeExpr::mul({Sym::B, Sym::NumSplits})
                                 : SizeExpr(Sym::B)};
  }
  if (cfg.splitKV)
    manifest.numSplitsPlan = splitKVPlan(cfg.blockQ, cfg.blockKV);
  manifest.block = {cfg.threads, 1, 1};
  manifest.dynamicSharedMemoryBytes = cfg.smem.dynamicBytes;
  // One 8-byte mbarrier per slot.
  manifest.staticSharedMemoryBytes = 8 * cfg.barriers.count();
  // The schedule keys of SM90/Schedule.def, as the kernel runs them (d's
  // schedule is resolveSM90Schedule's, normalized); block_kv is a schema key.
  llvm::json::Object keys;
  appendSM90ScheduleManifest(keys, d);
  for (auto &[key, value] : keys)
    if (key != "block_kv")
      manifest.schedule.push_back({key.str(), value});
  llvm::sort(manifest.schedule,
             [](const auto &x, const auto &y) { return x.first < y.first; });
  return manifest;
}

std::string mlir::fa::buildSM90AttentionKernel(OpBuilder &b, Location loc,
                                               const SM90AttentionDesc &d) {
  KernelConfig cfg = KernelConfig::derive(d);
  std::vector<KernelParam> params = kernelParams(b, cfg);
  SmallVector<Type> inputs = getKernelArgumentTypes(params);

  auto gpuMod = gpu::GPUModuleOp::create(b, loc, d.moduleName);
  OpBuilder::InsertionGuard topGuard(b);
  b.setInsertionPointToStart(&gpuMod.getBodyRegion().front());
  auto kfn = gpu::GPUFuncOp::create(b, loc, d.kernelName,
                                    b.getFunctionType(inputs, {}));
  kfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kfn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(cfg.threads), 1, 1}));
  b.setInsertionPointToStart(&kfn.getBody().front());
  KernelBuilder kb{b, loc};
  KernelArgs args = readKernelArgs(kb, cfg, kfn);

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  TileScheduler scheduler = cfg.scheduler();
  // Persistent: the tile values are set per tile inside the producer's and
  // the consumers' tile loops; otherwise once per CTA from blockIdx.
  TileCoord coord;
  if (!cfg.persistent)
    coord = scheduler.getBlockTile(kb);
  std::optional<KVSplit> split;
  if (cfg.splitKV)
    split = KVSplit::fromGrid(kb, coord, args.numSplits);
  ThreadIds thread = ThreadIds::of(kb, tid);
  std::optional<TileState> tile;
  if (!cfg.persistent)
    tile = TileState::of(kb, cfg, coord, args.sizes)
               .withSequenceKeys(kb, cfg, args);
  if (tile && d.varlen) {
    // The grid covers the longest sequence: a CTA past its own sequence's
    // rows has nothing to do. Every thread takes the same branch (from
    // blockIdx and the offsets), before any barrier. (Persistent CTAs skip
    // such tiles in their tile loops.)
    auto inSequence =
        scf::IfOp::create(b, loc, tile->hasRows(kb), /*withElseRegion=*/false);
    b.setInsertionPointToStart(inSequence.thenBlock());
  }
  std::optional<PersistentTiles> tiles;
  if (cfg.persistent) {
    // varlen: the tiles of the longest sequence's query blocks, per head
    // and sequence.
    ProblemSizes tileSizes = args.sizes;
    if (d.varlen)
      tileSizes.queryLength = args.maxSeqlenQ;
    tiles = PersistentTiles{scheduler, scheduler.getTileCount(kb, tileSizes),
                            tileSizes, args.tileCounter, &args};
  }
  Value isIssuer = kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0));
  SharedMemory smem = SharedMemory::allocate(kb, cfg);
  TMALoadPipeline loads(kb, cfg, args, isIssuer);
  std::optional<KVRange> range;
  bool qIssued = false;
  if (!cfg.persistent) {
    range = KVRange::of(kb, cfg, tile->q0, tile->sequenceSizes(args.sizes));
    // split-kv: the CTA's chunk of the tile's blocks (before a mask_mod
    // narrows it further: its full-block words count from the chunk).
    if (split)
      range = split->narrow(kb, *range);
    // A bounded mask_mod skips the blocks it hides from every row of the
    // tile (producer and consumers share this range; persistent tiles keep
    // the whole range and only skip the per-key test of full blocks).
    KernelScoreModifiers modifiers(kb, d.modifiers, args.modifierParams,
                                   d.varlen ? tile->sequenceSizes(args.sizes)
                                            : args.sizes,
                                   tile->coord.batch, tile->coord.head);
    if (modifiers.narrowsBlocks()) {
      modifiers.hoistRowRanges(tile->q0,
                               modifiers.lastRow(tile->q0, cfg.blockQ));
      // Tensor reads (document ids): the CTA's warps split the scan (each
      // would otherwise read every key's id) and meet in shared memory.
      std::optional<KernelScoreModifiers::WarpShare> share;
      if (modifiers.classifyingReadsTensors() && !cfg.desc.kvCache.paged()) {
        // The scan takes a while and Q does not depend on it: Q's load is
        // in flight meanwhile.
        kb.ifThen(isTileLoadIssuer(kb, cfg, thread),
                  [&] { loads.issueQ(smem, tile->qLoadRow(kb), tile->qPlane); });
        qIssued = true;
        auto i32Shared = MemRefType::get(
            {cfg.smem.scanBytes / 4}, kb.b.getI32Type(),
            MemRefLayoutAttrInterface{},
            gpu::AddressSpaceAttr::get(kb.b.getContext(),
                                       gpu::AddressSpace::Workgroup));
        share = KernelScoreModifiers::WarpShare{
            kb.div(tid, 32), cfg.threads / 32,
            smem.view(kb, kb.idx(cfg.smem.scanOffset), i32Shared)};
      }
      range->narrowToMaskMod(kb, cfg, modifiers, tile->q0,
                             tile->sequenceSizes(args.sizes),
                             share ? &*share : nullptr);
    }
  }

  if (!cfg.warpSpecialized)
    buildIssuerPrologue(kb, cfg, loads, smem, *tile, *range, isIssuer,
                        qIssued);
  else
    buildWarpSpecializedRoles(kb, cfg, loads, smem, thread,
                              tile ? &*tile : nullptr,
                              range ? &*range : nullptr,
                              tiles ? &*tiles : nullptr, qIssued);
  buildConsumers(kb, cfg, loads, smem, args, thread, tile, range, tiles,
                 split, isIssuer);
  b.setInsertionPointToEnd(&kfn.getBody().front());
  gpu::ReturnOp::create(b, loc);
  LaunchManifest manifest = buildManifest(cfg, std::move(params));
  // fp8 with per-block descales of 128 x 128 blocks: the kernels that
  // quantize f16 / bf16 q, k, v into its operands (SM90/FP8Quantize; they
  // write V^T, so not with transpose-v).
  if (d.isFP8() && !cfg.transposeV &&
      d.descaleGranularity == SM90AttentionDesc::DescaleGranularity::Block &&
      cfg.blockQ == kQuantizeRows && cfg.blockKV == kQuantizeRows &&
      !d.varlen && !d.kvCache.kvLens && !d.kvCache.pageSize)
    manifest.auxiliaryKernels = buildFP8QuantizeKernels(
        b, loc, gpuMod, {d.kernelName, d.getOutputType(), d.headDim});
  if (failed(manifest.verify(kfn)))
    return "";
  return manifest.toJSONString();
}
