//===- BackwardKernel.cpp - the wgmma backward kernel of sm_90a -----------===//
//
// See BackwardKernel.h. The accumulator of an m64nN wgmma holds, for thread
// (warp w of its warpgroup, lane = 4 g + t), rows 16 w + g (+ 8) and columns
// 8 n + 2 t (+ 1) at element 4 n + 2 r + c; here rows are the warpgroup's
// keys and columns the step's queries (S^T, dP^T) or D (dK, dV).
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/BackwardKernel.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
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

namespace {
constexpr int64_t kRowBytes = 128;    ///< a swizzled sub-tile row
constexpr int64_t kSubTileElems = 64; ///< 16-bit elements per row
constexpr int64_t kAlignBytes = 1024; ///< the swizzle atom
constexpr int64_t kWarpgroupKeys = 64;
constexpr int64_t kThreads = 256;
/// lse / delta pairs loaded before the wgmma wait that precedes their use.
constexpr int64_t kPreloadedStatPairs = 2;
/// mbarrier.try_wait suspend-time hint, in ns (as the forward's ring).
constexpr int64_t kTryWaitTicks = 10000000;
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
  p.statsOffset = p.dsOffset + kGradBlockKV * kRowBytes;
  p.dqOffset = p.statsOffset + 2 * 2 * kGradBlockQ * 4;
  assert(p.dqOffset % kAlignBytes == 0 && "a swizzled box starts at 1024");
  p.totalBytes = p.dqOffset + kGradBlockQ * cfg.headDim * 4;
  p.dynamicBytes = p.totalBytes + kAlignBytes;
  return p;
}

TensorMapSpec mlir::fa::sm90::gradQueryTensorMap() {
  TensorMapSpec m = TensorMapSpec::headMajor(
      "dq_accum", "f32", cuda::TensorMapDataType::Float32, 4, SizeSymbol::Hq,
      SizeSymbol::Nq, kGradQueryBoxCols, kGradBlockQ);
  m.layout += ", f32";
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
  return m;
}

namespace {
/// The thread's place in the CTA.
struct Thread {
  Value tid, warpgroup, warp, lane, group, quadLane;
  std::array<Value, 2> keys; ///< its accumulator rows' keys
};

/// The dynamic shared memory from a 1024-aligned base.
struct Shared {
  Value raw, shift;
  Value descBase; ///< the base address >> 4 (i64), for descriptors
  Value descIndex; ///< the same as an index
  Value addr;     ///< the base's shared-memory address (index)
  Value flat32;   ///< the buffer as [totalBytes / 4] f32 (the dQ tile)
  Value dqAccumAddr; ///< dq_accum_map's global address (index)
  Value flat;     ///< [totalBytes / 2] 16-bit elements
  Value stats;    ///< the row statistics, f32
};

/// The TMA loads: the ring of the step's Q and dO, buffer s filled under
/// mbarrier s, and the CTA's K and V under mbarrier `stages` (one arrival
/// each: the issuing thread's expect_tx).
struct QueryTileRing {
  Value bars;                    ///< !nvgpu.mbarrier.group of `stages` + 1
  Value qMap, doMap, kMap, vMap; ///< the tensor maps
};

struct GradBuilder {
  KernelBuilder &kb;
  const BackwardConfig &cfg;
  const BackwardSharedMemoryPlan &plan;
  const BackwardArgs &args;
  const BackwardCTA &cta;
  const Thread &th;
  const Shared &sh;
  const BackwardSchedule &schedule;
  const QueryTileRing &ring;

  /// The element index of (row, col) of the swizzled tile at `tileByte`
  /// with `rows` rows; `row % 8` given as `row8` when it is known.
  Value swizzled(Value tileByte, int64_t rows, Value row, Value col) const;
  /// Thread 0's TMA loads of the CTA's K and V (rows past Nk zero).
  void issueKeyValueTiles() const;
  /// Blocks until K and V have landed.
  void waitKeyValueTiles() const;
  /// Thread 0's TMA loads of step t's Q and dO into ring buffer `buffer`.
  void issueQueryTiles(Value t, Value buffer) const;
  /// Blocks until ring buffer `buffer` holds step t's tiles.
  void waitQueryTiles(Value t, Value buffer) const;
  /// acc = (64 rows at `aByte`, K-major) x (the stage's 64 rows at
  /// `bByte`, K-major)^T over D: S^T or dP^T.
  Value keysTimesQueries(int64_t aByte, Value stageDesc, int64_t bByte) const;
  /// acc += (per 16-query chunk: 4 x b32 A registers) x (the stage's
  /// [64 x D] tile at `bByte`, MN-major): dV or dK.
  Value accumulate(Value acc, ArrayRef<Value> a, Value stageDesc,
                   int64_t bByte) const;
  /// The A registers of an accumulator tile of 64 columns (f16x2 pairs).
  SmallVector<Value> pack(ArrayRef<Value> row0, ArrayRef<Value> row1) const;
  /// P^T (and the softcap derivative) of the S^T accumulator.
  SmallVector<Value> probabilities(Value s, ArrayRef<Value> lse2, Value head,
                                   Value q0, bool masked, Value stage) const;
  /// The stage's statPair `which` of n-tile n: from `preloaded`
  /// (statPairs) when it holds it, loaded here otherwise.
  Value statAt(ArrayRef<Value> preloaded, Value stage, int64_t which,
               int64_t n) const;
  void writeGradScoresT(ArrayRef<Value> ds0, ArrayRef<Value> ds1) const;
  /// dQ of the step; thread 0 calls `refill` before it issues the adds.
  void gradQuery(const BackwardStep &step,
                 llvm::function_ref<void()> refill) const;
  /// Step t; `nextStat` (step t + 1's row statistics) is staged before
  /// the barrier that publishes dS^T.
  void step(Value t, Value stage, Value buffer, Value nextStat, Value &dK,
            Value &dV) const;
  void storeGradients(Value dK, Value dV) const;
};
} // namespace

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

void GradBuilder::issueKeyValueTiles() const {
  auto wg = gpu::AddressSpaceAttr::get(kb.b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto boxTy =
      MemRefType::get({1, kGradBlockKV, kSubTileElems}, cfg.elementType,
                      MemRefLayoutAttrInterface{}, wg);
  Value bar = kb.idx(plan.stages);
  Value plane = kb.add(kb.mul(cta.batch, args.sizes.kvHeads), cta.kvHead);
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
          ValueRange{kb.idx(sub * kSubTileElems), cta.kv0, plane}, bar, Value(),
          Value());
    }
}

void GradBuilder::waitKeyValueTiles() const {
  Value parity =
      arith::ConstantOp::create(kb.b, kb.loc, kb.b.getBoolAttr(false));
  nvgpu::MBarrierTryWaitParityOp::create(kb.b, kb.loc, ring.bars, parity,
                                         kb.idx(kTryWaitTicks),
                                         kb.idx(plan.stages));
}

void GradBuilder::issueQueryTiles(Value t, Value buffer) const {
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto boxTy = MemRefType::get({1, kGradBlockQ, kSubTileElems}, cfg.elementType,
                               MemRefLayoutAttrInterface{}, wg);
  // The step's (query row, plane) in 32-bit arithmetic: the 64-bit
  // division of BackwardSchedule::at, in the loop, spilled (92 bytes at
  // D = 128) the registers around this one thread's branch.
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto i32 = [&](Value v) { return kb.toI32(v); };
  auto index = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  };
  Value blocks =
      arith::MaxSIOp::create(b, loc, i32(schedule.numQBlocks), kb.i32c(1));
  Value tc = i32(t);
  Value inGroup = arith::DivUIOp::create(b, loc, tc, blocks);
  Value block =
      arith::AddIOp::create(b, loc, i32(schedule.qbBegin),
                            arith::RemUIOp::create(b, loc, tc, blocks));
  Value q0 = arith::MulIOp::create(b, loc, block, kb.i32c(cfg.blockQ));
  // plane = batch * Hq + kvHead * group + t / blocks
  Value plane =
      arith::AddIOp::create(b, loc,
                            i32(kb.add(kb.mul(cta.batch, args.sizes.queryHeads),
                                       kb.mul(cta.kvHead, cta.groupSize))),
                            inGroup);
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
      nvgpu::TmaAsyncLoadOp::create(
          kb.b, kb.loc, dst, ring.bars, map,
          ValueRange{kb.idx(sub * kSubTileElems), index(q0), index(plane)},
          buffer, Value(), Value());
    }
}

void GradBuilder::waitQueryTiles(Value t, Value buffer) const {
  // Buffer b is filled at steps b, b + stages, ...: phase t / stages.
  Value parity =
      arith::TruncIOp::create(kb.b, kb.loc, kb.b.getI1Type(),
                              kb.toI32(kb.rem(kb.div(t, plan.stages), 2)));
  nvgpu::MBarrierTryWaitParityOp::create(kb.b, kb.loc, ring.bars, parity,
                                         kb.idx(kTryWaitTicks), buffer);
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

void GradBuilder::writeGradScoresT(ArrayRef<Value> ds0, ArrayRef<Value> ds1) const {
  ArrayRef<Value> ds[2] = {ds0, ds1};
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value rowInCTA = kb.add(kb.mul(th.warpgroup, kb.idx(kWarpgroupKeys)),
                          kb.add(kb.mul(th.warp, kb.idx(16)), th.group));
  for (int r = 0; r < 2; ++r) {
    Value row = kb.add(rowInCTA, kb.idx(8 * r));
    for (int64_t n = 0; n < kGradBlockQ / 8; ++n) {
      Value pair = vector::FromElementsOp::create(
          kb.b, kb.loc, v2f32, ValueRange{ds[r][2 * n], ds[r][2 * n + 1]});
      Value h = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
      Value col = kb.add(kb.mul(th.quadLane, kb.idx(2)), kb.idx(8 * n));
      vector::StoreOp::create(
          kb.b, kb.loc, h, sh.flat,
          ValueRange{swizzled(kb.idx(plan.dsOffset), kGradBlockKV, row, col)},
          false, llvm::MaybeAlign(4));
    }
  }
  NVVM::FenceProxyOp::create(
      kb.b, kb.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void GradBuilder::gradQuery(const BackwardStep &step,
                            llvm::function_ref<void()> refill) const {
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
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kc = 0; kc < kGradBlockKV / 16; ++kc) {
    Value da = wgmmaDescriptor128B(kb, sh.descBase,
                                   plan.dsOffset + kc * 16 * kRowBytes,
                                   kGradBlockKV * kRowBytes);
    Value db = wgmmaDescriptor128B(kb, bBase,
                                   plan.kOffset + kc * 16 * kRowBytes,
                                   kGradBlockKV * kRowBytes);
    acc = wgmmaSS(kb, cfg.elementType, acc, da, db, n, kc == 0,
                  /*transposeB=*/true, /*transposeA=*/true);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

  // scale dQ into the [64 x D] f32 tile, laid out as dq_accum_map's boxes
  // ([64 rows x 32 columns], 16-byte chunk c of row r at c ^ (r % 8)), then
  // one TMA reduce-add per box into dq_accum (rows past Nq are outside the
  // map): FlashAttention-3's dQ. A pair (8 bytes) stays in its chunk.
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  Value scale = kb.f32(cfg.scale);
  // This thread's columns: (n w + 2 quadLane) + 8 j, j < n / 8; n w is a
  // multiple of 32, so column 8 j + 2 quadLane of the warpgroup's half is in
  // box (n w) / 32 + j / 4 at chunk 2 (j % 4) + quadLane / 2, word
  // 2 (quadLane % 2).
  Value boxBase = kb.mul(th.warpgroup, kb.idx(n / kGradQueryBoxCols));
  Value chunkBase = kb.div(th.quadLane, 2);
  Value word = kb.mul(kb.rem(th.quadLane, 2), kb.idx(2));
  constexpr int64_t kBoxWords = kGradBlockQ * kGradQueryBoxCols;
  for (int r = 0; r < 2; ++r) {
    Value row = kb.add(kb.mul(th.warp, kb.idx(16)),
                       kb.add(th.group, kb.idx(8 * r)));
    Value rowBase = kb.add(kb.idx(plan.dqOffset / 4),
                           kb.mul(row, kb.idx(kGradQueryBoxCols)));
    for (int64_t j = 0; j < n / 8; ++j) {
      Value chunk = arith::XOrIOp::create(
          b, loc, kb.add(chunkBase, kb.idx(2 * (j % 4))), th.group);
      Value at = kb.add(kb.add(rowBase, kb.mul(kb.add(boxBase, kb.idx(j / 4)),
                                               kb.idx(kBoxWords))),
                        kb.add(kb.mul(chunk, kb.idx(4)), word));
      Value pair = vector::FromElementsOp::create(
          b, loc, v2f32,
          ValueRange{arith::MulFOp::create(
                         b, loc, kb.extract(acc, 4 * j + 2 * r), scale),
                     arith::MulFOp::create(
                         b, loc, kb.extract(acc, 4 * j + 2 * r + 1), scale)});
      vector::StoreOp::create(b, loc, pair, sh.flat32, ValueRange{at}, false,
                              llvm::MaybeAlign(8));
    }
  }
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  gpu::BarrierOp::create(b, loc);
  if (cfg.deterministic)
    schedule.waitForGradQueryTurn(step);
  // One thread issues the D / 32 reduce-adds (one bulk group) at (column,
  // query row, plane = batch * Hq + head).
  Value plane = kb.add(kb.mul(cta.batch, args.sizes.queryHeads), step.head);
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, th.tid, kb.idx(0)), [&] {
    refill();
    for (int64_t box = 0; box < cfg.headDim / kGradQueryBoxCols; ++box) {
      Value src = kb.add(sh.addr, kb.idx(plan.dqOffset + box * kBoxWords * 4));
      emitInlinePTXEffect(
          kb,
          ValueRange{kb.toI64(sh.dqAccumAddr), kb.toI32(src),
                     kb.i32c(box * kGradQueryBoxCols), kb.toI32(step.q0),
                     kb.toI32(plane)},
          "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile."
          "bulk_group [$0, {$2, $3, $4}], [$1];",
          "l,r,r,r,r");
    }
    emitInlinePTXEffect(kb, ValueRange{}, "cp.async.bulk.commit_group;", "");
  });
  if (cfg.deterministic)
    schedule.passGradQueryTurn(step, /*bulkAdds=*/true);
}

/// Blocks until this thread's bulk reduces have read shared memory (`read`)
/// or completed.
static void waitBulkGroups(KernelBuilder &kb, bool read) {
  emitInlinePTXEffect(kb, ValueRange{},
                      read ? "cp.async.bulk.wait_group.read 0;"
                           : "cp.async.bulk.wait_group 0;",
                      "");
}

void GradBuilder::step(Value t, Value stage, Value buffer, Value nextStat,
                       Value &dK, Value &dV) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  BackwardStep st = schedule.at(t, stage);
  Value stageDesc = arith::AddIOp::create(
      b, loc, sh.descBase,
      kb.toI64(kb.mul(buffer, kb.idx(plan.stageBytes / 16))));

  // Four wgmma groups, each waited for only where its result is needed:
  // P is computed under dP^T's products, dS under dV's.
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value s = keysTimesQueries(plan.kOffset, stageDesc, plan.qOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  Value dp = keysTimesQueries(plan.vOffset, stageDesc, plan.doOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // The step's first lse pairs, read while the products run (the rest
  // where they are used: more of them held across the wait spill at D = 128,
  // and measured slower at D = 64).
  SmallVector<Value> lse2 =
      schedule.statPairs(sh.stats, stage, 0, th.quadLane, kPreloadedStatPairs);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1); // S^T

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
  ArrayRef<Value> ds[2] = {ArrayRef(dsAll).take_front(perRow),
                           ArrayRef(dsAll).drop_front(perRow)};
  SmallVector<Value> dsRegs = pack(ds[0], ds[1]);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  dK = accumulate(dK, dsRegs, stageDesc, plan.qOffset);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  writeGradScoresT(ds[0], ds[1]);
  // Step t + 1's statistics into the other stage (read last in step t - 1,
  // before its barriers); the barrier below publishes them.
  schedule.storeRowStat(nextStat, kb.sub(kb.idx(1), stage), sh.stats);
  // The last step's row reduces have read the dQ tile it is about to reuse.
  waitBulkGroups(kb, /*read=*/true);
  gpu::BarrierOp::create(b, loc);
  // Past gradQuery's barrier every thread has waited for all of the step's
  // wgmma groups, so its ring buffer is free: thread 0 refills it with step
  // t + stages's Q and dO, ahead of the reduce-adds (after them, the loads
  // queued behind the adds: run2 of
  // bench/results/backward_h200_2026-12-02_s17).
  Value refillStep = kb.add(t, kb.idx(plan.stages));
  gradQuery(st, [&] {
    kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, refillStep, schedule.steps),
              [&] { issueQueryTiles(refillStep, buffer); });
  });
}

void GradBuilder::storeGradients(Value dK, Value dV) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value scale = kb.f32(cfg.scale);
  Value col0 = kb.mul(th.quadLane, kb.idx(2));
  for (int r = 0; r < 2; ++r)
    kb.ifThen(
        kb.cmp(arith::CmpIPredicate::slt, th.keys[r], args.sizes.keyLength),
        [&] {
          Value base = kb.add(
              kb.mul(kb.add(cta.kRowBase, th.keys[r]), kb.idx(cfg.headDim)),
              col0);
          for (int64_t n = 0; n < cfg.headDim / 8; ++n) {
            Value at = kb.add(base, kb.idx(8 * n));
            int64_t i = 4 * n + 2 * r;
            Value k = vector::FromElementsOp::create(
                b, loc, v2f32,
                ValueRange{arith::MulFOp::create(b, loc, kb.extract(dK, i),
                                                 scale),
                           arith::MulFOp::create(b, loc, kb.extract(dK, i + 1),
                                                 scale)});
            vector::StoreOp::create(
                b, loc, arith::TruncFOp::create(b, loc, v2elt, k), args.dk,
                ValueRange{at});
            Value v = vector::FromElementsOp::create(
                b, loc, v2f32,
                ValueRange{kb.extract(dV, i), kb.extract(dV, i + 1)});
            vector::StoreOp::create(
                b, loc, arith::TruncFOp::create(b, loc, v2elt, v), args.dv,
                ValueRange{at});
          }
        });
}

static Thread threadOf(KernelBuilder &kb, const BackwardCTA &cta) {
  Thread th;
  th.tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
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
  ring.bars = nvgpu::MBarrierCreateOp::create(
      kb.b, kb.loc, nvgpu::MBarrierGroupType::get(ctx, wg, cfg.stages + 1));
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
  gpu::GPUFuncOp kfn = createBackwardKernel(b, loc, cfg, params, kThreads);
  KernelBuilder kb{b, loc};
  BackwardArgs args = readBackwardArgs(kb, cfg, kfn);
  BackwardCTA cta = getBackwardCTA(kb, cfg, args);
  Thread th = threadOf(kb, cta);
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

  // Thread 0 issues the loads of K and V and of the ring's first `stages`
  // steps (step t refills its buffer for step t + stages).
  Value isIssuer = kb.cmp(arith::CmpIPredicate::eq, th.tid, kb.idx(0));
  kb.ifThen(isIssuer, [&] {
    for (int64_t i = 0; i <= plan.stages; ++i)
      nvgpu::MBarrierInitOp::create(b, loc, ring.bars, kb.idx(1), kb.idx(i),
                                    Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
    bld.issueKeyValueTiles();
    for (int64_t i = 0; i < plan.stages; ++i)
      kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, kb.idx(i), steps),
                [&] { bld.issueQueryTiles(kb.idx(i), kb.idx(i)); });
  });
  schedule.storeRowStat(schedule.loadRowStat(kb.idx(0)), kb.idx(0), sh.stats);
  // Publishes step 0's statistics and the mbarriers' initialization; in the
  // loop, each step's two barriers publish what the next one reads.
  gpu::BarrierOp::create(b, loc);
  bld.waitKeyValueTiles();

  MLIRContext *ctx = b.getContext();
  Value zero = LLVM::ZeroOp::create(b, loc,
                                    wgmmaAccumulatorType(ctx, cfg.headDim));
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), steps, kb.idx(1),
                                 ValueRange{zero, zero});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value stage = kb.rem(t, 2);
    Value buffer = kb.rem(t, plan.stages);
    Value nextStat = schedule.loadRowStat(kb.add(t, kb.idx(1)));
    bld.waitQueryTiles(t, buffer);
    Value dK = loop.getRegionIterArgs()[0], dV = loop.getRegionIterArgs()[1];
    // The descriptors derive from an opaque copy of the base, computed where
    // they are used: hoisted out of the loop, the 2 x D / 16 + ... of them
    // would stay live in registers (as the forward kernel does).
    Shared stepShared = sh;
    stepShared.descBase = kb.toI64(opaqueIndex(kb, sh.descIndex));
    GradBuilder stepBld{kb, cfg,        plan,     args, cta,
                        th, stepShared, schedule, ring};
    stepBld.step(t, stage, buffer, nextStat, dK, dV);
    scf::YieldOp::create(b, loc, ValueRange{dK, dV});
  }
  waitBulkGroups(kb, /*read=*/false);
  bld.storeGradients(loop.getResult(0), loop.getResult(1));
  gpu::ReturnOp::create(b, loc);
  return kfn;
}
