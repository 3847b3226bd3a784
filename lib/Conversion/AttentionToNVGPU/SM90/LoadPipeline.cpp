//===- LoadPipeline.cpp - TMA + mbarrier ring of the sm_90a kernel --------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/LoadPipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

/// mbarrier.try_wait suspend-time hint, in ns.
static constexpr int64_t kTryWaitTicks = 10000000;

TMALoadPipeline::TMALoadPipeline(KernelBuilder &kb, const KernelConfig &cfg,
                                 const KernelArgs &args, Value isIssuer)
    : kb(kb), cfg(cfg), args(args) {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  const MBarrierLayout &layout = cfg.barriers;
  auto barTy = nvgpu::MBarrierGroupType::get(ctx, wg, layout.count());
  bars = nvgpu::MBarrierCreateOp::create(kb.b, kb.loc, barTy);
  kb.ifThen(isIssuer, [&] {
    for (int64_t i = 0; i < layout.count(); ++i)
      nvgpu::MBarrierInitOp::create(kb.b, kb.loc, bars,
                                    kb.idx(layout.arrivals(i)), kb.idx(i),
                                    Value());
    NVVM::FenceMbarrierInitOp::create(kb.b, kb.loc);
  });
  gpu::BarrierOp::create(kb.b, kb.loc);
}

void TMALoadPipeline::issueQ(const SharedMemory &smem, Value q0,
                             Value qPlane, Value buffer) const {
  const SharedMemoryPlan &p = cfg.smem;
  Value slot = qFullSlot(buffer);
  nvgpu::MBarrierArriveExpectTxOp::create(kb.b, kb.loc, bars,
                                          kb.idx(p.qBytes), slot, Value());
  for (int64_t w = 0; w < cfg.consumerWarpgroups; ++w)
    for (int64_t s = 0; s < cfg.subTiles; ++s) {
      Value off = kb.idx(p.qOffset + (w * cfg.subTiles + s) * p.subTileQ);
      if (buffer)
        off = kb.add(off, kb.mul(buffer, kb.idx(p.qBytes)));
      Value dst = smem.view(kb, off,
                            SharedMemory::boxType(cfg, kSM90RowsPerWarpgroup));
      nvgpu::TmaAsyncLoadOp::create(
          kb.b, kb.loc, dst, bars, args.qMap,
          ValueRange{kb.idx(s * cfg.swizzleElems),
                     kb.add(q0, kb.idx(w * kSM90RowsPerWarpgroup)), qPlane},
          slot, Value(), Value());
    }
}

void TMALoadPipeline::arriveQFull(Value buffer) const {
  nvgpu::MBarrierArriveOp::create(
      kb.b, kb.loc, nvgpu::MBarrierTokenType::get(kb.b.getContext()), bars,
      qFullSlot(buffer));
}

Value TMALoadPipeline::qFullSlot(Value buffer) const {
  if (!buffer)
    return kb.idx(MBarrierLayout::kQFull);
  return kb.mul(buffer, kb.idx(cfg.barriers.qFullStride()));
}

Value TMALoadPipeline::qFreeSlot(Value buffer) const {
  if (!buffer)
    return kb.idx(cfg.barriers.qFree());
  return kb.add(kb.idx(cfg.barriers.qFree()),
                kb.mul(buffer, kb.idx(cfg.barriers.qFreeStride())));
}

void TMALoadPipeline::issueKV(const SharedMemory &smem, Value block,
                              Value stage, const TileState &tile,
                              KVPart part, Value lane) const {
  Value kvPlane = tile.kvPlane;
  const SharedMemoryPlan &p = cfg.smem;
  Value stageOff = kb.mul(stage, kb.idx(p.stageBytes));
  // What one thread issues: everything, or with a warp lane 0's part.
  auto issuer = [&](llvm::function_ref<void()> body) {
    if (!lane)
      return body();
    kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0)), body);
  };
  for (int kv = 0; kv < 2; ++kv) {
    if ((part == KVPart::Key && kv == 1) || (part == KVPart::Value && kv == 0))
      continue;
    int64_t fullBase = !kv              ? cfg.barriers.kFullBase()
                       : cfg.transposeV ? cfg.barriers.vStagedBase()
                                        : cfg.barriers.vFullBase();
    int64_t tileOffset = !kv              ? p.kOffset
                         : cfg.transposeV ? p.vStagingOffset
                                          : p.vOffset;
    Value barId = kb.add(kb.idx(fullBase), stage);
    issuer([&] {
      nvgpu::MBarrierArriveExpectTxOp::create(kb.b, kb.loc, bars,
                                              kb.idx(p.stageBytes), barId,
                                              Value());
    });
    if (cfg.desc.kvCache.paged()) {
      issueTile(smem, kb.add(stageOff, kb.idx(tileOffset)),
                kv ? args.vMap : args.kMap, block, tile, barId, lane);
      continue;
    }
    issuer([&] {
      if (kv && cfg.fp8 && !cfg.transposeV) {
        // V^T [B*Hkv, D, keys]: per 128 keys of the block one box of D rows
        // of 128 keys, one [D x 128-byte] sub-tile each.
        for (int64_t s = 0; s < cfg.blockKV / kSwizzleRowBytes; ++s) {
          Value dst = smem.view(
              kb,
              kb.add(stageOff, kb.idx(p.vOffset + s * cfg.headDim *
                                                      kSwizzleRowBytes)),
              SharedMemory::vTransposedBoxType(cfg));
          nvgpu::TmaAsyncLoadOp::create(
              kb.b, kb.loc, dst, bars, args.vMap,
              ValueRange{kb.add(kb.mul(block, kb.idx(cfg.blockKV)),
                                kb.idx(s * kSwizzleRowBytes)),
                         kb.idx(0), kvPlane},
              barId, Value(), Value());
        }
        return;
      }
      // varlen: the sequence's keys start at packed row kvRow0.
      Value row = kb.mul(block, kb.idx(cfg.blockKV));
      if (tile.kvRow0)
        row = kb.add(tile.kvRow0, row);
      for (int64_t s = 0; s < cfg.subTiles; ++s) {
        Value dst = smem.view(
            kb, kb.add(stageOff, kb.idx(tileOffset + s * p.subTileKV)),
            SharedMemory::boxType(cfg, cfg.blockKV));
        nvgpu::TmaAsyncLoadOp::create(
            kb.b, kb.loc, dst, bars, kv ? args.vMap : args.kMap,
            ValueRange{kb.idx(s * cfg.swizzleElems), row, kvPlane},
            barId, Value(), Value());
      }
    });
  }
}

SmallVector<Value> TMALoadPipeline::chunkPlanes(const TileState &tile,
                                                Value key0, int64_t first,
                                                int64_t count, int64_t rows,
                                                Value lane) const {
  SmallVector<Value> planes;
  if (lane) {
    // Lane c looks up chunk first + c (lanes past the chunks repeat the
    // last), all loads in flight at once; shuffles hand every page to lane 0.
    Value mine = kb.add(kb.idx(first), arith::MinUIOp::create(
                                           kb.b, kb.loc, lane,
                                           kb.idx(count - 1)));
    Value plane = kb.toI32(
        tile.keys.pagePlane(kb, kb.add(key0, kb.mul(mine, kb.idx(rows)))));
    for (int64_t c = 0; c < count; ++c)
      planes.push_back(kb.asIndex(
          gpu::ShuffleOp::create(kb.b, kb.loc, plane, kb.i32c(c), kb.i32c(32),
                                 gpu::ShuffleMode::IDX)
              .getShuffleResult()));
    return planes;
  }
  // One thread: the loads are independent, so it waits for the table once
  // per group.
  for (int64_t c = first; c < first + count; ++c)
    planes.push_back(tile.keys.pagePlane(kb, kb.add(key0, kb.idx(c * rows))));
  return planes;
}

void TMALoadPipeline::issueTile(const SharedMemory &smem, Value dstBase,
                                Value map, Value block, const TileState &tile,
                                Value barId, Value lane) const {
  const SharedMemoryPlan &p = cfg.smem;
  int64_t rows = cfg.desc.kvBoxRows();
  int64_t pageSize = cfg.desc.kvCache.pageSize;
  // Chunk c of the block: keys [key0 + c * rows, + rows) lie in one page,
  // rows of the pool's (page * Hkv + g) plane from key % S on. Each chunk
  // is `rows` whole swizzle rows of every sub-tile: the 128-byte swizzle
  // pattern (8 rows) is unchanged by the split.
  Value key0 = kb.mul(block, kb.idx(cfg.blockKV));
  int64_t chunks = cfg.blockKV / rows;
  // A warp looks up every chunk at once; one thread 4 at a time (8 lookups
  // in flight spill the producer's 24 registers, setmaxnreg).
  int64_t group = lane ? chunks : 4;
  for (int64_t c0 = 0; c0 < chunks; c0 += group) {
    int64_t count = std::min(group, chunks - c0);
    SmallVector<Value> planes = chunkPlanes(tile, key0, c0, count, rows, lane);
    auto issue = [&] {
      for (auto [i, plane] : llvm::enumerate(planes)) {
        int64_t c = c0 + i;
        // A page that divides the block starts at a block-aligned key: the
        // row in the page is a constant.
        Value row = cfg.blockKV % pageSize == 0
                        ? kb.idx((c * rows) % pageSize)
                        : kb.rem(kb.add(key0, kb.idx(c * rows)), pageSize);
        for (int64_t s = 0; s < cfg.subTiles; ++s) {
          Value dst = smem.view(
              kb,
              kb.add(dstBase,
                     kb.idx(s * p.subTileKV + c * rows * p.rowBytes)),
              SharedMemory::boxType(cfg, rows));
          nvgpu::TmaAsyncLoadOp::create(
              kb.b, kb.loc, dst, bars, map,
              ValueRange{kb.idx(s * cfg.swizzleElems), row, plane}, barId,
              Value(), Value());
        }
      }
    };
    if (!lane)
      issue();
    else
      kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0)), issue);
  }
}

void TMALoadPipeline::produce(Value it, Value stage,
                              llvm::function_ref<void(KVPart)> issue) const {
  waitReleased(cfg.barriers.kReleasedBase(), it, stage);
  // transpose-v: V goes into the staging tile, which the producer itself
  // frees; the V ring's release is waited for before the transposition.
  if (!cfg.splitRelease || cfg.transposeV)
    return issue(KVPart::Both);
  issue(KVPart::Key);
  waitReleased(cfg.barriers.vReleasedBase(), it, stage);
  issue(KVPart::Value);
}

void TMALoadPipeline::waitReleased(int64_t base, Value it, Value stage) const {
  int64_t S = cfg.stages;
  kb.ifThen(kb.cmp(arith::CmpIPredicate::sge, it, kb.idx(S)), [&] {
    Value round = kb.sub(kb.div(it, S), kb.idx(1));
    wait(kb.add(kb.idx(base), stage), parityOf(round));
  });
}

Value TMALoadPipeline::stageOf(Value it) const {
  return kb.rem(it, cfg.stages);
}

Value TMALoadPipeline::fullParity(Value it) const {
  return parityOf(kb.div(it, cfg.stages));
}

Value TMALoadPipeline::parityOf(Value round) const {
  return arith::TruncIOp::create(kb.b, kb.loc, kb.b.getI1Type(),
                                 kb.toI32(kb.rem(round, 2)));
}

Value TMALoadPipeline::kFullSlot(Value stage) const {
  return kb.add(kb.idx(cfg.barriers.kFullBase()), stage);
}

Value TMALoadPipeline::vFullSlot(Value stage) const {
  return kb.add(kb.idx(cfg.barriers.vFullBase()), stage);
}

Value TMALoadPipeline::vStagedSlot(Value stage) const {
  return kb.add(kb.idx(cfg.barriers.vStagedBase()), stage);
}

void TMALoadPipeline::wait(Value slot, Value parity) const {
  nvgpu::MBarrierTryWaitParityOp::create(kb.b, kb.loc, bars, parity,
                                         kb.idx(kTryWaitTicks), slot);
}

void TMALoadPipeline::arriveReleased(int64_t base, Value stage,
                                     Value lane) const {
  auto arrive = [&] {
    nvgpu::MBarrierArriveOp::create(
        kb.b, kb.loc, nvgpu::MBarrierTokenType::get(kb.b.getContext()), bars,
        kb.add(kb.idx(base), stage));
  };
  // After the warp's wgmma.wait_group: lane 0 arrives for the warp.
  if (cfg.warpArrive)
    kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0)), arrive);
  else
    arrive();
}

void TMALoadPipeline::releaseKey(Value stage, Value lane) const {
  if (cfg.splitRelease)
    arriveReleased(cfg.barriers.kReleasedBase(), stage, lane);
}

void TMALoadPipeline::releaseStage(Value stage, Value lane) const {
  arriveReleased(cfg.barriers.vReleasedBase(), stage, lane);
}

void TMALoadPipeline::releaseQTile(Value buffer) const {
  nvgpu::MBarrierArriveOp::create(
      kb.b, kb.loc, nvgpu::MBarrierTokenType::get(kb.b.getContext()), bars,
      qFreeSlot(buffer));
}

Value TMALoadPipeline::stageDescBase(const SharedMemory &smem,
                                     Value stage) const {
  return arith::AddIOp::create(
      kb.b, kb.loc, smem.descBase,
      kb.toI64(kb.mul(stage, kb.idx(cfg.smem.stageBytes / 16))));
}
