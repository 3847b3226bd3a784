//===- BackwardProducer.cpp - the sm_90a backward's producer warps --------===//
//
// The producer warpgroup of the backward kernel (SM90/BackwardKernel.cpp):
// its warp 0 (lane 0, the loader) brings K and V, then every step's Q and dO
// into the ring; its warp 1 (the writer) adds each step's dQ tile into
// dq_accum by TMA reduce-adds as the consumer warpgroups hand its halves
// over. Both run in the 24 registers setmaxnreg leaves them.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/BackwardBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;
using namespace mlir::fa::sm90::grad;

void grad::waitBulkGroups(KernelBuilder &kb, bool read) {
  emitInlinePTXEffect(kb, ValueRange{},
                      read ? "cp.async.bulk.wait_group.read 0;"
                           : "cp.async.bulk.wait_group 0;",
                      "");
}

void GradBuilder::issueKeyValueTiles() const {
  auto wg = gpu::AddressSpaceAttr::get(kb.b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto boxTy =
      MemRefType::get({1, kGradBlockKV, kSubTileElems}, cfg.elementType,
                      MemRefLayoutAttrInterface{}, wg);
  Value bar = kb.idx(ring.keyValueSlot());
  Value plane = cta.keyPlane(kb, args.sizes);
  Value row = cta.packedKeyRow(kb, cta.kv0);
  nvgpu::MBarrierArriveExpectTxOp::create(
      kb.b, kb.loc, ring.bars, kb.idx(2 * kGradBlockKV * cfg.headDim * 2), bar,
      Value());
  for (auto [map, tileByte] :
       {std::pair(ring.kMap, plan.kOffset), std::pair(ring.vMap, plan.vOffset)})
    for (int64_t sub = 0; sub < cfg.headDim / kSubTileElems; ++sub) {
      Value byte = kb.idx(tileByte + sub * kGradBlockKV * kRowBytes);
      Value dst = memref::ViewOp::create(kb.b, kb.loc, boxTy, sh.raw,
                                         kb.add(sh.shift, byte), ValueRange{});
      nvgpu::TmaAsyncLoadOp::create(
          kb.b, kb.loc, dst, ring.bars, map,
          ValueRange{kb.idx(sub * kSubTileElems), row, plane}, bar, Value(),
          Value());
    }
}

QueryTileCoords GradBuilder::queryTileCoords(Value t) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto i32 = [&](Value v) { return kb.toI32(v); };
  Value blocks =
      arith::MaxSIOp::create(b, loc, i32(schedule.numQBlocks), kb.i32c(1));
  Value tc = i32(t);
  Value inGroup = arith::DivUIOp::create(b, loc, tc, blocks);
  Value block =
      arith::AddIOp::create(b, loc, i32(schedule.qbBegin),
                            arith::RemUIOp::create(b, loc, tc, blocks));
  QueryTileCoords c;
  c.q0 = arith::MulIOp::create(b, loc, block, kb.i32c(cfg.blockQ));
  // varlen: the row in the packed planes (rows past the sequence are the
  // next one's: their P is 0, so they load harmlessly and add zeros).
  if (cta.qRow0)
    c.q0 = arith::AddIOp::create(b, loc, c.q0, i32(cta.qRow0));
  // plane = batch * Hq + kvHead * group + t / blocks (varlen: no batch)
  Value firstHead = cta.qRow0 ? kb.mul(cta.kvHead, cta.groupSize)
                              : kb.add(kb.mul(cta.batch, args.sizes.queryHeads),
                                       kb.mul(cta.kvHead, cta.groupSize));
  c.plane = arith::AddIOp::create(b, loc, i32(firstHead), inGroup);
  return c;
}

void GradBuilder::issueQueryTiles(Value t, Value buffer) const {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto boxTy = MemRefType::get({1, kGradBlockQ, kSubTileElems}, cfg.elementType,
                               MemRefLayoutAttrInterface{}, wg);
  auto index = [&](Value v) {
    return arith::IndexCastUIOp::create(kb.b, kb.loc, kb.b.getIndexType(), v);
  };
  QueryTileCoords at = queryTileCoords(t);
  Value off = kb.mul(buffer, kb.idx(plan.stageBytes));
  nvgpu::MBarrierArriveExpectTxOp::create(
      kb.b, kb.loc, ring.bars, kb.idx(plan.stageBytes), buffer, Value());
  for (auto [map, tileByte] : {std::pair(ring.qMap, plan.qOffset),
                               std::pair(ring.doMap, plan.doOffset)})
    for (int64_t sub = 0; sub < cfg.headDim / kSubTileElems; ++sub) {
      Value byte =
          kb.add(off, kb.idx(tileByte + sub * kGradBlockQ * kRowBytes));
      Value dst = memref::ViewOp::create(kb.b, kb.loc, boxTy, sh.raw,
                                         kb.add(sh.shift, byte), ValueRange{});
      nvgpu::TmaAsyncLoadOp::create(kb.b, kb.loc, dst, ring.bars, map,
                                    ValueRange{kb.idx(sub * kSubTileElems),
                                               index(at.q0), index(at.plane)},
                                    buffer, Value(), Value());
    }
}

void GradBuilder::streamQueryTiles() const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  issueKeyValueTiles();
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), schedule.steps, kb.idx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  Value buffer = kb.rem(t, plan.stages);
  // Step t - stages used the buffer: its release is the buffer's
  // (t / stages - 1)-th phase.
  kb.ifThen(kb.cmp(arith::CmpIPredicate::sge, t, kb.idx(plan.stages)), [&] {
    Value parity = arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        kb.toI32(kb.rem(kb.add(kb.div(t, plan.stages), kb.idx(1)), 2)));
    nvgpu::MBarrierTryWaitParityOp::create(
        b, loc, ring.bars, parity, kb.idx(kTryWaitTicks),
        kb.add(kb.idx(ring.releasedBase()), buffer));
  });
  issueQueryTiles(t, buffer);
}

void GradBuilder::addGradQueryTiles() const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value lane0 = kb.cmp(arith::CmpIPredicate::eq, th.lane, kb.idx(0));
  int64_t halfBoxes = cfg.headDim / 2 / kGradQueryBoxCols;
  constexpr int64_t kBoxBytes = kGradBlockQ * kGradQueryBoxCols * 4;
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), schedule.steps, kb.idx(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    // The tile is free: the last step's reduces have read it (below).
    for (int64_t w = 0; w < 2; ++w)
      namedBarrier(kb, kb.i32c(kGradQueryTileFreeBase + w),
                   kTileHandoverThreads, /*sync=*/false);
    QueryTileCoords at = queryTileCoords(t);
    BackwardStep st;
    if (cfg.deterministic) {
      st = schedule.at(t, kb.idx(0));
      kb.ifThen(lane0, [&] { schedule.spinUntilGradQueryTurn(st); });
    }
    // Each half's D / 64 reduce-adds at (column, query row, plane) as soon
    // as its warpgroup has written it; rows past Nq are outside the map.
    for (int64_t w = 0; w < 2; ++w) {
      namedBarrier(kb, kb.i32c(kGradQueryTileFullBase + w),
                   kTileHandoverThreads, /*sync=*/true);
      kb.ifThen(lane0, [&] {
        for (int64_t box = w * halfBoxes; box < (w + 1) * halfBoxes; ++box) {
          Value src = kb.add(sh.addr, kb.idx(plan.dqOffset + box * kBoxBytes));
          emitInlinePTXEffect(
              kb,
              ValueRange{kb.toI64(sh.dqAccumAddr), kb.toI32(src),
                         kb.i32c(box * kGradQueryBoxCols), at.q0, at.plane},
              "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile."
              "bulk_group [$0, {$2, $3, $4}], [$1];",
              "l,r,r,r,r");
        }
      });
    }
    kb.ifThen(lane0, [&] {
      emitInlinePTXEffect(kb, ValueRange{}, "cp.async.bulk.commit_group;", "");
      if (cfg.deterministic) {
        // Complete and visible before the turn passes on.
        emitInlinePTXEffect(kb, ValueRange{},
                            "cp.async.bulk.wait_group 0;\n"
                            "fence.proxy.async.global;\n"
                            "fence.acq_rel.gpu;",
                            "");
        schedule.incrementGradQueryTurn(st);
      }
      waitBulkGroups(kb, /*read=*/true);
    });
  }
  kb.ifThen(lane0, [&] { waitBulkGroups(kb, /*read=*/false); });
}
