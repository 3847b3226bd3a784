//===- BackwardKernel.cpp - the FlashAttention-2 backward kernel, composed ===//
//
// A CTA per (key block, K/V head, batch), block-kv / 16 warps. K and V are
// loaded once (cp.async); the steps then stream the query blocks that see
// the CTA's keys, for each query head of the K/V head's group in turn: Q and
// dO double-buffered by cp.async (the next step's issued before this one's
// math), lse and delta staged in shared memory by plain loads. The step is
// SM80/BackwardMainloop.cpp; dK (scaled once) and dV are stored at the end.
// See docs/Backward.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardKernel.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardMainloop.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/KernelState.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/LoadPipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm80;

BackwardSharedMemoryPlan
BackwardSharedMemoryPlan::of(const BackwardConfig &cfg) {
  BackwardSharedMemoryPlan p;
  p.rowStride = cfg.headDim + kRowPadding;
  p.kRow = 0;
  p.vRow = cfg.blockKV;
  p.stageRow = 2 * cfg.blockKV;
  p.stageRows = 2 * cfg.blockQ; // Q, then dO
  p.rows = p.stageRow + 2 * p.stageRows;
  p.dsStride = cfg.blockQ + kRowPadding;
  p.dsOffsetBytes = p.rows * p.rowStride * 2;
  p.rowStatsOffsetBytes = p.dsOffsetBytes + cfg.blockKV * p.dsStride * 2;
  p.bytes = p.rowStatsOffsetBytes + 2 * 2 * cfg.blockQ * 4;
  return p;
}

static BackwardTile threadTile(KernelBuilder &kb, const BackwardConfig &cfg,
                               const BackwardArgs &args) {
  BackwardTile t;
  t.tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  t.warp = kb.div(t.tid, 32);
  t.lane = kb.rem(t.tid, 32);
  t.group = kb.div(t.lane, 4);
  t.quadLane = kb.rem(t.lane, 4);
  t.keyWarp = kb.div(t.warp, 2);
  t.half = kb.rem(t.warp, 2);
  t.cta = kernel::getBackwardCTA(kb, cfg, args);
  Value first = kb.add(
      kb.add(t.cta.kv0, kb.mul(t.keyWarp, kb.idx(kGradKeysPerWarp))), t.group);
  for (int64_t m = 0; m < 2; ++m)
    for (int r = 0; r < 2; ++r)
      t.keys[m][r] = kb.add(first, kb.idx(16 * m + 8 * r));
  return t;
}

/// Views of the dynamic shared memory.
static BackwardBuffers sharedBuffers(KernelBuilder &kb,
                                     const BackwardConfig &cfg,
                                     const BackwardSharedMemoryPlan &plan) {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(
      kb.b, kb.loc,
      MemRefType::get({ShapedType::kDynamic}, kb.b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  auto view = [&](ArrayRef<int64_t> shape, Type elt, int64_t offset) {
    return memref::ViewOp::create(
        kb.b, kb.loc,
        MemRefType::get(shape, elt, MemRefLayoutAttrInterface{}, wg), raw,
        kb.idx(offset), ValueRange{});
  };
  return {view({plan.rows, plan.rowStride}, cfg.elementType, 0),
          view({cfg.blockKV, plan.dsStride}, cfg.elementType,
               plan.dsOffsetBytes),
          view({4 * cfg.blockQ}, kb.b.getF32Type(), plan.rowStatsOffsetBytes)};
}

/// Issues step t's Q and dO loads (two groups) into `stage`; a step past
/// the last loads zeros.
static void prefetchTiles(KernelBuilder &kb, const BackwardConfig &cfg,
                          const BackwardSharedMemoryPlan &plan,
                          const BackwardArgs &args,
                          const BackwardSchedule &schedule,
                          const BackwardBuffers &buf,
                          const AsyncCopyPipeline &loads, Value t,
                          Value stage) {
  BackwardStep s = schedule.at(t, stage);
  Value nq = args.sizes.queryLength;
  Value qBase = kb.mul(s.qRowBase, kb.idx(cfg.headDim));
  Value row = kb.add(kb.idx(plan.stageRow), kb.mul(stage, kb.idx(plan.stageRows)));
  Value rowStart = schedule.firstRow(t, s);
  loads.loadTile(buf.tiles, row, args.q, qBase, rowStart, nq, cfg.blockQ);
  loads.loadTile(buf.tiles, kb.add(row, kb.idx(cfg.blockQ)), args.gradOut,
                 qBase, rowStart, nq, cfg.blockQ);
}

/// Stores dK (times the scale) and dV, rows past Nk left out. From the
/// fragments, 4 bytes per thread and row, a warp's store would touch 8 rows
/// x 16 bytes of global memory; so the tiles are rounded into the K and V
/// rows of shared memory (padded: the pair stores meet no bank twice) and
/// leave them as whole rows, 16 bytes per thread.
static void storeGradients(KernelBuilder &kb, const BackwardConfig &cfg,
                           const BackwardSharedMemoryPlan &plan,
                           const BackwardArgs &args, const BackwardTile &tile,
                           const BackwardBuffers &buf, ValueRange dK,
                           ValueRange dV) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value scale = vector::BroadcastOp::create(b, loc, v2f32, kb.f32(cfg.scale));
  Value col0 = kb.add(kb.mul(tile.quadLane, kb.idx(2)),
                      kb.mul(tile.half, kb.idx(cfg.headDim / 2)));
  int64_t dimTiles = cfg.headDim / 16; // the half's n-tiles
  // K and V are read by no one any more, the last prefetch has landed.
  gpu::BarrierOp::create(b, loc);
  for (int64_t m = 0; m < 2; ++m)
    for (int r = 0; r < 2; ++r) {
      Value row = kb.sub(tile.keys[m][r], tile.cta.kv0);
      for (int64_t n = 0; n < dimTiles; ++n) {
        Value col = kb.add(col0, kb.idx(8 * n));
        int64_t i = m * dimTiles + n;
        Value k = arith::MulFOp::create(
            b, loc,
            vector::ExtractOp::create(b, loc, dK[i], ArrayRef<int64_t>{r}),
            scale);
        vector::StoreOp::create(
            b, loc, arith::TruncFOp::create(b, loc, v2elt, k), buf.tiles,
            ValueRange{kb.add(row, kb.idx(plan.kRow)), col}, false,
            llvm::MaybeAlign(4));
        Value v =
            vector::ExtractOp::create(b, loc, dV[i], ArrayRef<int64_t>{r});
        vector::StoreOp::create(
            b, loc, arith::TruncFOp::create(b, loc, v2elt, v), buf.tiles,
            ValueRange{kb.add(row, kb.idx(plan.vRow)), col}, false,
            llvm::MaybeAlign(4));
      }
    }
  gpu::BarrierOp::create(b, loc);
  // Chunk c = tid + threads i of a tile: row c / (D / 8), columns
  // 8 (c % (D / 8)) and on.
  auto v8elt = VectorType::get({8}, cfg.elementType);
  Value row, col, key;
  forEachRowChunk(
      kb, tile.tid, cfg.threads(), cfg.blockKV, cfg.headDim / 8,
      [&](Value r, Value chunk) {
        row = r;
        col = kb.mul(chunk, kb.idx(8));
        key = kb.add(tile.cta.kv0, row);
        return kb.cmp(arith::CmpIPredicate::slt, key, args.sizes.keyLength);
      },
      [&] {
        Value to = kb.add(
            kb.mul(kb.add(tile.cta.kRowBase, key), kb.idx(cfg.headDim)), col);
        for (auto [tileRow, out] :
             {std::pair{plan.kRow, args.dk}, {plan.vRow, args.dv}}) {
          Value chunk = vector::LoadOp::create(
              b, loc, v8elt, buf.tiles,
              ValueRange{kb.add(row, kb.idx(tileRow)), col}, false,
              llvm::MaybeAlign(16));
          vector::StoreOp::create(b, loc, chunk, out, ValueRange{to}, false,
                                  llvm::MaybeAlign(16));
        }
      });
}

gpu::GPUFuncOp mlir::fa::sm80::buildBackwardKernel(
    OpBuilder &b, Location loc, const BackwardConfig &cfg,
    ArrayRef<KernelParam> params) {
  BackwardSharedMemoryPlan plan = BackwardSharedMemoryPlan::of(cfg);
  OpBuilder::InsertionGuard topGuard(b);
  gpu::GPUFuncOp kfn =
      kernel::createBackwardKernel(b, loc, cfg, params, cfg.threads());
  KernelBuilder kb{b, loc};
  BackwardArgs args = kernel::readBackwardArgs(kb, cfg, kfn);
  BackwardTile tile = threadTile(kb, cfg, args);
  BackwardBuffers buf = sharedBuffers(kb, cfg, plan);
  AsyncCopyPipeline loads(kb, cfg.headDim, cfg.threads(), tile.tid);
  auto [qbBegin, numQBlocks] = kernel::narrowQueryBlocks(
      kb, cfg, args, tile.cta,
      kernel::queryBlockRange(kb, cfg, args, tile.cta));
  Value steps = kb.mul(numQBlocks, tile.cta.groupSize);
  BackwardSchedule schedule{kb,       cfg,     args,       tile.cta,
                            tile.tid, qbBegin, numQBlocks, steps};
  Value lane = tile.lane;
  BackwardLanes lanes;
  lanes.aRow = kb.rem(lane, 16);
  lanes.aCol = kb.mul(kb.div(lane, 16), kb.idx(8));
  lanes.bRow = kb.add(kb.mul(kb.div(lane, 16), kb.idx(8)), kb.rem(lane, 8));
  lanes.bCol = kb.mul(kb.rem(kb.div(lane, 8), 2), kb.idx(8));
  lanes.tRow = kb.add(kb.mul(kb.rem(kb.div(lane, 8), 2), kb.idx(8)),
                      kb.rem(lane, 8));
  lanes.tCol = kb.mul(kb.div(lane, 16), kb.idx(8));

  // K and V of the CTA (rows past Nk zero-filled), the first step's Q, dO.
  Value kBase = kb.mul(tile.cta.kRowBase, kb.idx(cfg.headDim));
  loads.loadTile(buf.tiles, plan.kRow, args.k, kBase, tile.cta.kv0,
                 args.sizes.keyLength, cfg.blockKV);
  Value tok = loads.loadTile(buf.tiles, plan.vRow, args.v, kBase, tile.cta.kv0,
                             args.sizes.keyLength, cfg.blockKV);
  prefetchTiles(kb, cfg, plan, args, schedule, buf, loads, kb.idx(0),
                kb.idx(0));
  schedule.storeRowStat(schedule.loadRowStat(kb.idx(0)), kb.idx(0), buf.stats);

  auto accTy = VectorType::get({2, 2}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, accTy, DenseElementsAttr::get(accTy, b.getF32FloatAttr(0.0)));
  int64_t nAcc = cfg.headDim / 8;
  SmallVector<Value> init(2 * nAcc, zero);
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), steps, kb.idx(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value stage = kb.rem(t, 2);
    Value next = kb.sub(kb.idx(1), stage);
    // This step's loads (the only ones in flight) are complete and, after
    // the barrier, visible; past it every thread is done with the last
    // step: its stage, the P^T / dS^T tile and its statistics are free. So
    // the next step's loads go into the other stage now, under this step's
    // math, and no barrier closes the step.
    loads.wait(tok, 0);
    gpu::BarrierOp::create(b, loc);
    prefetchTiles(kb, cfg, plan, args, schedule, buf, loads,
                  kb.add(t, kb.idx(1)), next);
    Value nextStat = schedule.loadRowStat(kb.add(t, kb.idx(1)));
    auto iter = loop.getRegionIterArgs();
    GradAccumulators acc{SmallVector<Value>(iter.begin(), iter.begin() + nAcc),
                         SmallVector<Value>(iter.begin() + nAcc, iter.end())};
    buildBackwardStep(kb, cfg, plan, args, tile, lanes, buf, schedule,
                      schedule.at(t, stage), acc);
    schedule.storeRowStat(nextStat, next, buf.stats);
    SmallVector<Value> yields(acc.dK);
    yields.append(acc.dV);
    scf::YieldOp::create(b, loc, yields);
  }
  loads.wait(tok, 0);
  ValueRange res = loop.getResults();
  storeGradients(kb, cfg, plan, args, tile, buf, res.take_front(nAcc),
                 res.drop_front(nAcc));
  gpu::ReturnOp::create(b, loc);
  return kfn;
}
