//===- WarpRoles.cpp - producer and consumer warpgroups of sm_90a ---------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/WarpRoles.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/VTranspose.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

void mlir::fa::sm90::buildIssuerPrologue(KernelBuilder &kb,
                                         const KernelConfig &cfg,
                                         const TMALoadPipeline &loads,
                                         const SharedMemory &smem,
                                         const TileState &tile,
                                         const KVRange &range, Value isIssuer,
                                         bool qIssued) {
  kb.ifThen(isIssuer, [&] {
    if (!qIssued)
      loads.issueQ(smem, tile.qLoadRow(kb), tile.qPlane);
    for (int64_t s = 0; s < cfg.stages; ++s) {
      Value block = range.blockAt(kb, s);
      kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, block, range.end), [&] {
        loads.issueKV(smem, block, kb.idx(s), tile);
      });
    }
  });
}

/// One tile: Q (unless `qIssued`), then every K/V block of [begin, end) into
/// the ring; by one thread, or with `lane` by a warp (lane 0 issues).
static void streamTile(KernelBuilder &kb, const KernelConfig &cfg,
                       const TMALoadPipeline &loads, const SharedMemory &smem,
                       const TileState &tile, const KVRange &range,
                       Value lane, bool qIssued) {
  if (!qIssued) {
    if (lane)
      kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0)),
                [&] { loads.issueQ(smem, tile.qLoadRow(kb), tile.qPlane); });
    else
      loads.issueQ(smem, tile.qLoadRow(kb), tile.qPlane);
  }
  auto loop = scf::ForOp::create(kb.b, kb.loc, range.begin, range.end,
                                 kb.idx(1));
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value it = range.iterOf(kb, j);
  Value stage = kb.rem(it, cfg.stages);
  loads.produce(it, stage, [&](KVPart part) {
    loads.issueKV(smem, j, stage, tile, part, lane);
  });
}

/// The Q tile of the CTA's n-th persistent tile (null with one Q tile) once
/// the consumers freed it: with one Q tile Q-free phase n - 1, with two Q
/// tile n % 2's phase n / 2 - 1 (tile n - 2's epilogue).
static Value waitForQTile(KernelBuilder &kb, const KernelConfig &cfg,
                          const TMALoadPipeline &loads, Value n) {
  int64_t buffers = cfg.smem.qBuffers;
  Value buffer = buffers > 1 ? kb.rem(n, buffers) : Value();
  // The buffer's earlier uses: n (one buffer) or n / 2.
  Value uses = buffer ? kb.div(n, buffers) : n;
  kb.ifThen(kb.cmp(arith::CmpIPredicate::ne, uses, kb.idx(0)), [&] {
    loads.wait(loads.qFreeSlot(buffer),
               loads.parityOf(kb.sub(uses, kb.idx(1))));
  });
  return buffer;
}

/// Q of persistent tile `tile` (the CTA's n-th) once the consumers freed
/// its Q tile (waitForQTile); with dynamic tiles the tile's coordinates go
/// into the Q tile's words first, for the consumers. Its coordinates are decoded
/// again from an opaque copy of the tile index, and the addresses from an
/// opaque copy of the shared-memory base: the producer runs on few registers
/// (setmaxnreg: kSM90PersistentProducerRegisters) and must not keep them
/// live across the K/V loop.
static void loadPersistentQ(KernelBuilder &kb, const KernelConfig &cfg,
                            const TMALoadPipeline &loads,
                            const SharedMemory &smem,
                            const PersistentTiles &tiles, Value tile,
                            Value n) {
  Value buffer = waitForQTile(kb, cfg, loads, n);
  TileCoord coord = tiles.scheduler.decodeTile(kb, opaqueIndex(kb, tile),
                                               tiles.count, tiles.sizes);
  if (tiles.scheduler.isDynamic())
    smem.storeTileCoord(kb, cfg, buffer, coord);
  TileState state = TileState::of(kb, cfg, coord, tiles.sizes)
                        .withSequenceKeys(kb, cfg, *tiles.args);
  loads.issueQ(smem.withOpaqueShift(kb), state.qLoadRow(kb), state.qPlane,
               buffer);
}

/// The producer's work for persistent tile `tile`, the CTA's n-th, whose
/// ring iterations start at `base`; returns where the next tile's start.
/// With one Q tile, Q of tile n > 0 goes into it once the consumers have
/// freed it, issued after the first min(S, blocks) K/V blocks of the tile
/// (which only need ring stages, released before the previous epilogue),
/// so the ring fills under that epilogue; tile 0's Q goes first. With two Q
/// tiles every tile's Q goes first: its buffer was freed by the epilogue
/// two tiles back, so it loads while the consumers finish the previous
/// tile. The K/V loop runs over the running count itself.
static Value streamPersistentTile(KernelBuilder &kb, const KernelConfig &cfg,
                                  const TMALoadPipeline &loads,
                                  const SharedMemory &smem,
                                  const PersistentTiles &tiles,
                                  const TileState &state, Value tile,
                                  Value base, Value n) {
  KVRange range =
      KVRange::of(kb, cfg, state.q0, state.sequenceSizes(tiles.sizes));
  Value count = kb.sub(range.end, range.begin);
  // The ring iteration (from the tile's first) at which Q is issued.
  Value qAt = kb.idx(0);
  if (cfg.smem.qBuffers == 1)
    qAt = arith::SelectOp::create(
        kb.b, kb.loc, kb.cmp(arith::CmpIPredicate::eq, n, kb.idx(0)),
        kb.idx(0),
        arith::MinSIOp::create(kb.b, kb.loc, count, kb.idx(cfg.stages)));
  Value itEnd = kb.add(base, count), qAtIt = kb.add(base, qAt);
  Value jOff = kb.sub(range.begin, base);
  auto loadQ = [&] { loadPersistentQ(kb, cfg, loads, smem, tiles, tile, n); };
  {
    auto ploop = scf::ForOp::create(kb.b, kb.loc, base, itEnd, kb.idx(1));
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(ploop.getBody());
    Value it = ploop.getInductionVar();
    kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, it, qAtIt), loadQ);
    Value stage = kb.rem(it, cfg.stages);
    loads.produce(it, stage, [&](KVPart part) {
      // Addresses computed here, not hoisted.
      loads.issueKV(smem.withOpaqueShift(kb), kb.add(it, jOff), stage, state,
                    part);
    });
  }
  kb.ifThen(kb.cmp(arith::CmpIPredicate::sle, itEnd, qAtIt), loadQ);
  return itEnd;
}

/// Persistent tile `tile`'s state (varlen: with its sequence's rows and keys).
static TileState tileState(KernelBuilder &kb, const KernelConfig &cfg,
                           const PersistentTiles &tiles, Value tile) {
  return TileState::of(
             kb, cfg,
             tiles.scheduler.decodeTile(kb, tile, tiles.count, tiles.sizes),
             tiles.sizes)
      .withSequenceKeys(kb, cfg, *tiles.args);
}

/// The producer's tile loop, carrying the running block counter and the
/// CTA's tile count n. Static: tiles blockIdx.x, + gridDim.x, ... Dynamic:
/// blockIdx.x, then each next tile claimed from the counter once the current
/// one's loads are issued; the
/// first claim past the end becomes kEndOfTiles in tile n's Q words with a
/// plain arrival on its Q-full mbarrier (no Q), which ends the consumers'
/// loop.
static void streamPersistentTiles(KernelBuilder &kb, const KernelConfig &cfg,
                                  const TMALoadPipeline &loads,
                                  const SharedMemory &smem,
                                  const PersistentTiles &tiles) {
  Value first = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  if (!tiles.scheduler.isDynamic()) {
    auto tloop = scf::ForOp::create(
        kb.b, kb.loc, first, tiles.count.tiles,
        gpu::GridDimOp::create(kb.b, kb.loc, gpu::Dimension::x),
        ValueRange{kb.idx(0), kb.idx(0)});
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(tloop.getBody());
    Value tile = tloop.getInductionVar();
    Value base = tloop.getRegionIterArgs()[0];
    Value n = tloop.getRegionIterArgs()[1];
    TileState state = tileState(kb, cfg, tiles, tile);
    Value hasRows = state.hasRows(kb);
    if (!hasRows) {
      Value itEnd =
          streamPersistentTile(kb, cfg, loads, smem, tiles, state, tile, base, n);
      scf::YieldOp::create(kb.b, kb.loc,
                           ValueRange{itEnd, kb.add(n, kb.idx(1))});
      return;
    }
    // varlen: a tile past its sequence's rows is skipped (the consumers make
    // the same test), counting nothing.
    auto rowsIf = scf::IfOp::create(
        kb.b, kb.loc, TypeRange{base.getType(), n.getType()}, hasRows,
        /*withElseRegion=*/true);
    kb.b.setInsertionPointToStart(&rowsIf.getThenRegion().front());
    Value itEnd =
        streamPersistentTile(kb, cfg, loads, smem, tiles, state, tile, base, n);
    scf::YieldOp::create(kb.b, kb.loc, ValueRange{itEnd, kb.add(n, kb.idx(1))});
    kb.b.setInsertionPointToStart(&rowsIf.getElseRegion().front());
    scf::YieldOp::create(kb.b, kb.loc, ValueRange{base, n});
    kb.b.setInsertionPointAfter(rowsIf);
    scf::YieldOp::create(kb.b, kb.loc, rowsIf.getResults());
    return;
  }
  Type index = kb.b.getIndexType();
  auto wloop = scf::WhileOp::create(kb.b, kb.loc, TypeRange{index, index, index},
                                    ValueRange{first, kb.idx(0), kb.idx(0)});
  {
    OpBuilder::InsertionGuard guard(kb.b);
    Block *before = kb.b.createBlock(&wloop.getBefore(), {},
                                     {index, index, index},
                                     {kb.loc, kb.loc, kb.loc});
    Value more = kb.cmp(arith::CmpIPredicate::ult, before->getArgument(0),
                        tiles.count.tiles);
    scf::ConditionOp::create(kb.b, kb.loc, more, before->getArguments());
    Block *after = kb.b.createBlock(&wloop.getAfter(), {},
                                    {index, index, index},
                                    {kb.loc, kb.loc, kb.loc});
    Value n = after->getArgument(2);
    Value itEnd = streamPersistentTile(
        kb, cfg, loads, smem, tiles,
        tileState(kb, cfg, tiles, after->getArgument(0)), after->getArgument(0),
        after->getArgument(1), n);
    // Claimed once this tile's loads are issued, not before: the claim is
    // not held in a register across the K/V loop (at 40 registers that
    // spilled), and the producer runs `stages` blocks ahead of the
    // consumers, so the atomic's latency stays off their path.
    Value next = tiles.scheduler.claimNextTile(kb, tiles.counter);
    scf::YieldOp::create(kb.b, kb.loc,
                         ValueRange{next, itEnd, kb.add(n, kb.idx(1))});
  }
  // The end: kEndOfTiles in tile n's Q words, Q-full arrived without a
  // load.
  Value n = wloop.getResult(2);
  Value buffer = waitForQTile(kb, cfg, loads, n);
  smem.storeEndOfTiles(kb, cfg, buffer);
  loads.arriveQFull(buffer);
  tiles.scheduler.retireCTA(kb, tiles.counter);
}

void mlir::fa::sm90::buildWarpSpecializedRoles(
    KernelBuilder &kb, const KernelConfig &cfg, const TMALoadPipeline &loads,
    const SharedMemory &smem, const ThreadIds &thread, const TileState *tile,
    const KVRange *range, const PersistentTiles *persistent, bool qIssued) {
  auto roleIf =
      scf::IfOp::create(kb.b, kb.loc,
                        kb.cmp(arith::CmpIPredicate::eq, thread.warpgroup,
                               kb.idx(cfg.consumerWarpgroups)),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(&roleIf.getThenRegion().front());
    NVVM::SetMaxRegisterOp::create(kb.b, kb.loc, cfg.producerRegs,
                                   NVVM::SetMaxRegisterAction::decrease);
    // Paged: the producer's first warp streams, its lanes looking up a
    // block's pages together (one table latency per block, no register of
    // lane 0 holding them all); otherwise its first thread.
    bool warpIssues = cfg.desc.kvCache.paged() && !persistent;
    Value issuers = kb.cmp(warpIssues ? arith::CmpIPredicate::ult
                                      : arith::CmpIPredicate::eq,
                           thread.threadInWG, kb.idx(warpIssues ? 32 : 0));
    // transpose-v: every producer thread transposes; thread 0 issues.
    if (cfg.transposeV)
      streamTileTransposingV(kb, cfg, loads, smem, *tile, *range,
                             thread.threadInWG, qIssued);
    else
      kb.ifThen(issuers, [&] {
        if (persistent)
          streamPersistentTiles(kb, cfg, loads, smem, *persistent);
        else
          streamTile(kb, cfg, loads, smem, *tile, *range,
                     warpIssues ? thread.lane : Value(), qIssued);
      });
  }
  kb.b.setInsertionPointToStart(&roleIf.getElseRegion().front());
  NVVM::SetMaxRegisterOp::create(kb.b, kb.loc, cfg.consumerRegs,
                                 NVVM::SetMaxRegisterAction::increase);
}

Value mlir::fa::sm90::isTileLoadIssuer(KernelBuilder &kb,
                                       const KernelConfig &cfg,
                                       const ThreadIds &thread) {
  if (!cfg.warpSpecialized)
    return kb.cmp(arith::CmpIPredicate::eq, thread.tid, kb.idx(0));
  return arith::AndIOp::create(
      kb.b, kb.loc,
      kb.cmp(arith::CmpIPredicate::eq, thread.warpgroup,
             kb.idx(cfg.consumerWarpgroups)),
      kb.cmp(arith::CmpIPredicate::eq, thread.threadInWG, kb.idx(0)));
}
