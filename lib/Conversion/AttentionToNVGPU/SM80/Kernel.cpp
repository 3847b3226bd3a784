//===- Kernel.cpp - the sm_80 FlashAttention-2 kernel, composed -----------===//
//
// Composes the sm_80 components into the forward kernel of one attention: a
// gpu.func over (query block, head, batch), block-q / rows-per-warp warps,
// Q/K/V tiles through shared memory by cp.async (LoadPipeline), ldmatrix +
// mma.sync with the online softmax in registers (Mainloop), normalization
// and stores (Epilogue). See docs/SM80.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/Kernel.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/Mainloop.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm80;

SharedMemoryPlan SharedMemoryPlan::of(const KernelConfig &cfg) {
  SharedMemoryPlan p;
  p.rowStride = cfg.headDim + kRowPadding;
  p.kRow = cfg.qInRegisters() ? 0 : cfg.blockQ;
  p.vRow = p.kRow + cfg.blockKV;
  p.rows = std::max(p.vRow + cfg.blockKV, cfg.blockQ);
  p.bytes = p.rows * p.rowStride * 2;
  p.dynamic = p.bytes > kStaticSharedMemoryLimitBytes;
  return p;
}

MemRefType SharedMemoryPlan::type(MLIRContext *ctx, Type elementType) const {
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  return MemRefType::get({rows, rowStride}, elementType,
                         MemRefLayoutAttrInterface{}, wg);
}

/// Arguments q, k, v, out (lse) as bare pointers, then B, Hq, Hkv, Nq, Nk.
static KernelArgs readKernelArgs(KernelBuilder &kb, const KernelConfig &cfg,
                                 gpu::GPUFuncOp kfn) {
  auto args = kfn.getArguments();
  KernelArgs a;
  a.q = args[0];
  a.k = args[1];
  a.v = args[2];
  a.out = args[3];
  a.lse = cfg.hasLse ? args[4] : Value();
  unsigned s0 = cfg.hasLse ? 5 : 4;
  unsigned numModifierParams = cfg.modifiers.numParams();
  a.modifierParams.assign(args.begin() + s0,
                          args.begin() + s0 + numModifierParams);
  s0 += numModifierParams;
  if (cfg.kvCache.kvLens)
    a.kvCache.kvLens = args[s0++];
  if (cfg.kvCache.paged())
    a.kvCache.pageTable = args[s0++];
  a.sizes.batch = kb.asIndex(args[s0]);
  a.sizes.queryHeads = kb.asIndex(args[s0 + 1]);
  a.sizes.kvHeads = kb.asIndex(args[s0 + 2]);
  a.sizes.queryLength = kb.asIndex(args[s0 + 3]);
  a.sizes.keyLength = kb.asIndex(args[s0 + 4]);
  if (cfg.kvCache.paged()) {
    a.kvCache.numPages = kb.asIndex(args[s0 + 5]);
    a.kvCache.maxPages = kb.asIndex(args[s0 + 6]);
  }
  return a;
}

/// The thread's indices and its tile's offsets (one tile per CTA).
static ThreadTile threadTile(KernelBuilder &kb, const KernelConfig &cfg,
                             const KernelArgs &args) {
  const ProblemSizes &sz = args.sizes;
  ThreadTile t;
  t.tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  TileCoord c =
      TileScheduler(TileScheduler::Kind::OneTilePerCTA, false, cfg.blockQ)
          .getBlockTile(kb);
  t.warp = kb.div(t.tid, 32);
  t.lane = kb.rem(t.tid, 32);
  t.group = kb.div(t.lane, 4);
  t.quadLane = kb.rem(t.lane, 4);
  // GQA: query head h reads key/value head h / (Hq / Hkv).
  Value kvHead = arith::DivUIOp::create(
      kb.b, kb.loc, c.head,
      arith::DivUIOp::create(kb.b, kb.loc, sz.queryHeads, sz.kvHeads));
  Value dConst = kb.idx(cfg.headDim);
  t.qRowBase = kb.mul(kb.add(kb.mul(c.batch, sz.queryHeads), c.head),
                      sz.queryLength);
  Value kRowBase =
      kb.mul(kb.add(kb.mul(c.batch, sz.kvHeads), kvHead), sz.keyLength);
  t.qBase = kb.mul(t.qRowBase, dConst);
  t.kBase = kb.mul(kRowBase, dConst);
  t.q0 = kb.mul(c.qBlock, kb.idx(cfg.blockQ));
  t.batch = c.batch;
  t.head = c.head;
  t.warpRow = kb.mul(t.warp, kb.idx(cfg.rowsPerWarp));
  if (cfg.kvCache.any())
    t.keys = SequenceKeys::of(kb, cfg.kvCache, args.kvCache, c.batch, kvHead,
                              sz.kvHeads, sz.keyLength);
  return t;
}

/// The shared buffer: a workgroup attribution, or past 48 KiB a view of
/// dynamic shared memory.
static Value sharedBuffer(KernelBuilder &kb, const KernelConfig &cfg,
                          const SharedMemoryPlan &plan, gpu::GPUFuncOp kfn) {
  if (!plan.dynamic)
    return kfn.getWorkgroupAttributions()[0];
  MLIRContext *ctx = kb.b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(
      kb.b, kb.loc,
      MemRefType::get({ShapedType::kDynamic}, kb.b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  return memref::ViewOp::create(
      kb.b, kb.loc, plan.type(ctx, cfg.elementType), raw,
      arith::ConstantIndexOp::create(kb.b, kb.loc, 0), ValueRange{});
}

std::vector<KernelParam> mlir::fa::sm80::getKernelParams(MLIRContext *ctx,
                                                         const KernelConfig &cfg) {
  auto gTy = MemRefType::get({kGlobalExtent}, cfg.elementType);
  AttentionArgTypes types{gTy, gTy,
                          MemRefType::get({kGlobalExtent}, Float32Type::get(ctx)),
                          IntegerType::get(ctx, 32)};
  std::vector<KernelParam> params = getAttentionKernelParams(
      types, cfg.elementType.isF16() ? "f16" : "bf16",
      /*tensorMaps=*/false, cfg.hasLse);
  insertScoreModifierParams(params, cfg.modifiers);
  insertKVCacheParams(params, cfg.kvCache.kvLens, cfg.kvCache.pageSize,
                      MemRefType::get({kGlobalExtent}, IntegerType::get(ctx, 32)),
                      IntegerType::get(ctx, 32));
  return params;
}

gpu::GPUFuncOp mlir::fa::sm80::buildKernel(OpBuilder &b, Location loc,
                                           const KernelConfig &cfg,
                                           ArrayRef<KernelParam> params) {
  MLIRContext *ctx = b.getContext();
  Type elt = cfg.elementType;
  SharedMemoryPlan plan = SharedMemoryPlan::of(cfg);
  SmallVector<Type> inputs = getKernelArgumentTypes(params);

  OpBuilder::InsertionGuard topGuard(b);
  auto gpuMod = gpu::GPUModuleOp::create(b, loc, cfg.moduleName);
  b.setInsertionPointToStart(&gpuMod.getBodyRegion().front());
  auto kfn = gpu::GPUFuncOp::create(
      b, loc, cfg.kernelName, b.getFunctionType(inputs, {}),
      plan.dynamic ? TypeRange{} : TypeRange{plan.type(ctx, elt)});
  kfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kfn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(cfg.threads()), 1, 1}));
  b.setInsertionPointToStart(&kfn.getBody().front());
  KernelBuilder kb{b, loc};
  KernelArgs args = readKernelArgs(kb, cfg, kfn);
  Value smem = sharedBuffer(kb, cfg, plan, kfn);
  ThreadTile tile = threadTile(kb, cfg, args);
  // From here on Nk is the key count of the tile's sequence.
  if (cfg.kvCache.any())
    args.sizes.keyLength = tile.keys.length;
  AsyncCopyPipeline loads(kb, cfg, tile.tid);
  const ProblemSizes &sz = args.sizes;
  // Each lane's ldmatrix row as a shared byte address; fragments are
  // immediate offsets from it.
  Value lane = tile.lane;
  Value smemAddr = sharedAddress32(kb, smem);
  LaneAddresses lanes;
  lanes.rowBytes = plan.rowStride * 2;
  auto laneAddress = [&](Value row, Value col) {
    Value elems = kb.add(kb.mul(row, kb.idx(plan.rowStride)), col);
    return arith::AddIOp::create(b, loc, smemAddr,
                                 kb.toI32(kb.mul(elems, kb.idx(2))))
        .getResult();
  };
  lanes.q = laneAddress(kb.add(tile.warpRow, kb.rem(lane, 16)),
                        kb.mul(kb.div(lane, 16), kb.idx(8)));

  // The query tile into rows [0, block-q) of the buffer. With Q in
  // registers it is read once (A fragments, one per 16 columns of D) and
  // its rows are then reused by K and V; else it stays there and each
  // Q K^T reads its fragments.
  Value qTok = loads.loadTile(smem, 0, args.q, tile.qBase, tile.q0,
                              sz.queryLength, cfg.blockQ);
  loads.wait(qTok, 0);
  gpu::BarrierOp::create(b, loc);
  SmallVector<SmallVector<Value>> qFrag(cfg.mTiles());
  if (cfg.qInRegisters())
    for (int64_t mt = 0; mt < cfg.mTiles(); ++mt)
      for (int64_t kk = 0; kk < cfg.headDim / 16; ++kk)
        qFrag[mt].push_back(loadQFragment(kb, elt, lanes, mt, kk));

  // Key blocks to visit, as the tiled form's fa.kv_block_range computes
  // them (bottom-right diagonal Nk - Nq): [begin, end), of which blocks
  // outside [fullBegin, fullEnd) straddle a window edge.
  Value diag = kb.sub(sz.keyLength, sz.queryLength);
  Value qEnd = arith::MinSIOp::create(
      b, loc, kb.add(tile.q0, kb.idx(cfg.blockQ)), sz.queryLength);
  KVBlockRange range =
      computeKVBlockRange(b, loc, tile.q0, qEnd, sz.keyLength, diag,
                          cfg.blockKV, cfg.windowLeft, cfg.windowRight);
  // A bounded mask_mod skips the blocks it hides from every row of the tile.
  KernelScoreModifiers modifiers(kb, cfg.modifiers, args.modifierParams, sz,
                                 tile.batch, tile.head);
  if (modifiers.narrowsBlocks())
    std::tie(range.begin, range.end) = modifiers.narrowBlockRange(
        range.begin, range.end, tile.q0, modifiers.lastRow(tile.q0, cfg.blockQ),
        cfg.blockKV);
  Value kvStart = kb.mul(range.begin, kb.idx(cfg.blockKV));

  // Start streaming K_begin and V_begin (once the Q rows they may
  // overwrite are in registers).
  gpu::BarrierOp::create(b, loc);
  loads.loadKeyTile(smem, kb.idx(plan.kRow), args.k, tile.keys, tile.kBase,
                    kvStart, sz.keyLength, cfg.blockKV);
  loads.loadKeyTile(smem, kb.idx(plan.vRow), args.v, tile.keys, tile.kBase,
                    kvStart, sz.keyLength, cfg.blockKV);

  lanes.k = laneAddress(
      kb.add(kb.add(kb.mul(kb.div(lane, 16), kb.idx(8)), kb.rem(lane, 8)),
             kb.idx(plan.kRow)),
      kb.mul(kb.rem(kb.div(lane, 8), 2), kb.idx(8)));
  lanes.v =
      laneAddress(kb.add(kb.add(kb.mul(kb.rem(kb.div(lane, 8), 2), kb.idx(8)),
                                kb.rem(lane, 8)),
                         kb.idx(plan.vRow)),
                  kb.mul(kb.div(lane, 16), kb.idx(8)));

  // Rows of this thread's accumulators: g and g + 8 of each 16-row m-tile.
  SmallVector<std::array<Value, 2>> rows(cfg.mTiles()), rowDiag(cfg.mTiles());
  for (int64_t mt = 0; mt < cfg.mTiles(); ++mt) {
    Value r0 = kb.add(kb.add(kb.add(tile.q0, tile.warpRow), kb.idx(mt * 16)),
                      tile.group);
    rows[mt] = {r0, kb.add(r0, kb.idx(8))};
    if (!cfg.masksFromThreadId())
      for (int r = 0; r < 2; ++r)
        rowDiag[mt][r] = kb.add(rows[mt][r], diag); // the row's diagonal key
  }
  MainloopInputs in{args, tile, smem, lanes, qFrag, qTok, range, diag,
                    rows, rowDiag};
  ValueRange results = buildMainloop(kb, cfg, plan, loads, in);
  // Drain the prefetches of the step past the last one.
  loads.wait(qTok, 0);
  buildEpilogue(kb, cfg, plan, args, tile, smem, results, rows);
  gpu::ReturnOp::create(b, loc);
  return kfn;
}
