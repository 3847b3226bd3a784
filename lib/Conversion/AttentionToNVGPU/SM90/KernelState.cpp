//===- KernelState.cpp - the explicit state of the sm_90a kernel ----------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/KernelState.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

KernelConfig KernelConfig::derive(const SM90AttentionDesc &d) {
  // What each switch needs (overlap a producer warpgroup, ...) is applied in
  // one place, normalizeSM90Schedule; resolveSM90Schedule already did, but
  // a caller may build a desc by hand.
  SM90Schedule s =
      normalizeSM90Schedule(d, d.windowLeft, d.windowRight, d.scale);
  KernelConfig c(d);
  c.warpSpecialized = s.warpSpecialized;
  c.overlap = s.overlap;
  c.pFromRegisters = s.pFromRegisters;
  c.fastSoftmax = s.fastSoftmax;
  c.rescaleBeforePV = s.rescaleBeforePV;
  c.warpArrive = s.warpArrive;
  c.pingPong = s.pingPong;
  c.longestFirst = s.longestFirst;
  c.persistent = s.persistent;
  c.dynamicTiles = s.dynamicTiles;
  c.splitRelease = s.splitRelease;
  c.splitKV = s.splitKV;
  c.exp2PolyEvery = s.exp2PolyEvery;
  c.rescaleThreshold = s.rescaleThreshold;
  c.headDim = d.headDim;
  c.stages = s.stages;
  c.blockKV = s.blockKV;
  c.consumerWarpgroups = d.consumerWarpgroups;
  c.blockQ = d.blockQ();
  c.fp8 = d.isFP8();
  c.smem = planSharedMemory(d);
  c.swizzleElems =
      c.smem.rowBytes / (d.elementType.getIntOrFloatBitWidth() / 8);
  c.subTiles = d.headDim / c.swizzleElems;
  c.outSubTiles = d.headDim / kSwizzleElems;
  c.threads = kThreadsPerWarpgroup *
              (c.consumerWarpgroups + (s.warpSpecialized ? 1 : 0));
  // The setmaxnreg split (producer-registers; its measured default in
  // SM90/Schedule.cpp): the consumers share what the producer leaves.
  c.producerRegs = s.producerRegisters;
  c.consumerRegs =
      getSM90ConsumerRegisters(s.producerRegisters, c.consumerWarpgroups);
  c.transposeV = s.transposeV;
  c.barriers = MBarrierLayout{
      s.stages,     s.warpSpecialized, s.splitRelease,       s.persistent,
      s.warpArrive, s.qBuffers,        c.consumerWarpgroups, s.transposeV};
  return c;
}

Type KernelConfig::storageType() const {
  Type t = elementType();
  return fp8 ? IntegerType::get(t.getContext(), 8) : t;
}

TileScheduler KernelConfig::scheduler() const {
  using Kind = TileScheduler::Kind;
  return TileScheduler(!persistent    ? Kind::OneTilePerCTA
                       : dynamicTiles ? Kind::DynamicPersistent
                                      : Kind::StaticPersistent,
                       longestFirst, blockQ,
                       2 * headDim * elementType().getIntOrFloatBitWidth() / 8);
}

ThreadIds ThreadIds::of(KernelBuilder &kb, Value tid) {
  ThreadIds t;
  t.tid = tid;
  t.warpgroup = kb.div(tid, kThreadsPerWarpgroup);
  t.threadInWG = kb.rem(tid, kThreadsPerWarpgroup);
  t.warp = kb.div(t.threadInWG, 32);
  t.lane = kb.rem(t.threadInWG, 32);
  t.group = kb.div(t.lane, 4);
  t.quadLane = kb.rem(t.lane, 4);
  return t;
}

TileState TileState::of(KernelBuilder &kb, const KernelConfig &cfg,
                        TileCoord coord, const ProblemSizes &sizes) {
  TileState s;
  s.coord = coord;
  s.kvHead = arith::DivUIOp::create(
      kb.b, kb.loc, coord.head,
      arith::DivUIOp::create(kb.b, kb.loc, sizes.queryHeads, sizes.kvHeads));
  s.qPlane = kb.add(kb.mul(coord.batch, sizes.queryHeads), coord.head);
  s.kvPlane = kb.add(kb.mul(coord.batch, sizes.kvHeads), s.kvHead);
  s.q0 = kb.mul(coord.qBlock, kb.idx(cfg.blockQ));
  return s;
}

TileState TileState::withSequenceKeys(KernelBuilder &kb,
                                     const KernelConfig &cfg,
                                     const KernelArgs &args) const {
  TileState s = *this;
  if (cfg.desc.varlen) {
    // The sequence's rows and keys in the batch-1 planes [Hq, Nq, D] and
    // [Hkv, Nk, D] (Nq, Nk: the packed lengths).
    std::tie(s.qRow0, s.queryLength) =
        kb.packedSequence(args.cuSeqlensQ, coord.batch, args.sizes.queryLength);
    std::tie(s.kvRow0, s.keys.length) =
        kb.packedSequence(args.cuSeqlensK, coord.batch, args.sizes.keyLength);
    s.qPlane = coord.head;
    s.kvPlane = kvHead;
    return s;
  }
  if (cfg.desc.kvCache.any())
    s.keys = SequenceKeys::of(kb, cfg.desc.kvCache, args.kvCache, coord.batch,
                              kvHead, args.sizes.kvHeads, args.sizes.keyLength);
  return s;
}

ProblemSizes TileState::sequenceSizes(const ProblemSizes &sizes) const {
  ProblemSizes s = sizes;
  if (keys.length)
    s.keyLength = keys.length;
  if (queryLength)
    s.queryLength = queryLength;
  return s;
}

Value KVRange::iterOf(KernelBuilder &kb, Value j) const {
  Value it = kb.sub(j, begin);
  return base ? kb.add(base, it) : it;
}

Value KVRange::blockAt(KernelBuilder &kb, int64_t k) const {
  return hasLeftEdge ? kb.add(begin, kb.idx(k)) : kb.idx(k);
}

// The key blocks of the tile's rows [q0, min(q0 + blockQ, Nq)) as the tiled
// form's fa.kv_block_range computes them (bottom-right diagonal Nk - Nq).
// Without a window that is [0, ceil(Nk / BN)), computed as before the window
// support.
KVRange KVRange::of(KernelBuilder &kb, const KernelConfig &cfg, Value q0,
                    const ProblemSizes &sizes) {
  const SM90AttentionDesc &d = cfg.desc;
  Value nq = sizes.queryLength, nk = sizes.keyLength;
  KVRange r;
  r.hasLeftEdge = d.windowLeft >= 0;
  r.diag = kb.sub(nk, nq);
  if (d.hasWindow()) {
    Value qEnd = arith::MinSIOp::create(kb.b, kb.loc,
                                        kb.add(q0, kb.idx(cfg.blockQ)), nq);
    KVBlockRange range =
        computeKVBlockRange(kb.b, kb.loc, q0, qEnd, nk, r.diag, cfg.blockKV,
                            d.windowLeft, d.windowRight);
    // Without a left edge range.begin is min(0, Nk) / BN, i.e. 0 (Nk >= 0),
    // which the folders cannot see: use the constant.
    r.begin = r.hasLeftEdge ? range.begin : kb.idx(0);
    r.end = range.end;
    r.fullBegin = range.fullBegin;
    r.fullEnd = range.fullEnd;
  } else {
    r.begin = kb.idx(0);
    r.end = kb.div(kb.add(nk, kb.idx(cfg.blockKV - 1)), cfg.blockKV);
  }
  return r;
}

FP8Descales FP8Descales::of(KernelBuilder &kb, const KernelConfig &cfg,
                            const KernelArgs &args, const TileState &tile,
                            const KVRange &range) {
  FP8Descales d;
  d.granularity = cfg.desc.descaleGranularity;
  d.kv = args.kDescale;
  d.vdesc = args.vDescale;
  auto load = [&](Value ptr, Value idx) {
    return memref::LoadOp::create(kb.b, kb.loc, ptr, ValueRange{idx});
  };
  const ProblemSizes &sz = args.sizes;
  Value qIdx = kb.idx(0), kvIdx = kb.idx(0);
  if (d.granularity == Granularity::Head) {
    qIdx = tile.qPlane;
    kvIdx = tile.kvPlane;
  } else if (d.perBlock()) {
    Value qBlocks =
        kb.div(kb.add(sz.queryLength, kb.idx(cfg.blockQ - 1)), cfg.blockQ);
    Value kvBlocks = kb.div(kb.add(sz.keyLength, kb.idx(cfg.blockKV - 1)),
                            cfg.blockKV);
    qIdx = kb.add(kb.mul(tile.qPlane, qBlocks), tile.coord.qBlock);
    d.kvIndex0 = kb.mul(tile.kvPlane, kvBlocks);
    d.kvLastBlock = kb.sub(kvBlocks, kb.idx(1));
  }
  Value qk = load(args.qDescale, qIdx);
  if (!d.perBlock()) {
    qk = arith::MulFOp::create(kb.b, kb.loc, qk, load(args.kDescale, kvIdx));
    d.vConstant = load(args.vDescale, kvIdx);
  } else {
    d.vFloor = arith::MulFOp::create(
        kb.b, kb.loc, load(args.vDescale, d.kvIndex(kb, range.begin)),
        kb.f32(std::ldexp(1.0, -40)));
  }
  d.base = arith::MulFOp::create(kb.b, kb.loc, qk,
                                 kb.f32(cfg.desc.scale * M_LOG2E));
  return d;
}

Value FP8Descales::kvIndex(KernelBuilder &kb, Value j) const {
  return kb.add(kvIndex0,
                arith::MinSIOp::create(kb.b, kb.loc, j, kvLastBlock));
}

Value FP8Descales::scoreScale(KernelBuilder &kb, Value j) const {
  if (!perBlock())
    return base;
  Value kd =
      memref::LoadOp::create(kb.b, kb.loc, kv, ValueRange{kvIndex(kb, j)});
  return arith::MulFOp::create(kb.b, kb.loc, base, kd);
}

Value FP8Descales::vUnit(KernelBuilder &kb, Value j) const {
  if (!perBlock())
    return vConstant;
  Value vd =
      memref::LoadOp::create(kb.b, kb.loc, vdesc, ValueRange{kvIndex(kb, j)});
  return arith::MaximumFOp::create(kb.b, kb.loc, vd, vFloor);
}

Value FP8Descales::vRescale(KernelBuilder &kb, Value j, Value begin) const {
  if (!perBlock())
    return Value();
  Value prev = arith::MaxSIOp::create(kb.b, kb.loc, kb.sub(j, kb.idx(1)), begin);
  // afn: div.approx.f32 (2 ulp on a factor of O) instead of div.rn, whose
  // slow path costs the registers that made D = 256 spill.
  return arith::DivFOp::create(kb.b, kb.loc, vUnit(kb, prev), vUnit(kb, j),
                               arith::FastMathFlags::afn);
}

SharedMemory SharedMemory::allocate(KernelBuilder &kb,
                                    const KernelConfig &cfg) {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto dynTy = MemRefType::get({ShapedType::kDynamic}, kb.b.getI8Type(),
                               MemRefLayoutAttrInterface{}, wg);
  SharedMemory s;
  s.dynamic = gpu::DynamicSharedMemoryOp::create(kb.b, kb.loc, dynTy);
  Value rawAddr =
      memref::ExtractAlignedPointerAsIndexOp::create(kb.b, kb.loc, s.dynamic);
  // The base is the next 1024-byte boundary strictly above the symbol of the
  // dynamic buffer (a shift of 1 to 1024 bytes, never 0). NVPTX demotes that
  // symbol to a 1-byte function-scope .shared variable, and where ptxas puts
  // it among the other .shared variables (the mbarriers) is not specified:
  // compute-sanitizer's racecheck saw it at 0x400 with the mbarriers at
  // 0x408..0x457 after it, so a base at the symbol itself put the Q tile (and
  // the staged O) on the mbarriers. Skipping to the next boundary clears
  // every static variable (less than 1 KiB of them); the launch asks for
  // totalBytes + 1024 bytes of dynamic memory, which covers the shift.
  s.shift = kb.sub(kb.idx(kSwizzleAtomBytes),
                   kb.rem(rawAddr, kSwizzleAtomBytes));
  Value smemAddr = kb.add(rawAddr, s.shift);
  s.descBase = kb.toI64(kb.div(smemAddr, 16));
  auto flatTy = MemRefType::get({cfg.smem.totalBytes / 2}, cfg.outputType(),
                                MemRefLayoutAttrInterface{}, wg);
  s.flat = s.view(kb, kb.idx(0), flatTy);
  return s;
}

Value SharedMemory::view(KernelBuilder &kb, Value byteOffset,
                         MemRefType ty) const {
  return memref::ViewOp::create(kb.b, kb.loc, ty, dynamic,
                                kb.add(shift, byteOffset), ValueRange{});
}

/// Word `word` (0: query block, 1: head, 2: batch) of Q tile `buffer`'s
/// tile coordinates.
static Value tileWord(KernelBuilder &kb, const KernelConfig &cfg,
                      const SharedMemory &smem, Value buffer, int64_t word) {
  auto wg = gpu::AddressSpaceAttr::get(kb.b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  Value offset = kb.idx(cfg.smem.tileSlotOffset + 4 * word);
  if (buffer)
    offset = kb.add(offset, kb.mul(buffer, kb.idx(SharedMemoryPlan::kTileSlotBytes)));
  return smem.view(kb, offset,
                   MemRefType::get({1}, kb.b.getI32Type(),
                                   MemRefLayoutAttrInterface{}, wg));
}

void SharedMemory::storeTileCoord(KernelBuilder &kb, const KernelConfig &cfg,
                                  Value buffer, const TileCoord &coord) const {
  Value words[] = {coord.qBlock, coord.head, coord.batch};
  for (int64_t w = 0; w < 3; ++w)
    memref::StoreOp::create(kb.b, kb.loc, kb.toI32(words[w]),
                            tileWord(kb, cfg, *this, buffer, w),
                            ValueRange{kb.idx(0)});
}

void SharedMemory::storeEndOfTiles(KernelBuilder &kb, const KernelConfig &cfg,
                                   Value buffer) const {
  memref::StoreOp::create(kb.b, kb.loc, kb.i32c(kEndOfTiles),
                          tileWord(kb, cfg, *this, buffer, 0),
                          ValueRange{kb.idx(0)});
}

TileCoord SharedMemory::loadTileCoord(KernelBuilder &kb,
                                      const KernelConfig &cfg,
                                      Value buffer) const {
  auto load = [&](int64_t w) {
    return kb.asIndex(memref::LoadOp::create(
        kb.b, kb.loc, tileWord(kb, cfg, *this, buffer, w),
        ValueRange{kb.idx(0)}));
  };
  TileCoord c;
  c.qBlock = load(0);
  c.head = load(1);
  c.batch = load(2);
  return c;
}

SharedMemory SharedMemory::withOpaqueShift(KernelBuilder &kb) const {
  SharedMemory s = *this;
  s.shift = opaqueIndex(kb, shift);
  return s;
}

MemRefType SharedMemory::vTransposedBoxType(const KernelConfig &cfg) {
  auto wg = gpu::AddressSpaceAttr::get(cfg.elementType().getContext(),
                                       gpu::AddressSpace::Workgroup);
  return MemRefType::get({1, cfg.headDim, kSwizzleRowBytes},
                         cfg.storageType(), MemRefLayoutAttrInterface{}, wg);
}

MemRefType SharedMemory::boxType(const KernelConfig &cfg, int64_t rows) {
  auto wg = gpu::AddressSpaceAttr::get(cfg.elementType().getContext(),
                                       gpu::AddressSpace::Workgroup);
  return MemRefType::get({1, rows, cfg.swizzleElems}, cfg.storageType(),
                         MemRefLayoutAttrInterface{}, wg);
}

void KVRange::narrowToMaskMod(KernelBuilder &kb, const KernelConfig &cfg,
                              const KernelScoreModifiers &modifiers, Value q0,
                              const ProblemSizes &sizes,
                              const KernelScoreModifiers::WarpShare *share) {
  std::tie(begin, end) = modifiers.narrowBlockRange(
      begin, end, q0, modifiers.lastRow(q0, cfg.blockQ), cfg.blockKV,
      modifiers.classifyingReadsTensors() ? &fullBlocks : nullptr, share);
  hasLeftEdge = true; // begin is no longer 0
}
