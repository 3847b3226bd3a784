//===- BackwardKernel.cpp - the wgmma backward kernel of sm_90a -----------===//
//
// See BackwardKernel.h. The accumulator of an m64nN wgmma holds, for thread
// (warp w of its warpgroup, lane = 4 g + t), rows 16 w + g (+ 8) and columns
// 8 n + 2 t (+ 1) at element 4 n + 2 r + c; here rows are the warpgroup's
// keys and columns the step's queries (S^T, dP^T) or D (dK, dV).
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/BackwardKernel.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/BackwardBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Wgmma.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;
using namespace mlir::fa::sm90::grad;

namespace {
/// lse / delta pairs loaded before the wgmma wait that precedes their use.
constexpr int64_t kPreloadedStatPairs = 2;

/// The column groups (of a thread's D / 16) of the dQ tile stored before the
/// next step's S^T is issued: none at D = 64 (issued before dQ is waited
/// for); all at D = 128, before the tile is handed to the writer. There,
/// with both accumulators whole, ptxas serializes the wgmmas for lack of
/// registers (C7512); after half of the stores it does not, but measured
/// 1-2% slower without a mask and 2-4% slower causal than after all of
/// them (session 20, run2; issued after the handover: 1-2% slower too).
int64_t nextScoresAfter(const BackwardConfig &cfg) {
  return cfg.headDim == 64 ? 0 : cfg.headDim / 16;
}
} // namespace

BackwardSharedMemoryPlan
BackwardSharedMemoryPlan::of(const BackwardConfig &cfg) {
  BackwardSharedMemoryPlan p;
  int64_t kvBytes = kGradBlockKV * cfg.headDim * 2;
  int64_t qBytes = kGradBlockQ * cfg.headDim * 2;
  p.kOffset = 0;
  p.vOffset = kvBytes;
  p.qOffset = 2 * kvBytes;
  p.doOffset = p.qOffset + qBytes;
  p.stageBytes = 2 * qBytes;
  p.stages = cfg.stages;
  p.dsOffset = p.qOffset + p.stages * p.stageBytes;
  p.dsBytes = kGradBlockKV * kRowBytes;
  p.statsOffset = p.dsOffset + 2 * p.dsBytes;
  p.dqOffset = p.statsOffset + 2 * 2 * kGradBlockQ * 4;
  assert(p.dqOffset % kAlignBytes == 0 && "a swizzled box starts at 1024");
  p.gradKVOffset = 0;
  p.gradKVRowElems = cfg.headDim + 8;
  assert(2 * kGradBlockKV * p.gradKVRowElems * 2 <= p.dsOffset &&
         "dK and dV are staged before dS^T");
  p.totalBytes = p.dqOffset + kGradBlockQ * cfg.headDim * 4;
  p.dynamicBytes = p.totalBytes + kAlignBytes;
  return p;
}

/// varlen: B counts sequences, packed into the planes of one batch.
static void packPlanes(TensorMapSpec &m, SizeSymbol heads) {
  m.dims[2] = heads;
  if (size_t at = m.layout.find("[B, "); at != std::string::npos)
    m.layout.replace(at, 4, "[1, ");
  m.layout += " (packed sequences)";
}

TensorMapSpec mlir::fa::sm90::gradQueryTensorMap(const BackwardConfig &cfg) {
  TensorMapSpec m = TensorMapSpec::headMajor(
      "dq_accum", "f32", cuda::TensorMapDataType::Float32, 4, SizeSymbol::Hq,
      SizeSymbol::Nq, kGradQueryBoxCols, kGradBlockQ);
  m.layout += ", f32";
  if (cfg.varlen)
    packPlanes(m, SizeSymbol::Hq);
  m.swizzle = cuda::TensorMapSwizzle::B128;
  return m;
}

TensorMapSpec mlir::fa::sm90::gradInputTensorMap(StringRef tensor,
                                                 const BackwardConfig &cfg) {
  using Sym = SizeSymbol;
  bool keys = tensor == "k" || tensor == "v";
  bool f16 = cfg.elementType.isF16();
  TensorMapSpec m = TensorMapSpec::headMajor(
      tensor, f16 ? "f16" : "bf16",
      f16 ? cuda::TensorMapDataType::Float16
          : cuda::TensorMapDataType::BFloat16,
      2, keys ? Sym::Hkv : Sym::Hq, keys ? Sym::Nk : Sym::Nq, kSubTileElems,
      keys ? kGradBlockKV : kGradBlockQ);
  m.swizzle = cuda::TensorMapSwizzle::B128;
  m.l2Promotion = cuda::TensorMapL2Promotion::B128;
  m.oobFill = cuda::TensorMapFloatOOBFill::None;
  if (cfg.varlen)
    packPlanes(m, keys ? Sym::Hkv : Sym::Hq);
  if (cfg.varlenTokenMajor) {
    // [N, H, D] seen as (D, N, H): rows H * D elements apart, planes D.
    Sym heads = keys ? Sym::Hkv : Sym::Hq;
    m.layout = (tensor + " [" + getSizeSymbolName(keys ? Sym::Nk : Sym::Nq) +
                ", " + getSizeSymbolName(heads) +
                ", D] contiguous (packed sequences, token-major)")
                   .str();
    m.stridesBytes = {SizeExpr::mul({heads, Sym::D, 2}),
                      SizeExpr::mul({Sym::D, 2})};
  }
  return m;
}

Value GradBuilder::swizzled(Value tileByte, int64_t rows, Value row,
                        Value col) const {
  // byte = tile + (col / 64) rows 128 + row 128 + ((col % 64 / 8) ^ (row %
  // 8)) 16 + (col % 8) 2
  Value sub = kb.div(col, kSubTileElems);
  Value chunk = kb.div(kb.rem(col, kSubTileElems), 8);
  Value phys = arith::XOrIOp::create(kb.b, kb.loc, chunk, kb.rem(row, 8));
  Value byte = kb.add(
      kb.add(tileByte, kb.mul(sub, kb.idx(rows * kRowBytes))),
      kb.add(kb.mul(row, kb.idx(kRowBytes)),
             kb.add(kb.mul(phys, kb.idx(16)), kb.mul(kb.rem(col, 8),
                                                     kb.idx(2)))));
  return kb.div(byte, 2);
}

void GradBuilder::waitKeyValueTiles() const {
  Value parity =
      arith::ConstantOp::create(kb.b, kb.loc, kb.b.getBoolAttr(false));
  nvgpu::MBarrierTryWaitParityOp::create(kb.b, kb.loc, ring.bars, parity,
                                         kb.idx(kTryWaitTicks),
                                         kb.idx(ring.keyValueSlot()));
}

void GradBuilder::waitQueryTiles(Value t, Value buffer) const {
  // Buffer b is filled at steps b, b + stages, ...: phase t / stages.
  Value parity =
      arith::TruncIOp::create(kb.b, kb.loc, kb.b.getI1Type(),
                              kb.toI32(kb.rem(kb.div(t, plan.stages), 2)));
  nvgpu::MBarrierTryWaitParityOp::create(kb.b, kb.loc, ring.bars, parity,
                                         kb.idx(kTryWaitTicks), buffer);
}

void GradBuilder::releaseQueryTiles(Value buffer) const {
  // After the warp's wgmma.wait_group 0: every product that read the
  // buffer (dV's and dK's) is complete.
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, th.lane, kb.idx(0)), [&] {
    nvgpu::MBarrierArriveOp::create(
        kb.b, kb.loc, nvgpu::MBarrierTokenType::get(kb.b.getContext()),
        ring.bars, kb.add(kb.idx(ring.releasedBase()), buffer));
  });
}

Value GradBuilder::keysTimesQueries(int64_t aByte, Value stageDesc,
                                int64_t bByte) const {
  MLIRContext *ctx = kb.b.getContext();
  Value acc = LLVM::PoisonOp::create(kb.b, kb.loc,
                                     wgmmaAccumulatorType(ctx, kGradBlockQ));
  // The warpgroup's 64 rows of the 128-row tile.
  Value aDesc = arith::AddIOp::create(
      kb.b, kb.loc, sh.descBase,
      kb.toI64(kb.mul(th.warpgroup,
                      kb.idx(kWarpgroupKeys * kRowBytes / 16))));
  for (int64_t kk = 0; kk < cfg.headDim / 16; ++kk) {
    int64_t inner = kk / 4, k32 = (kk % 4) * 32;
    Value da = wgmmaDescriptor128B(
        kb, aDesc, aByte + inner * kGradBlockKV * kRowBytes + k32, 16);
    Value db = wgmmaDescriptor128B(
        kb, stageDesc, bByte + inner * kGradBlockQ * kRowBytes + k32, 16);
    acc = wgmmaSS(kb, cfg.elementType, acc, da, db, kGradBlockQ, kk == 0,
                  /*transposeB=*/false);
  }
  return acc;
}

Value GradBuilder::accumulate(Value acc, ArrayRef<Value> a, Value stageDesc,
                          int64_t bByte) const {
  for (int64_t kc = 0; kc < kGradBlockQ / 16; ++kc) {
    Value db = wgmmaDescriptor128B(kb, stageDesc, bByte + kc * 16 * kRowBytes,
                                   kGradBlockQ * kRowBytes);
    acc = wgmmaRS(kb, cfg.elementType, acc, a.slice(4 * kc, 4), db,
                  cfg.headDim);
  }
  return acc;
}

SmallVector<Value> GradBuilder::pack(ArrayRef<Value> row0,
                                 ArrayRef<Value> row1) const {
  ArrayRef<Value> p[2] = {row0, row1};
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  SmallVector<Value> regs;
  for (int64_t kc = 0; kc < kGradBlockQ / 16; ++kc)
    for (int64_t h = 0; h < 2; ++h)
      for (int r = 0; r < 2; ++r) {
        int64_t c = 4 * kc + 2 * h;
        Value pair = vector::FromElementsOp::create(
            kb.b, kb.loc, v2f32, ValueRange{p[r][c], p[r][c + 1]});
        Value hv = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
        regs.push_back(
            LLVM::BitcastOp::create(kb.b, kb.loc, kb.b.getI32Type(), hv));
      }
  return regs;
}

SmallVector<Value> GradBuilder::probabilities(Value s, ArrayRef<Value> lse2,
                                              Value head, Value q0, bool masked,
                                              Value stage) const {
  return schedule.probabilityTile(
      [&](int64_t n) { return statAt(lse2, stage, 0, n); }, th.quadLane, head,
      q0, th.keys, masked,
      [&](int64_t n, int r, int64_t c) {
        return kb.extract(s, 4 * n + 2 * r + c);
      });
}

Value GradBuilder::statAt(ArrayRef<Value> preloaded, Value stage, int64_t which,
                          int64_t n) const {
  return n < static_cast<int64_t>(preloaded.size())
             ? preloaded[n]
             : schedule.statPair(sh.stats, stage, which, th.quadLane, n);
}

void GradBuilder::writeGradScoresT(ArrayRef<Value> ds0, ArrayRef<Value> ds1,
                                   Value stage) const {
  ArrayRef<Value> ds[2] = {ds0, ds1};
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value rowInCTA = kb.add(kb.mul(th.warpgroup, kb.idx(kWarpgroupKeys)),
                          kb.add(kb.mul(th.warp, kb.idx(16)), th.group));
  Value tileByte =
      kb.add(kb.idx(plan.dsOffset), kb.mul(stage, kb.idx(plan.dsBytes)));
  for (int r = 0; r < 2; ++r) {
    Value row = kb.add(rowInCTA, kb.idx(8 * r));
    for (int64_t n = 0; n < kGradBlockQ / 8; ++n) {
      Value pair = vector::FromElementsOp::create(
          kb.b, kb.loc, v2f32, ValueRange{ds[r][2 * n], ds[r][2 * n + 1]});
      Value h = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
      Value col = kb.add(kb.mul(th.quadLane, kb.idx(2)), kb.idx(8 * n));
      vector::StoreOp::create(
          kb.b, kb.loc, h, sh.flat,
          ValueRange{swizzled(tileByte, kGradBlockKV, row, col)}, false,
          llvm::MaybeAlign(4));
    }
  }
  NVVM::FenceProxyOp::create(
      kb.b, kb.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value GradBuilder::gradQueryProduct(Value stage) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  MLIRContext *ctx = b.getContext();
  // dQ [64 x D] = dS [64 x 128 keys] K [128 x D]: warpgroup w takes columns
  // n w .. + n - 1 (n = D / 2) over all keys; A = dS^T read MN-major, B = K
  // MN-major from column n w: the start of sub-tile w (D = 128) or 64
  // bytes into each swizzled row (D = 64; the swizzle is a function of the
  // address, so an offset start reads the layout the loads wrote).
  int64_t n = cfg.headDim / 2;
  Value acc = LLVM::PoisonOp::create(b, loc, wgmmaAccumulatorType(ctx, n));
  Value bBase = arith::AddIOp::create(
      b, loc, sh.descBase,
      kb.toI64(kb.mul(th.warpgroup,
                      kb.idx(n >= kSubTileElems ? kGradBlockKV * kRowBytes / 16
                                                : n * 2 / 16))));
  Value dsBase = arith::AddIOp::create(
      b, loc, sh.descBase, kb.toI64(kb.mul(stage, kb.idx(plan.dsBytes / 16))));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kc = 0; kc < kGradBlockKV / 16; ++kc) {
    Value da =
        wgmmaDescriptor128B(kb, dsBase, plan.dsOffset + kc * 16 * kRowBytes,
                            kGradBlockKV * kRowBytes);
    Value db = wgmmaDescriptor128B(kb, bBase,
                                   plan.kOffset + kc * 16 * kRowBytes,
                                   kGradBlockKV * kRowBytes);
    acc = wgmmaSS(kb, cfg.elementType, acc, da, db, n, kc == 0,
                  /*transposeB=*/true, /*transposeA=*/true);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

void GradBuilder::storeGradQueryTile(Value acc, int64_t split,
                                     llvm::function_ref<void()> midway) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  MLIRContext *ctx = b.getContext();
  int64_t n = cfg.headDim / 2;
  // scale dQ into the warpgroup's half of the [64 x D] f32 tile, laid out
  // as dq_accum_map's boxes ([64 rows x 32 columns], 16-byte chunk c of row
  // r at c ^ (r % 8)), once the writer has read the last step's (its
  // reduce-adds into dq_accum: FlashAttention-3's dQ). A pair (8 bytes)
  // stays in its chunk.
  // This warpgroup's handover barriers (the writer's per half).
  Value freeBarrier =
      kb.toI32(kb.add(kb.idx(kGradQueryTileFreeBase), th.warpgroup));
  Value fullBarrier =
      kb.toI32(kb.add(kb.idx(kGradQueryTileFullBase), th.warpgroup));
  namedBarrier(kb, freeBarrier, kTileHandoverThreads, /*sync=*/true);
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  Value scale = kb.f32(cfg.scale);
  // This thread's columns: (n w + 2 quadLane) + 8 j, j < n / 8; n w is a
  // multiple of 32, so column 8 j + 2 quadLane of the warpgroup's half is in
  // box (n w) / 32 + j / 4 at chunk 2 (j % 4) + quadLane / 2, word
  // 2 (quadLane % 2), stored at chunk ^ (row % 8) = chunk ^ group.
  // A half-warp stores 16 pairs of rows group 0..3 (or 4..7): in the same j
  // they would meet in 4 chunks, two to a bank. So threads of odd groups
  // store column group j ^ 2 where the others store j: the chunk
  // (2 (j % 4) + quadLane / 2) ^ 4 (group % 2) ^ group then takes 8 values
  // over a half-warp, one wavefront each store.
  Value boxBase = kb.mul(th.warpgroup, kb.idx(n / kGradQueryBoxCols));
  Value chunkBase = kb.div(th.quadLane, 2);
  Value word = kb.mul(kb.rem(th.quadLane, 2), kb.idx(2));
  Value oddGroup = kb.rem(th.group, 2);
  Value swapped = kb.cmp(arith::CmpIPredicate::ne, oddGroup, kb.idx(0));
  Value chunkXor =
      arith::XOrIOp::create(b, loc, th.group, kb.mul(oddGroup, kb.idx(4)));
  constexpr int64_t kBoxWords = kGradBlockQ * kGradQueryBoxCols;
  Value rowBase[2];
  for (int r = 0; r < 2; ++r) {
    Value row = kb.add(kb.mul(th.warp, kb.idx(16)),
                       kb.add(th.group, kb.idx(8 * r)));
    rowBase[r] = kb.add(kb.idx(plan.dqOffset / 4),
                        kb.mul(row, kb.idx(kGradQueryBoxCols)));
  }
  // Column groups j and j ^ 2 are consumed together: before `split` (a
  // multiple of 4) the registers of [0, split) are free.
  for (int64_t j = 0; j < n / 8; ++j) {
    if (j == split)
      midway();
    for (int r = 0; r < 2; ++r) {
      Value chunk = arith::XOrIOp::create(
          b, loc, kb.add(chunkBase, kb.idx(2 * (j % 4))), chunkXor);
      Value at =
          kb.add(kb.add(rowBase[r], kb.mul(kb.add(boxBase, kb.idx(j / 4)),
                                           kb.idx(kBoxWords))),
                 kb.add(kb.mul(chunk, kb.idx(4)), word));
      auto element = [&](int64_t c) {
        Value v = arith::SelectOp::create(
            b, loc, swapped, kb.extract(acc, 4 * (j ^ 2) + 2 * r + c),
            kb.extract(acc, 4 * j + 2 * r + c));
        return arith::MulFOp::create(b, loc, v, scale).getResult();
      };
      Value pair = vector::FromElementsOp::create(
          b, loc, v2f32, ValueRange{element(0), element(1)});
      vector::StoreOp::create(b, loc, pair, sh.flat32, ValueRange{at}, false,
                              llvm::MaybeAlign(8));
    }
  }
  if (split >= n / 8)
    midway();
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  namedBarrier(kb, fullBarrier, kTileHandoverThreads, /*sync=*/false);
}

Value GradBuilder::issueScores(Value t) const {
  // Past the last step there is nothing to wait for: the product then reads
  // a buffer no load writes any more, and its result goes unused.
  Value buffer = kb.rem(t, plan.stages);
  kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, t, schedule.steps),
            [&] { waitQueryTiles(t, buffer); });
  Value stageDesc = arith::AddIOp::create(
      kb.b, kb.loc, sh.descBase,
      kb.toI64(kb.mul(buffer, kb.idx(plan.stageBytes / 16))));
  NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  Value s = keysTimesQueries(plan.kOffset, stageDesc, plan.qOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, kb.loc);
  return s;
}

void GradBuilder::step(Value t, Value stage, Value buffer, Value nextStat,
                       Value &dK, Value &dV, Value &scores) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  BackwardStep st = schedule.at(t, stage);
  Value stageDesc = arith::AddIOp::create(
      b, loc, sh.descBase,
      kb.toI64(kb.mul(buffer, kb.idx(plan.stageBytes / 16))));

  // Five wgmma groups, each waited for only where its result is needed:
  // P is computed under dP^T's products, dS under dV's, and the dQ tile
  // stored under the next step's S^T (complete here).
  Value s = scores;
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value dp = keysTimesQueries(plan.vOffset, stageDesc, plan.doOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // The step's first lse pairs, read ahead (the rest where they are used:
  // more of them held across a wgmma wait spilled at D = 128, and measured
  // slower at D = 64).
  SmallVector<Value> lse2 =
      schedule.statPairs(sh.stats, stage, 0, th.quadLane, kPreloadedStatPairs);

  // P^T, masked only where the block pair straddles the band or Nk.
  int64_t perRow = kGradBlockQ / 4;
  int64_t numValues = cfg.probabilityTileValues();
  Value needMask = arith::XOrIOp::create(
      b, loc, blockFullyVisible(kb, cfg, args, cta, st.q0),
      arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  auto maskIf = scf::IfOp::create(
      b, loc, SmallVector<Type>(numValues, b.getF32Type()), needMask, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&maskIf.getThenRegion().front());
    scf::YieldOp::create(b, loc,
                         probabilities(s, lse2, st.head, st.q0, true, stage));
    b.setInsertionPointToStart(&maskIf.getElseRegion().front());
    scf::YieldOp::create(b, loc,
                         probabilities(s, lse2, st.head, st.q0, false, stage));
  }
  ValueRange res = maskIf.getResults();
  SmallVector<Value> p[2] = {SmallVector<Value>(res.slice(0, perRow)),
                             SmallVector<Value>(res.slice(perRow, perRow))};
  // dV += P^T dO, in flight while dS^T is computed.
  SmallVector<Value> pRegs = pack(p[0], p[1]);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  dV = accumulate(dV, pRegs, stageDesc, plan.doOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  SmallVector<Value> delta =
      schedule.statPairs(sh.stats, stage, 1, th.quadLane, kPreloadedStatPairs);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1); // dP^T

  // dS^T = P^T (dP^T - delta) (* (1 - tanh^2)); dK += dS^T Q (scaled once,
  // at the end), in flight while dS^T goes to shared memory for dQ.
  SmallVector<Value> dsAll = schedule.gradScoreTile(
      [&](int64_t n) { return statAt(delta, stage, 1, n); }, res,
      [&](int64_t n, int r, int64_t c) {
        return kb.extract(dp, 4 * n + 2 * r + c);
      });
  // grad_captures: dS_t (dS itself for an additive score_mod), taken after
  // dS^T is in shared memory (below).
  SmallVector<Value> dsT;
  if (cfg.hasCaptureGrads())
    dsT = cfg.gradScoreIsGradT()
              ? dsAll
              : schedule.gradModifiedScoreTile(
                    [&](int64_t n) { return statAt(delta, stage, 1, n); }, res,
                    [&](int64_t n, int r, int64_t c) {
                      return kb.extract(dp, 4 * n + 2 * r + c);
                    });
  ArrayRef<Value> ds[2] = {ArrayRef(dsAll).take_front(perRow),
                           ArrayRef(dsAll).drop_front(perRow)};
  SmallVector<Value> dsRegs = pack(ds[0], ds[1]);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  dK = accumulate(dK, dsRegs, stageDesc, plan.qOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // dS^T buffer t % 2: the other warpgroup may still be reading buffer
  // (t - 1) % 2 in step t - 1's dQ product; buffer t % 2 was last read in
  // step t - 2, before this warpgroup's barrier of step t - 1 (below).
  writeGradScoresT(ds[0], ds[1], stage);
  schedule.addCaptureGrads(dsT, th.quadLane, st.head, st.q0, th.keys);
  // Step t + 1's statistics into the other stage (read last in step t - 1,
  // before its barrier); the barrier below publishes them.
  schedule.storeRowStat(nextStat, kb.sub(kb.idx(1), stage), sh.stats);
  namedBarrier(kb, kb.i32c(kGradScoresBarrier), kGradConsumerThreads,
               /*sync=*/true);
  Value dq = gradQueryProduct(stage);
  // The next step's S^T is issued at the point nextScoresAfter picks (at
  // D = 64 it runs under the dQ tile's stores); it completes before the
  // loop's back edge (an accumulator in flight
  // there is copied, and ptxas then serializes every wgmma: C7514).
  int64_t split = nextScoresAfter(cfg);
  Value next = kb.add(t, kb.idx(1));
  if (split == 0)
    scores = issueScores(next);
  // dQ is complete, and so is every product that read the ring buffer.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, split == 0 ? 1 : 0);
  releaseQueryTiles(buffer);
  storeGradQueryTile(dq, split == 0 ? -1 : split,
                     [&] { scores = issueScores(next); });
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
}

void GradBuilder::storeGradients(Value dK, Value dV) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  // Stored from the fragments, 4 bytes per thread and row, a warp's store
  // would touch 8 rows x 16 bytes of global memory (ncu: two thirds of the
  // kernel's global sectors were excess). So the tiles go through shared
  // memory and leave it as whole rows, 16 bytes per thread. Both warpgroups
  // first: the other's last dQ product may still read K.
  namedBarrier(kb, kb.i32c(kGradScoresBarrier), kGradConsumerThreads,
               /*sync=*/true);
  int64_t rowElems = plan.gradKVRowElems;
  int64_t tileElems = kGradBlockKV * rowElems;
  Value scale = kb.f32(cfg.scale);
  Value col0 = kb.mul(th.quadLane, kb.idx(2));
  for (int r = 0; r < 2; ++r) {
    Value base =
        kb.add(kb.add(kb.idx(plan.gradKVOffset / 2),
                      kb.mul(kb.sub(th.keys[r], cta.kv0), kb.idx(rowElems))),
               col0);
    for (int64_t n = 0; n < cfg.headDim / 8; ++n) {
      int64_t i = 4 * n + 2 * r;
      auto pair = [&](Value acc, Value factor) {
        Value x = kb.extract(acc, i), y = kb.extract(acc, i + 1);
        if (factor) {
          x = arith::MulFOp::create(b, loc, x, factor);
          y = arith::MulFOp::create(b, loc, y, factor);
        }
        return arith::TruncFOp::create(
            b, loc, v2elt,
            vector::FromElementsOp::create(b, loc, v2f32, ValueRange{x, y}));
      };
      Value at = kb.add(base, kb.idx(8 * n));
      vector::StoreOp::create(b, loc, pair(dK, scale), sh.flat, ValueRange{at},
                              false, llvm::MaybeAlign(4));
      vector::StoreOp::create(b, loc, pair(dV, Value()), sh.flat,
                              ValueRange{kb.add(at, kb.idx(tileElems))}, false,
                              llvm::MaybeAlign(4));
    }
  }
  namedBarrier(kb, kb.i32c(kGradScoresBarrier), kGradConsumerThreads,
               /*sync=*/true);
  // Chunk c = tid + 256 i of a tile: row c / (D / 8), columns 8 (c % (D / 8))
  // and on; rows past Nk stay unwritten.
  auto v8elt = VectorType::get({8}, cfg.elementType);
  Value row, col, key;
  forEachRowChunk(
      kb, th.tid, kGradConsumerThreads, kGradBlockKV, cfg.headDim / 8,
      [&](Value r, Value chunk) {
        row = r;
        col = kb.mul(chunk, kb.idx(8));
        key = kb.add(cta.kv0, row);
        return kb.cmp(arith::CmpIPredicate::slt, key, cta.keyLength);
      },
      [&] {
        Value from = kb.add(kb.add(kb.idx(plan.gradKVOffset / 2),
                                   kb.mul(row, kb.idx(rowElems))),
                            col);
        // Token-major: key (of the packed keys) then head.
        Value rowOf =
            cfg.varlenTokenMajor
                ? kb.add(kb.mul(cta.packedKeyRow(kb, key), args.sizes.kvHeads),
                         cta.kvHead)
                : kb.add(cta.kRowBase, key);
        Value to = kb.add(kb.mul(rowOf, kb.idx(cfg.headDim)), col);
        for (auto [offset, out] :
             {std::pair{int64_t(0), args.dk}, {tileElems, args.dv}}) {
          Value chunk = vector::LoadOp::create(
              b, loc, v8elt, sh.flat, ValueRange{kb.add(from, kb.idx(offset))},
              false, llvm::MaybeAlign(16));
          vector::StoreOp::create(b, loc, chunk, out, ValueRange{to}, false,
                                  llvm::MaybeAlign(16));
        }
      });
}

static Thread threadOf(KernelBuilder &kb, const BackwardCTA &cta, Value tid) {
  Thread th;
  th.tid = tid;
  th.warpgroup = kb.div(th.tid, 128);
  th.warp = kb.rem(kb.div(th.tid, 32), 4);
  th.lane = kb.rem(th.tid, 32);
  th.group = kb.div(th.lane, 4);
  th.quadLane = kb.rem(th.lane, 4);
  th.keys[0] = kb.add(
      kb.add(cta.kv0, kb.mul(th.warpgroup, kb.idx(kWarpgroupKeys))),
      kb.add(kb.mul(th.warp, kb.idx(16)), th.group));
  th.keys[1] = kb.add(th.keys[0], kb.idx(8));
  return th;
}

/// The loads' mbarriers and the tensor maps (q_map, do_map, k_map, v_map).
static QueryTileRing createQueryTileRing(KernelBuilder &kb,
                                         const BackwardConfig &cfg,
                                         const BackwardArgs &args) {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  QueryTileRing ring;
  ring.stages = cfg.stages;
  ring.bars = nvgpu::MBarrierCreateOp::create(
      kb.b, kb.loc, nvgpu::MBarrierGroupType::get(ctx, wg, ring.count()));
  auto cast = [&](Value arg, int64_t rows) {
    auto mapTy = nvgpu::TensorMapDescriptorType::get(
        ctx,
        MemRefType::get({1, rows, kSubTileElems}, cfg.elementType,
                        MemRefLayoutAttrInterface{}, wg),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    return UnrealizedConversionCastOp::create(kb.b, kb.loc, mapTy, arg)
        .getResult(0);
  };
  ring.qMap = cast(args.q, kGradBlockQ);
  ring.doMap = cast(args.gradOut, kGradBlockQ);
  ring.kMap = cast(args.k, kGradBlockKV);
  ring.vMap = cast(args.v, kGradBlockKV);
  return ring;
}

static Shared allocateShared(KernelBuilder &kb, const BackwardConfig &cfg,
                             const BackwardSharedMemoryPlan &plan) {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Shared sh;
  sh.raw = gpu::DynamicSharedMemoryOp::create(
      kb.b, kb.loc,
      MemRefType::get({ShapedType::kDynamic}, kb.b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  // The next 1024-byte boundary strictly above the buffer's symbol, as the
  // forward kernel (SM90/KernelState.cpp says why).
  Value rawAddr =
      memref::ExtractAlignedPointerAsIndexOp::create(kb.b, kb.loc, sh.raw);
  sh.shift = kb.sub(kb.idx(kAlignBytes), kb.rem(rawAddr, kAlignBytes));
  sh.addr = kb.add(rawAddr, sh.shift);
  sh.descIndex = kb.div(sh.addr, 16);
  sh.descBase = kb.toI64(sh.descIndex);
  sh.flat = memref::ViewOp::create(
      kb.b, kb.loc,
      MemRefType::get({plan.totalBytes / 2}, cfg.elementType,
                      MemRefLayoutAttrInterface{}, wg),
      sh.raw, sh.shift, ValueRange{});
  sh.flat32 = memref::ViewOp::create(
      kb.b, kb.loc,
      MemRefType::get({plan.totalBytes / 4}, kb.b.getF32Type(),
                      MemRefLayoutAttrInterface{}, wg),
      sh.raw, sh.shift, ValueRange{});
  sh.stats = memref::ViewOp::create(
      kb.b, kb.loc,
      MemRefType::get({4 * kGradBlockQ}, kb.b.getF32Type(),
                      MemRefLayoutAttrInterface{}, wg),
      sh.raw, kb.add(sh.shift, kb.idx(plan.statsOffset)), ValueRange{});
  return sh;
}

gpu::GPUFuncOp mlir::fa::sm90::buildBackwardKernel(
    OpBuilder &b, Location loc, const BackwardConfig &cfg,
    ArrayRef<KernelParam> params) {
  BackwardSharedMemoryPlan plan = BackwardSharedMemoryPlan::of(cfg);
  OpBuilder::InsertionGuard topGuard(b);
  gpu::GPUFuncOp kfn = createBackwardKernel(b, loc, cfg, params, kGradThreads);
  // setmaxnreg needs the register count at entry: ptxas does not always
  // derive it from .maxntid (C7508: "unable to determine register count at
  // entry", then the consumers stay at 168 and spill).
  kfn->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
               b.getI32IntegerAttr(65536 / kGradThreads / 8 * 8));
  KernelBuilder kb{b, loc};
  BackwardArgs args = readBackwardArgs(kb, cfg, kfn);
  BackwardCTA cta = getBackwardCTA(kb, cfg, args);
  // varlen: the grid covers the longest sequence's keys; a CTA past its own
  // sequence's has nothing to write. Every thread takes the same branch,
  // before any barrier.
  scf::IfOp inSequence;
  if (Value hasKeys = cta.hasKeys(kb)) {
    inSequence = scf::IfOp::create(b, loc, hasKeys, /*withElseRegion=*/false);
    b.setInsertionPointToStart(inSequence.thenBlock());
  }
  Thread th =
      threadOf(kb, cta, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Shared sh = allocateShared(kb, cfg, plan);
  sh.dqAccumAddr = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, args.dqAccum);
  auto [qbBegin, numQBlocks] =
      narrowQueryBlocks(kb, cfg, args, cta, queryBlockRange(kb, cfg, args, cta));
  Value steps = kb.mul(numQBlocks, cta.groupSize);
  BackwardSchedule schedule{kb,     cfg,     args,       cta,
                            th.tid, qbBegin, numQBlocks, steps};
  QueryTileRing ring = createQueryTileRing(kb, cfg, args);
  GradBuilder bld{kb, cfg, plan, args, cta, th, sh, schedule, ring};

  // Thread 0 initializes the mbarriers; the barrier below publishes them
  // (and step 0's row statistics) to every warp, before the roles split.
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, th.tid, kb.idx(0)), [&] {
    for (int64_t i = 0; i < ring.count(); ++i) {
      bool released = i >= ring.releasedBase();
      nvgpu::MBarrierInitOp::create(
          b, loc, ring.bars, kb.idx(released ? kGradConsumerThreads / 32 : 1),
          kb.idx(i), Value());
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  schedule.storeRowStat(schedule.loadRowStat(kb.idx(0)), kb.idx(0), sh.stats);
  gpu::BarrierOp::create(b, loc);

  auto roleIf = scf::IfOp::create(b, loc,
                                  kb.cmp(arith::CmpIPredicate::eq, th.warpgroup,
                                         kb.idx(kProducerWarpgroup)),
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&roleIf.getThenRegion().front());
    NVVM::SetMaxRegisterOp::create(b, loc, kGradProducerRegisters,
                                   NVVM::SetMaxRegisterAction::decrease);
    Value loader = arith::AndIOp::create(
        b, loc, kb.cmp(arith::CmpIPredicate::eq, th.warp, kb.idx(kLoaderWarp)),
        kb.cmp(arith::CmpIPredicate::eq, th.lane, kb.idx(0)));
    kb.ifThen(loader, [&] { bld.streamQueryTiles(); });
    kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, th.warp, kb.idx(kWriterWarp)),
              [&] { bld.addGradQueryTiles(); });
  }
  b.setInsertionPointToStart(&roleIf.getElseRegion().front());
  NVVM::SetMaxRegisterOp::create(b, loc, kGradConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  bld.waitKeyValueTiles();

  MLIRContext *ctx = b.getContext();
  Value zero = LLVM::ZeroOp::create(b, loc,
                                    wgmmaAccumulatorType(ctx, cfg.headDim));
  // Step 0's S^T before the loop (complete at its top); each step issues
  // the next one's.
  Value scores0 = bld.issueScores(kb.idx(0));
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), steps, kb.idx(1),
                                 ValueRange{zero, zero, scores0});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value stage = kb.rem(t, 2);
    Value buffer = kb.rem(t, plan.stages);
    Value nextStat = schedule.loadRowStat(kb.add(t, kb.idx(1)));
    Value dK = loop.getRegionIterArgs()[0], dV = loop.getRegionIterArgs()[1];
    Value scores = loop.getRegionIterArgs()[2];
    // The descriptors derive from an opaque copy of the base, computed where
    // they are used: hoisted out of the loop, the 2 x D / 16 + ... of them
    // would stay live in registers (as the forward kernel does).
    Shared stepShared = sh;
    stepShared.descBase = kb.toI64(opaqueIndex(kb, sh.descIndex));
    GradBuilder stepBld{kb, cfg,        plan,     args, cta,
                        th, stepShared, schedule, ring};
    stepBld.step(t, stage, buffer, nextStat, dK, dV, scores);
    scf::YieldOp::create(b, loc, ValueRange{dK, dV, scores});
  }
  // The stores' addresses from the thread and block ids read again: kept
  // live across the loop from the prologue, they spilled (8 bytes at
  // D = 128).
  BackwardCTA ctaAgain = getBackwardCTA(kb, cfg, args, /*opaque=*/true);
  Thread thAgain = threadOf(kb, ctaAgain, opaqueThreadIdX(kb));
  GradBuilder storeBld{kb,      cfg, plan,     args, ctaAgain,
                       thAgain, sh,  schedule, ring};
  storeBld.storeGradients(loop.getResult(0), loop.getResult(1));
  b.setInsertionPointAfter(inSequence ? inSequence.getOperation()
                                      : roleIf.getOperation());
  gpu::ReturnOp::create(b, loc);
  return kfn;
}
