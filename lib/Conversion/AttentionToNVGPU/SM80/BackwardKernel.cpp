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
#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardMainloop.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/KernelState.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/LoadPipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

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

std::vector<KernelParam>
mlir::fa::sm80::getBackwardKernelParams(MLIRContext *ctx,
                                        const BackwardConfig &cfg) {
  using S = SizeSymbol;
  std::string elt = cfg.elementType.isF16() ? "f16" : "bf16";
  Type gTy = MemRefType::get({kGlobalExtent}, cfg.elementType);
  Type fTy = MemRefType::get({kGlobalExtent}, Float32Type::get(ctx));
  SmallVector<SizeExpr, 4> qShape = {S::B, S::Hq, S::Nq, S::D};
  SmallVector<SizeExpr, 4> kvShape = {S::B, S::Hkv, S::Nk, S::D};
  SmallVector<SizeExpr, 4> rowShape = {S::B, S::Hq, S::Nq};
  std::vector<KernelParam> params;
  auto tensor = [&](StringRef name, Type type, StringRef dtype,
                    ArrayRef<SizeExpr> shape, int64_t align,
                    const Twine &meaning) {
    params.push_back(KernelParam{
        name.str(), ParamKind::Pointer, type, meaning.str(),
        TensorContract{name.str(), dtype.str(),
                       SmallVector<SizeExpr, 4>(shape), align}});
  };
  // 16 bytes: cp.async; 4: scalar f32 loads and atomics, f16x2 stores.
  tensor("q", gTy, elt, qShape, 16, "query [B, Hq, Nq, D], contiguous, " + elt);
  tensor("k", gTy, elt, kvShape, 16, "key [B, Hkv, Nk, D], contiguous, " + elt);
  tensor("v", gTy, elt, kvShape, 16,
         "value [B, Hkv, Nk, D], contiguous, " + elt);
  tensor("do", gTy, elt, qShape, 16,
         "gradient of the output [B, Hq, Nq, D], contiguous, " + elt);
  tensor("lse", fTy, "f32", rowShape, 4,
         "the forward's log-sum-exp [B, Hq, Nq], f32 (ln; -inf on rows that "
         "see no key)");
  tensor("delta", fTy, "f32", rowShape, 4,
         "rowsum(do * out) over D [B, Hq, Nq], f32, computed before the "
         "launch");
  tensor("dq_accum", fTy, "f32", qShape, 4,
         "[B, Hq, Nq, D] f32, zero-filled before the launch; receives dq "
         "(scale applied) by atomic adds; dq = dq_accum in q's dtype");
  tensor("dk", gTy, elt, kvShape, 4,
         "gradient of k [B, Hkv, Nk, D], contiguous, " + elt + ", written");
  tensor("dv", gTy, elt, kvShape, 4,
         "gradient of v [B, Hkv, Nk, D], contiguous, " + elt + ", written");
  std::pair<S, StringRef> sizes[] = {{S::B, "batch"},
                                     {S::Hq, "query heads"},
                                     {S::Hkv, "key/value heads (divides Hq)"},
                                     {S::Nq, "query length"},
                                     {S::Nk, "key/value length"}};
  for (auto [symbol, meaning] : sizes)
    params.push_back(KernelParam{getSizeSymbolName(symbol).str(),
                                 ParamKind::I32, IntegerType::get(ctx, 32),
                                 meaning.str(), std::nullopt});
  return params;
}

static BackwardArgs readArgs(KernelBuilder &kb, gpu::GPUFuncOp kfn) {
  auto a = kfn.getArguments();
  BackwardArgs args{a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], {}};
  args.sizes = {kb.asIndex(a[9]), kb.asIndex(a[10]), kb.asIndex(a[11]),
                kb.asIndex(a[12]), kb.asIndex(a[13])};
  return args;
}

static BackwardTile threadTile(KernelBuilder &kb, const BackwardConfig &cfg,
                               const BackwardArgs &args) {
  const ProblemSizes &sz = args.sizes;
  BackwardTile t;
  t.tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  t.warp = kb.div(t.tid, 32);
  t.lane = kb.rem(t.tid, 32);
  t.group = kb.div(t.lane, 4);
  t.quadLane = kb.rem(t.lane, 4);
  Value kvBlock = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  t.kvHead = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::y);
  t.batch = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::z);
  t.groupSize = arith::DivUIOp::create(kb.b, kb.loc, sz.queryHeads, sz.kvHeads);
  t.kv0 = kb.mul(kvBlock, kb.idx(cfg.blockKV));
  t.kRowBase =
      kb.mul(kb.add(kb.mul(t.batch, sz.kvHeads), t.kvHead), sz.keyLength);
  t.diag = kb.sub(sz.keyLength, sz.queryLength);
  t.keys[0] = kb.add(kb.add(t.kv0, kb.mul(t.warp, kb.idx(16))), t.group);
  t.keys[1] = kb.add(t.keys[0], kb.idx(8));
  return t;
}

/// The query blocks [begin, begin + count) that see some key of the CTA:
/// query i sees key j iff -left <= j - (i + diag) <= right.
static std::pair<Value, Value> queryBlockRange(KernelBuilder &kb,
                                               const BackwardConfig &cfg,
                                               const BackwardArgs &args,
                                               const BackwardTile &tile) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value nq = args.sizes.queryLength;
  Value lastKey = kb.sub(arith::MinSIOp::create(
                             b, loc, kb.add(tile.kv0, kb.idx(cfg.blockKV)),
                             args.sizes.keyLength),
                         kb.idx(1));
  Value lo = kb.idx(0), hi = nq; // [lo, hi) of query rows
  if (cfg.windowRight >= 0)
    lo = arith::MaxSIOp::create(
        b, loc, lo,
        kb.sub(kb.sub(tile.kv0, tile.diag), kb.idx(cfg.windowRight)));
  if (cfg.windowLeft >= 0)
    hi = arith::MinSIOp::create(
        b, loc, hi,
        kb.add(kb.sub(lastKey, tile.diag), kb.idx(cfg.windowLeft + 1)));
  Value begin = kb.div(arith::MinSIOp::create(b, loc, lo, nq), cfg.blockQ);
  Value end = kb.div(kb.add(arith::MaxSIOp::create(b, loc, hi, lo),
                            kb.idx(cfg.blockQ - 1)),
                     cfg.blockQ);
  return {begin, kb.sub(end, begin)};
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

namespace {
/// The steps' query blocks, their loads and the row statistics' staging.
struct StepSchedule {
  KernelBuilder &kb;
  const BackwardConfig &cfg;
  const BackwardSharedMemoryPlan &plan;
  const BackwardArgs &args;
  const BackwardTile &tile;
  const BackwardBuffers &buf;
  const AsyncCopyPipeline &loads;
  Value qbBegin, numQBlocks, steps;

  /// Step t (clamped into [0, steps)): head kvHead * r + t / blocks, query
  /// block qbBegin + t % blocks.
  BackwardStep at(Value t, Value stage) const;
  /// Issues the step's Q and dO loads (two groups) into its stage and stages
  /// its lse (log2; +inf on rows past Nq or that see no key) and delta; a
  /// step past the last loads zeros.
  void prefetch(Value t, Value stage) const;
};
} // namespace

BackwardStep StepSchedule::at(Value t, Value stage) const {
  Value blocks = arith::MaxSIOp::create(kb.b, kb.loc, numQBlocks, kb.idx(1));
  Value last = arith::MaxSIOp::create(kb.b, kb.loc, kb.sub(steps, kb.idx(1)),
                                      kb.idx(0));
  Value tc = arith::MinSIOp::create(kb.b, kb.loc, t, last);
  BackwardStep s;
  s.head = kb.add(kb.mul(tile.kvHead, tile.groupSize),
                  arith::DivUIOp::create(kb.b, kb.loc, tc, blocks));
  s.q0 = kb.mul(kb.add(qbBegin, arith::RemUIOp::create(kb.b, kb.loc, tc, blocks)),
                kb.idx(cfg.blockQ));
  s.qRowBase = kb.mul(
      kb.add(kb.mul(tile.batch, args.sizes.queryHeads), s.head),
      args.sizes.queryLength);
  s.stage = stage;
  return s;
}

void StepSchedule::prefetch(Value t, Value stage) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  BackwardStep s = at(t, stage);
  Value nq = args.sizes.queryLength;
  // Past the last step every row reads as past Nq: zero-filled.
  Value valid = kb.cmp(arith::CmpIPredicate::slt, t, steps);
  Value rowStart = arith::SelectOp::create(b, loc, valid, s.q0, nq);
  Value qBase = kb.mul(s.qRowBase, kb.idx(cfg.headDim));
  Value row = kb.add(kb.idx(plan.stageRow), kb.mul(stage, kb.idx(plan.stageRows)));
  loads.loadTile(buf.tiles, row, args.q, qBase, rowStart, nq, cfg.blockQ);
  loads.loadTile(buf.tiles, kb.add(row, kb.idx(cfg.blockQ)), args.gradOut,
                 qBase, rowStart, nq, cfg.blockQ);
  // Threads [0, block-q) stage lse, [block-q, 2 block-q) delta.
  Value isLse = kb.cmp(arith::CmpIPredicate::ult, tile.tid, kb.idx(cfg.blockQ));
  Value r = kb.rem(tile.tid, cfg.blockQ);
  Value qrow = kb.add(rowStart, r);
  Value inRows = kb.cmp(arith::CmpIPredicate::slt, qrow, nq);
  Value at = kb.add(s.qRowBase,
                    arith::SelectOp::create(b, loc, inRows, qrow, kb.idx(0)));
  // Warp-uniform: block-q is a multiple of 32.
  auto load = scf::IfOp::create(b, loc, b.getF32Type(), isLse,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&load.getThenRegion().front());
    scf::YieldOp::create(
        b, loc, memref::LoadOp::create(b, loc, args.lse, ValueRange{at}).getResult());
    b.setInsertionPointToStart(&load.getElseRegion().front());
    scf::YieldOp::create(
        b, loc,
        memref::LoadOp::create(b, loc, args.delta, ValueRange{at}).getResult());
  }
  Value x = load.getResult(0);
  double inf = std::numeric_limits<double>::infinity();
  Value seesNoKey = arith::OrIOp::create(
      b, loc, arith::XOrIOp::create(b, loc, inRows,
                                    arith::ConstantOp::create(
                                        b, loc, b.getBoolAttr(true))),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                            kb.f32(-inf)));
  Value lse2 = arith::SelectOp::create(
      b, loc, seesNoKey, kb.f32(inf),
      arith::MulFOp::create(b, loc, x, kb.f32(M_LOG2E)));
  Value delta = arith::SelectOp::create(b, loc, inRows, x, kb.f32(0.0));
  Value value = arith::SelectOp::create(b, loc, isLse, lse2, delta);
  // stats[(2 stage + which) block-q + r], which = tid / block-q.
  Value slot = kb.add(kb.mul(kb.add(kb.mul(stage, kb.idx(2)),
                                    kb.div(tile.tid, cfg.blockQ)),
                             kb.idx(cfg.blockQ)),
                      r);
  memref::StoreOp::create(b, loc, value, buf.stats, ValueRange{slot});
}

/// Stores dK (times the scale) and dV, rows past Nk left out.
static void storeGradients(KernelBuilder &kb, const BackwardConfig &cfg,
                           const BackwardArgs &args, const BackwardTile &tile,
                           ValueRange dK, ValueRange dV) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value scale = vector::BroadcastOp::create(b, loc, v2f32, kb.f32(cfg.scale));
  Value col0 = kb.mul(tile.quadLane, kb.idx(2));
  for (int r = 0; r < 2; ++r)
    kb.ifThen(
        kb.cmp(arith::CmpIPredicate::slt, tile.keys[r], args.sizes.keyLength),
        [&] {
          Value base = kb.add(
              kb.mul(kb.add(tile.kRowBase, tile.keys[r]), kb.idx(cfg.headDim)),
              col0);
          for (int64_t n = 0; n < cfg.headDim / 8; ++n) {
            Value at = kb.add(base, kb.idx(8 * n));
            Value k = arith::MulFOp::create(
                b, loc,
                vector::ExtractOp::create(b, loc, dK[n], ArrayRef<int64_t>{r}),
                scale);
            vector::StoreOp::create(
                b, loc, arith::TruncFOp::create(b, loc, v2elt, k), args.dk,
                ValueRange{at});
            Value v =
                vector::ExtractOp::create(b, loc, dV[n], ArrayRef<int64_t>{r});
            vector::StoreOp::create(
                b, loc, arith::TruncFOp::create(b, loc, v2elt, v), args.dv,
                ValueRange{at});
          }
        });
}

gpu::GPUFuncOp mlir::fa::sm80::buildBackwardKernel(
    OpBuilder &b, Location loc, const BackwardConfig &cfg,
    ArrayRef<KernelParam> params) {
  BackwardSharedMemoryPlan plan = BackwardSharedMemoryPlan::of(cfg);
  OpBuilder::InsertionGuard topGuard(b);
  auto gpuMod = gpu::GPUModuleOp::create(b, loc, cfg.moduleName);
  b.setInsertionPointToStart(&gpuMod.getBodyRegion().front());
  auto kfn = gpu::GPUFuncOp::create(
      b, loc, cfg.kernelName,
      b.getFunctionType(getKernelArgumentTypes(params), {}));
  kfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kfn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(cfg.threads()), 1, 1}));
  b.setInsertionPointToStart(&kfn.getBody().front());
  KernelBuilder kb{b, loc};
  BackwardArgs args = readArgs(kb, kfn);
  BackwardTile tile = threadTile(kb, cfg, args);
  BackwardBuffers buf = sharedBuffers(kb, cfg, plan);
  AsyncCopyPipeline loads(kb, cfg.headDim, cfg.threads(), tile.tid);
  auto [qbBegin, numQBlocks] = queryBlockRange(kb, cfg, args, tile);
  Value steps = kb.mul(numQBlocks, tile.groupSize);
  StepSchedule schedule{kb,   cfg,   plan,    args,       tile,
                        buf, loads, qbBegin, numQBlocks, steps};
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
  Value kBase = kb.mul(tile.kRowBase, kb.idx(cfg.headDim));
  loads.loadTile(buf.tiles, plan.kRow, args.k, kBase, tile.kv0,
                 args.sizes.keyLength, cfg.blockKV);
  Value tok = loads.loadTile(buf.tiles, plan.vRow, args.v, kBase, tile.kv0,
                             args.sizes.keyLength, cfg.blockKV);
  schedule.prefetch(kb.idx(0), kb.idx(0));

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
    // The next step's loads go into the other stage (free since the last
    // step's closing barrier), under this step's math.
    schedule.prefetch(kb.add(t, kb.idx(1)), next);
    loads.wait(tok, 2);
    gpu::BarrierOp::create(b, loc);
    auto iter = loop.getRegionIterArgs();
    GradAccumulators acc{SmallVector<Value>(iter.begin(), iter.begin() + nAcc),
                         SmallVector<Value>(iter.begin() + nAcc, iter.end())};
    buildBackwardStep(kb, cfg, plan, args, tile, lanes, buf,
                      schedule.at(t, stage), acc);
    SmallVector<Value> yields(acc.dK);
    yields.append(acc.dV);
    scf::YieldOp::create(b, loc, yields);
  }
  loads.wait(tok, 0);
  ValueRange res = loop.getResults();
  storeGradients(kb, cfg, args, tile, res.take_front(nAcc),
                 res.drop_front(nAcc));
  gpu::ReturnOp::create(b, loc);
  return kfn;
}
