//===- Mainloop.cpp - the consumers' key/value loop of sm_90a -------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/Mainloop.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Masking.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Wgmma.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

//===----------------------------------------------------------------------===//
// ConsumerFrame
//===----------------------------------------------------------------------===//

ConsumerFrame ConsumerFrame::of(KernelBuilder &kb, const KernelConfig &cfg,
                                const ThreadIds &thread,
                                const SharedMemory &smem,
                                const TileState &tile, const KVRange &range,
                                Value qBuffer) {
  const SharedMemoryPlan &p = cfg.smem;
  ConsumerFrame f;
  f.thread = thread;
  Value wgi = thread.warpgroup;
  Value qTileOffset = kb.mul(wgi, kb.idx(cfg.subTiles * p.subTileQ / 16));
  if (qBuffer)
    qTileOffset = kb.add(qTileOffset, kb.mul(qBuffer, kb.idx(p.qBytes / 16)));
  f.qDescBase = arith::AddIOp::create(kb.b, kb.loc, smem.descBase,
                                      kb.toI64(qTileOffset));
  f.pDescBase = arith::AddIOp::create(
      kb.b, kb.loc, smem.descBase,
      kb.toI64(kb.mul(wgi, kb.idx(p.pBytesPerWarpgroup / 16))));
  f.rowInWG[0] = kb.add(kb.mul(thread.warp, kb.idx(16)), thread.group);
  f.rowInWG[1] = kb.add(f.rowInWG[0], kb.idx(8));
  f.wgRow0 = kb.add(tile.q0, kb.mul(wgi, kb.idx(kSM90RowsPerWarpgroup)));
  for (int r = 0; r < 2; ++r) {
    f.rowQ[r] = kb.add(f.wgRow0, f.rowInWG[r]);
    f.rowDiag[r] = kb.add(f.rowQ[r], range.diag);
  }
  f.pFlat = kb.add(kb.idx(p.pOffset / 2),
                   kb.mul(wgi, kb.idx(p.pBytesPerWarpgroup / 2)));
  f.oFlat = kb.add(kb.idx(p.oOffset / 2),
                   kb.mul(wgi, kb.idx(cfg.outSubTiles * p.subTileO / 2)));
  // O is staged in the tile's own Q buffer (the other holds the next Q).
  if (qBuffer && p.oInQTile())
    f.oFlat = kb.add(f.oFlat, kb.mul(qBuffer, kb.idx(p.qBytes / 2)));
  f.colPair = kb.mul(thread.quadLane, kb.idx(2));
  f.warpgroupBarrierId =
      kb.toI32(kb.add(wgi, kb.idx(cfg.namedBarriers().warpgroupBarrier(0))));
  return f;
}

void ConsumerFrame::syncWarpgroup(KernelBuilder &kb) const {
  NVVM::BarrierOp::create(kb.b, kb.loc, Type(), warpgroupBarrierId,
                          kb.i32c(kThreadsPerWarpgroup),
                          NVVM::BarrierReductionAttr(), Value());
}

Value ConsumerFrame::swizzledIndex(KernelBuilder &kb, Value base, Value row,
                                   int64_t col) const {
  int64_t sub = col / kSwizzleElems, chunk = (col % kSwizzleElems) / 8;
  // 128-byte swizzle: 16-byte chunk c of row r sits at chunk c ^ (r % 8).
  Value phys = arith::XOrIOp::create(kb.b, kb.loc, kb.idx(chunk), thread.group);
  return kb.add(
      kb.add(base, kb.idx(sub * kSM90RowsPerWarpgroup * kSwizzleElems)),
      kb.add(kb.mul(row, kb.idx(kSwizzleElems)),
             kb.add(kb.mul(phys, kb.idx(8)),
                    kb.add(colPair, kb.idx(col % 8)))));
}

//===----------------------------------------------------------------------===//
// ConsumerMainloop: pieces of a step
//===----------------------------------------------------------------------===//

ConsumerMainloop::ConsumerMainloop(KernelBuilder &kb, const KernelConfig &cfg,
                                   const TMALoadPipeline &loads,
                                   const SharedMemory &smem,
                                   const ConsumerFrame &frame,
                                   const KVRange &range, Value keyLength,
                                   const TileState &tile, Value isIssuer,
                                   const KernelScoreModifiers &modifiers,
                                   const FP8Descales *descales)
    : kb(kb), cfg(cfg), loads(loads), smem(smem), frame(frame), range(range),
      nk(keyLength), tile(tile), isIssuer(isIssuer), modifiers(modifiers),
      descales(descales) {
  MLIRContext *ctx = kb.b.getContext();
  // Modifiers that act on scaled scores have them scaled first: only
  // log2(e) is left for the exponent.
  softmaxCfg.scaleLog2e = modifiers.exponentScale(cfg.desc.scale);
  // fp8: the descales are part of the scale (per block: set per step).
  if (descales && !descales->perBlock())
    softmaxCfg.scaleLog2eValue = descales->base;
  softmaxCfg.scaleInExponent = cfg.fastSoftmax;
  softmaxCfg.maxReduction =
      cfg.fastSoftmax ? OnlineSoftmaxConfig::MaxReduction::Tree
                      : OnlineSoftmaxConfig::MaxReduction::SelectChain;
  softmaxCfg.exp2PolyEvery = cfg.exp2PolyEvery;
  sType = wgmmaAccumulatorType(ctx, cfg.blockKV);
  oType = wgmmaAccumulatorType(ctx, cfg.headDim);
  oInit = LLVM::ZeroOp::create(kb.b, kb.loc, oType);
  sUndef = LLVM::PoisonOp::create(kb.b, kb.loc, sType);
  Value wgi = frame.thread.warpgroup;
  negInf = kb.f32(-std::numeric_limits<double>::infinity());
  // A turn barrier joins the warpgroup whose turn it is (sync) and the one
  // before it (arrive): the turn goes round the warpgroups in order.
  int64_t turnBase = cfg.namedBarriers().turnBarrier(0);
  turnThreads = kb.i32c(2 * kThreadsPerWarpgroup);
  myTurn = kb.toI32(kb.add(wgi, kb.idx(turnBase)));
  otherTurn =
      kb.toI32(kb.add(kb.rem(kb.add(wgi, kb.idx(1)), cfg.consumerWarpgroups),
                      kb.idx(turnBase)));
}

Value ConsumerMainloop::issueS(Value stageDesc) const {
  const SharedMemoryPlan &p = cfg.smem;
  Value s = sUndef;
  for (int64_t kk = 0; kk < cfg.headDim / wgmmaK(cfg.elementType()); ++kk) {
    // k-step kk: 32 bytes into 128-byte sub-tile kk / 4 (64-byte rows: kk
    // is 0 or 1).
    int64_t inner = kk / 4, k32 = (kk % 4) * 32;
    Value da, db;
    if (cfg.qkSwizzle64()) {
      // fp8 at head dim 64: 64-byte rows, k-steps at 0 and 32 bytes.
      da = wgmmaDescriptor(kb, frame.qDescBase, p.qOffset + k32, 16,
                           WgmmaDescriptor::k64B);
      db = wgmmaDescriptor(kb, stageDesc, p.kOffset + k32, 16,
                           WgmmaDescriptor::k64B);
    } else {
      da = wgmmaDescriptor128B(kb, frame.qDescBase,
                               p.qOffset + inner * p.subTileQ + k32, 16);
      db = wgmmaDescriptor128B(kb, stageDesc,
                               p.kOffset + inner * p.subTileKV + k32, 16);
    }
    s = wgmmaSS(kb, cfg.elementType(), s, da, db, cfg.blockKV, kk == 0,
                /*transposeB=*/false);
  }
  return s;
}

Value ConsumerMainloop::issuePVShared(Value acc, Value stageDesc) const {
  const SharedMemoryPlan &p = cfg.smem;
  for (int64_t kc = 0; kc < cfg.blockKV / 16; ++kc) {
    Value da = wgmmaDescriptor128B(
        kb, frame.pDescBase,
        p.pOffset + (kc / 4) * p.subTileQ + (kc % 4) * 32, 16);
    Value dv = wgmmaDescriptor128B(
        kb, stageDesc, p.vOffset + kc * 16 * kSwizzleElems * 2, p.subTileKV);
    acc = wgmmaSS(kb, cfg.elementType(), acc, da, dv, cfg.headDim, false,
                  /*transposeB=*/true);
  }
  return acc;
}

Value ConsumerMainloop::issuePVRegisters(Value acc, ArrayRef<Value> pRegs,
                                         Value stageDesc) const {
  const SharedMemoryPlan &p = cfg.smem;
  if (cfg.fp8) {
    // V^T [D rows x 128 keys] sub-tiles, K-major like K in the S GEMM:
    // k-step kc is 32 keys (bytes) into every row of sub-tile kc / 4.
    for (int64_t kc = 0; kc < cfg.blockKV / 32; ++kc) {
      Value dv = wgmmaDescriptor128B(
          kb, stageDesc,
          p.vOffset + (kc / 4) * cfg.headDim * kSwizzleRowBytes + (kc % 4) * 32,
          16);
      acc = wgmmaRS(kb, cfg.elementType(), acc, pRegs.slice(4 * kc, 4), dv,
                    cfg.headDim);
    }
    return acc;
  }
  for (int64_t kc = 0; kc < cfg.blockKV / 16; ++kc) {
    Value dv = wgmmaDescriptor128B(
        kb, stageDesc, p.vOffset + kc * 16 * kSwizzleElems * 2, p.subTileKV);
    acc = wgmmaRS(kb, cfg.elementType(), acc, pRegs.slice(4 * kc, 4), dv,
                  cfg.headDim);
  }
  return acc;
}

/// This thread's scores of block j per row (row 0's, then row 1's): column
/// colBase + 8n + c of row r is accumulator 4n + 2r + c; masked ones -inf.
SmallVector<Value> ConsumerMainloop::maskedScores(
    Value s, Value colBase, bool masked, const OnlineSoftmaxConfig &stepCfg,
    const KernelScoreModifiers::Row *biasedRows) const {
  const SM90AttentionDesc &d = cfg.desc;
  RowBand band[2];
  if (masked)
    for (int r = 0; r < 2; ++r)
      band[r] = rowBand(kb, frame.rowDiag[r], colBase, nk, d.windowLeft,
                        d.windowRight);
  KernelScoreModifiers::Row rows[2];
  if (!modifiers.empty())
    for (int r = 0; r < 2; ++r)
      rows[r] = biasedRows ? biasedRows[r] : modifiers.row(frame.rowQ[r]);
  SmallVector<Value> out[2];
  for (int64_t n = 0; n < cfg.blockKV / 8; ++n)
    for (int64_t c = 0; c < 2; ++c)
      for (int r = 0; r < 2; ++r) {
        Value v = kb.extract(s, 4 * n + 2 * r + c);
        if (!modifiers.empty())
          v = modifiers.apply(v, cfg.desc.scale, rows[r],
                              kb.add(colBase, kb.idx(n * 8 + c)), masked);
        v = scaleScore(kb, stepCfg, v);
        if (masked)
          v = arith::SelectOp::create(kb.b, kb.loc,
                                      inBand(kb, band[r], n * 8 + c), v, negInf);
        out[r].push_back(v);
      }
  SmallVector<Value> flat(out[0]);
  flat.append(out[1]);
  return flat;
}

ConsumerMainloop::SoftmaxStep
ConsumerMainloop::softmax(Value s, Value j, Value max[2], Value sum[2]) const {
  const SM90AttentionDesc &d = cfg.desc;
  int64_t kBN = cfg.blockKV, perRow = kBN / 4;
  Value kv0 = kb.mul(j, kb.idx(kBN));
  Value kvNext = kb.add(kv0, kb.idx(kBN));
  Value colBase = kb.add(kv0, frame.colPair);
  // Masked: the block crossing Nk (TMA zero-filled its tail) and the blocks
  // a window edge crosses; the others skip the compares.
  Value needMask = blockNeedsMask(kb, j, kvNext, nk, range.fullBegin,
                                  range.fullEnd, d.windowLeft, d.windowRight);
  // A bounded mask_mod: blocks it shows wholly to the tile's rows skip it.
  if (modifiers.classifiesBlocks()) {
    // Recorded by the range's scan at tile start, or classified here.
    Value all = range.fullBlocks.words
                    ? modifiers.isFullBlock(range.fullBlocks, j)
                    : modifiers
                          .blockVisibility(
                              tile.q0, modifiers.lastRow(tile.q0, cfg.blockQ),
                              kv0, modifiers.blockKeyHi(j, kBN),
                              /*warpUniform=*/true)
                          .all;
    needMask = arith::OrIOp::create(
        kb.b, kb.loc, needMask,
        arith::XOrIOp::create(kb.b, kb.loc, all,
                              arith::ConstantOp::create(
                                  kb.b, kb.loc, kb.b.getBoolAttr(true))));
  }
  // fp8 with per-block descales: this block's k descale in the scale.
  OnlineSoftmaxConfig stepCfg = softmaxCfg;
  if (descales && descales->perBlock())
    stepCfg.scaleLog2eValue = descales->scoreScale(kb, j);
  // A score_mod's bias split per row (splitsBias): the rows' part once per
  // step, beside both branches, and added by the softmax below.
  KernelScoreModifiers::Row biasedRows[2];
  Value bias[2];
  bool splitBias = modifiers.splitsBias(d.scale);
  if (splitBias)
    for (int r = 0; r < 2; ++r)
      biasedRows[r] = modifiers.biasedRow(frame.rowQ[r], colBase, d.scale);
  auto maskIf = scf::IfOp::create(
      kb.b, kb.loc, SmallVector<Type>(2 * perRow, kb.b.getF32Type()), needMask,
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(&maskIf.getThenRegion().front());
    const KernelScoreModifiers::Row *rows = splitBias ? biasedRows : nullptr;
    scf::YieldOp::create(kb.b, kb.loc,
                         maskedScores(s, colBase, true, stepCfg, rows));
    kb.b.setInsertionPointToStart(&maskIf.getElseRegion().front());
    scf::YieldOp::create(kb.b, kb.loc,
                         maskedScores(s, colBase, false, stepCfg, rows));
  }
  SoftmaxStep o;
  for (int64_t i = 0; i < perRow; ++i) {
    o.p[0].push_back(maskIf.getResult(i));
    o.p[1].push_back(maskIf.getResult(perRow + i));
  }
  // The rows' bias evaluated again here, after the scores, so that it is
  // not live while they are formed (the first evaluation's is dead: there
  // only the per-column step is used).
  if (splitBias)
    for (int r = 0; r < 2; ++r)
      bias[r] = modifiers.exponentBias(
          modifiers.biasedRow(frame.rowQ[r], colBase, d.scale));
  Value vRescale = descales ? descales->vRescale(kb, j, range.begin) : Value();
  if (cfg.rescalesConditionally())
    conditionalRescale(o, max, sum, stepCfg, bias);
  for (int r = 0; r < 2; ++r) {
    if (!cfg.rescalesConditionally()) {
      OnlineRowUpdate u =
          updateOnlineSoftmaxRow(kb, stepCfg, o.p[r], max[r], sum[r], bias[r]);
      o.newMax[r] = u.newMax;
      o.newSum[r] = u.newSum;
      o.alpha[r] = u.alpha;
    }
    o.accAlpha[r] =
        vRescale ? arith::MulFOp::create(kb.b, kb.loc, o.alpha[r], vRescale)
                 : o.alpha[r];
  }
  return o;
}

/// The step's softmax with conditional rescaling: the rows' maxima move only
/// when one of the warp's rows asks (stepMax > max + threshold); otherwise
/// max and sum stay and alpha is 1.
void ConsumerMainloop::conditionalRescale(SoftmaxStep &o, Value max[2],
                                          Value sum[2],
                                          const OnlineSoftmaxConfig &stepCfg,
                                          const Value bias[2]) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  SmallVector<Value> stepMax;
  o.rescaled = voteRescale(kb, stepCfg, o.p, {max[0], max[1]},
                           cfg.rescaleThreshold, stepMax, {bias[0], bias[1]});
  auto moved = scf::IfOp::create(b, loc, SmallVector<Type>(6, b.getF32Type()),
                                 o.rescaled,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&moved.getThenRegion().front());
    SmallVector<Value> then;
    for (int r = 0; r < 2; ++r) {
      OnlineRowUpdate u = rescaleRow(kb, stepCfg, max[r], stepMax[r], sum[r]);
      then.append({u.newMax, u.alpha, u.newSum});
    }
    scf::YieldOp::create(b, loc, then);
    b.setInsertionPointToStart(&moved.getElseRegion().front());
    Value one = kb.f32(1.0);
    scf::YieldOp::create(b, loc,
                         ValueRange{max[0], one, sum[0], max[1], one, sum[1]});
  }
  for (int r = 0; r < 2; ++r) {
    o.newMax[r] = moved.getResult(3 * r);
    o.alpha[r] = moved.getResult(3 * r + 1);
    Value rowSum = exponentiateRow(
        kb, stepCfg, o.p[r],
        exponentMax(kb, safeRowMax(b, loc, o.newMax[r]), bias[r]));
    o.newSum[r] =
        arith::AddFOp::create(b, loc, moved.getResult(3 * r + 2), rowSum);
  }
}

/// P to shared memory (this warpgroup's [64 x BN] tile, 128-byte swizzle),
/// made visible to the async proxy.
void ConsumerMainloop::writeP(const SoftmaxStep &o) const {
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType());
  for (int64_t n = 0; n < cfg.blockKV / 8; ++n)
    for (int r = 0; r < 2; ++r) {
      Value pair = vector::FromElementsOp::create(
          kb.b, kb.loc, v2f32, ValueRange{o.p[r][2 * n], o.p[r][2 * n + 1]});
      Value h = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
      vector::StoreOp::create(
          kb.b, kb.loc, h, smem.flat,
          ValueRange{frame.swizzledIndex(kb, frame.pFlat, frame.rowInWG[r],
                                         n * 8)},
          false, llvm::MaybeAlign(4));
    }
  NVVM::FenceProxyOp::create(
      kb.b, kb.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// P as the A operand of the register-A wgmma: per 16-key step kc, 4 x b32
/// = (row g, keys 16kc+2t..+1), (row g+8, same), (row g, keys 16kc+8+2t..+1),
/// (row g+8, same), i.e. the S accumulator fragment, converted in pairs.
SmallVector<Value> ConsumerMainloop::packP(const SoftmaxStep &o) const {
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType());
  SmallVector<Value> regs;
  for (int64_t kc = 0; kc < cfg.blockKV / 16; ++kc)
    for (int64_t h = 0; h < 2; ++h)
      for (int r = 0; r < 2; ++r) {
        int64_t c = 4 * kc + 2 * h;
        Value pair = vector::FromElementsOp::create(
            kb.b, kb.loc, v2f32, ValueRange{o.p[r][c], o.p[r][c + 1]});
        Value hv = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
        regs.push_back(
            LLVM::BitcastOp::create(kb.b, kb.loc, kb.b.getI32Type(), hv));
      }
  return regs;
}

/// fp8: P as the A operand of the e4m3 register-A wgmma: per 32-key step
/// kc, 4 x b32 of four e4m3 = (row g, A columns 4t..4t+3), (row g+8, same),
/// (row g, 16+4t..16+4t+3), (row g+8, same). A column c is key
/// kFP8VKeyOrder[c] (V^T is stored in that order), so that A columns 4t..4t+3
/// are this thread's S accumulator columns 2t, 2t+1, 8+2t, 9+2t: the values
/// are packed as they lie, with cvt.rn.satfinite (RNE, saturating to 448).
SmallVector<Value> ConsumerMainloop::packPFP8(const SoftmaxStep &o) const {
  static_assert(kFP8VKeyOrder[4] == 2 && kFP8VKeyOrder[2] == 8 &&
                    kFP8VKeyOrder[16] == 16,
                "packPFP8 packs the S fragment in kFP8VKeyOrder");
  SmallVector<Value> regs;
  Type i32 = kb.b.getI32Type();
  // cvt.rn.satfinite.e4m3x2.f32 d, a, b puts a in d's upper byte, b in its
  // lower: x0 is the lowest byte (A column 4t).
  const char *ptx = "{\n.reg .b16 lo, hi;\n"
                    "cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1;\n"
                    "cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3;\n"
                    "mov.b32 $0, {lo, hi};\n}";
  for (int64_t kc = 0; kc < cfg.blockKV / 32; ++kc)
    for (int64_t h = 0; h < 2; ++h)
      for (int r = 0; r < 2; ++r) {
        int64_t c = 8 * kc + 4 * h;
        SmallVector<Value> x = {o.p[r][c], o.p[r][c + 1], o.p[r][c + 2],
                                o.p[r][c + 3]};
        regs.push_back(emitInlinePTX(kb, i32, x, ptx, "=r,f,f,f,f"));
      }
  return regs;
}

int64_t ConsumerMainloop::numPRegisters() const {
  if (!cfg.pFromRegisters)
    return 0;
  // Two rows' blockKV probabilities, 2 (16-bit) or 4 (fp8) per register.
  return cfg.fp8 ? cfg.blockKV / 8 : cfg.blockKV / 4;
}

Value ConsumerMainloop::rescale(Value acc, const Value alpha[2]) const {
  // Accumulator i holds row (i % 4) / 2 of the thread's two.
  for (int64_t i = 0; i < cfg.headDim / 2; ++i) {
    int r = (i % 4) / 2;
    acc = kb.insert(
        acc, arith::MulFOp::create(kb.b, kb.loc, kb.extract(acc, i), alpha[r]),
        i);
  }
  return acc;
}

Value ConsumerMainloop::rescaleStep(Value acc, const SoftmaxStep &o) const {
  if (!o.rescaled)
    return rescale(acc, o.accAlpha);
  auto ifOp = scf::IfOp::create(kb.b, kb.loc, TypeRange{acc.getType()},
                                o.rescaled, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(kb.b);
  kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(kb.b, kb.loc, rescale(acc, o.accAlpha));
  kb.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(kb.b, kb.loc, acc);
  return ifOp.getResult(0);
}

void ConsumerMainloop::commitAndWait(int64_t pending) const {
  NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, kb.loc);
  NVVM::WgmmaWaitGroupSyncOp::create(kb.b, kb.loc, pending);
}

/// Ping-pong: warpgroup w waits for its turn (named barrier 3 + w) before
/// issuing its GEMMs ...
void ConsumerMainloop::turnSync() const {
  if (!cfg.pingPong)
    return;
  NVVM::BarrierOp::create(kb.b, kb.loc, Type(), myTurn, turnThreads,
                          NVVM::BarrierReductionAttr(), Value());
}

/// ... and hands the turn over after issuing them. The last warpgroup does
/// not hand over after its last block, so that every sync has exactly one
/// matching arrive.
void ConsumerMainloop::turnPass(Value j) const {
  if (!cfg.pingPong)
    return;
  Value last = kb.cmp(arith::CmpIPredicate::eq, j,
                      kb.sub(range.end, kb.idx(1)));
  Value isLastWG = kb.cmp(arith::CmpIPredicate::eq, frame.thread.warpgroup,
                          kb.idx(cfg.consumerWarpgroups - 1));
  Value skip = arith::AndIOp::create(kb.b, kb.loc, last, isLastWG);
  Value doIt = arith::XOrIOp::create(
      kb.b, kb.loc, skip,
      arith::ConstantOp::create(kb.b, kb.loc, kb.b.getBoolAttr(true)));
  kb.ifThen(doIt, [&] {
    NVVM::BarrierArriveOp::create(kb.b, kb.loc, otherTurn, turnThreads);
  });
}

SmallVector<Value> ConsumerMainloop::carry(const SoftmaxStep &o,
                                           Value acc) const {
  SmallVector<Value> out = {o.newMax[0], o.newMax[1], o.newSum[0],
                            o.newSum[1], acc};
  if (cfg.pFromRegisters) {
    out.append(cfg.fp8 ? packPFP8(o) : packP(o));
    if (cfg.rescaleBeforePV)
      out.append({o.accAlpha[0], o.accAlpha[1]});
  } else {
    writeP(o);
    frame.syncWarpgroup(kb);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// ConsumerMainloop: the schedules
//===----------------------------------------------------------------------===//

MainloopResult ConsumerMainloop::build() {
  SmallVector<Value> init = {negInf, negInf, kb.f32(0.0), kb.f32(0.0), oInit};
  return cfg.overlap ? buildPipelined(init) : buildSerial(init);
}

static MainloopResult resultOf(ValueRange v) {
  MainloopResult r;
  r.max[0] = v[0];
  r.max[1] = v[1];
  r.sum[0] = v[2];
  r.sum[1] = v[3];
  r.acc = v[4];
  return r;
}

/// One block per step: S, softmax, P V, each GEMM waited at once.
MainloopResult ConsumerMainloop::buildSerial(ArrayRef<Value> init) {
  auto loop = scf::ForOp::create(kb.b, kb.loc, range.begin, range.end,
                                 kb.idx(1), init);
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  auto iter = loop.getRegionIterArgs();
  Value m[2] = {iter[0], iter[1]}, l[2] = {iter[2], iter[3]};
  Value acc = iter[4];
  Value lane = frame.thread.lane;
  Value it = range.iterOf(kb, j);
  Value stage = loads.stageOf(it), parity = loads.fullParity(it);
  Value kDescS = stageDesc(stage);
  loads.wait(loads.kFullSlot(stage), parity);
  NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  Value s = issueS(kDescS);
  commitAndWait(0);
  SoftmaxStep o = softmax(s, j, m, l);
  SmallVector<Value> pRegs;
  if (cfg.pFromRegisters) {
    pRegs = cfg.fp8 ? packPFP8(o) : packP(o);
    acc = rescaleStep(acc, o);
  } else {
    writeP(o);
    acc = rescaleStep(acc, o); // while the other threads finish writing P
    frame.syncWarpgroup(kb);
  }
  loads.wait(loads.vFullSlot(stage), parity);
  zeroValueRowsPastLength(stage, j);
  NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  acc = cfg.pFromRegisters ? issuePVRegisters(acc, pRegs, kDescS)
                           : issuePVShared(acc, kDescS);
  commitAndWait(0);
  if (cfg.pFromRegisters)
    keepRegistersLive(kb, pRegs);
  if (cfg.warpSpecialized) {
    loads.releaseKey(stage, lane);
    loads.releaseStage(stage, lane);
  } else {
    // Everyone is done with this stage (and with P): thread 0 refills it.
    gpu::BarrierOp::create(kb.b, kb.loc);
    Value nextBlock = kb.add(j, kb.idx(cfg.stages));
    kb.ifThen(arith::AndIOp::create(
                  kb.b, kb.loc, isIssuer,
                  kb.cmp(arith::CmpIPredicate::slt, nextBlock, range.end)),
              [&] { loads.issueKV(smem, nextBlock, stage, tile); });
  }
  scf::YieldOp::create(kb.b, kb.loc,
                       ValueRange{o.newMax[0], o.newMax[1], o.newSum[0],
                                  o.newSum[1], acc});
  return resultOf(loop.getResults());
}

/// Software pipelined (FlashAttention-3): step j issues S_j and
/// O += P_{j-1} V_{j-1} together and runs the softmax of S_j while P V is
/// on the tensor cores; with ping-pong one warpgroup's softmax runs under
/// the other's GEMMs.
MainloopResult ConsumerMainloop::buildPipelined(ArrayRef<Value> init) {
  Value wgi = frame.thread.warpgroup, lane = frame.thread.lane;
  Value any = kb.cmp(arith::CmpIPredicate::sgt, range.end, range.begin);
  if (cfg.pingPong)
    kb.ifThen(arith::AndIOp::create(kb.b, kb.loc, any,
                                    kb.cmp(arith::CmpIPredicate::eq, wgi,
                                           kb.idx(cfg.consumerWarpgroups - 1))),
              [&] {
                NVVM::BarrierArriveOp::create(kb.b, kb.loc, otherTurn,
                                              turnThreads);
              });
  auto top = scf::IfOp::create(kb.b, kb.loc, TypeRange(ValueRange(init)), any,
                               /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g0(kb.b);
  kb.b.setInsertionPointToStart(&top.getElseRegion().front());
  scf::YieldOp::create(kb.b, kb.loc, init);
  kb.b.setInsertionPointToStart(&top.getThenRegion().front());
  // Block begin (iteration 0, stage 0; persistent: iteration base): S and
  // its softmax.
  Value stage0 = range.base ? loads.stageOf(range.base) : kb.idx(0);
  Value kDesc0 = stageDesc(stage0);
  loads.wait(loads.kFullSlot(stage0),
             loads.fullParity(range.base ? range.base : stage0));
  turnSync();
  NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  Value s0 = issueS(kDesc0);
  NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, kb.loc);
  turnPass(range.begin);
  NVVM::WgmmaWaitGroupSyncOp::create(kb.b, kb.loc, 0);
  loads.releaseKey(stage0, lane);
  Value m0[2] = {init[0], init[1]}, l0[2] = {init[2], init[3]};
  SoftmaxStep o0 = softmax(s0, range.begin, m0, l0);
  // What a step hands to the next: m, l, O and, with P in registers, P_j
  // (then, with rescale-before-pv, the two alphas of block j) as
  // loop-carried values; otherwise P_j goes to shared memory.
  SmallVector<Value> init1 = carry(o0, oInit);
  auto loop = scf::ForOp::create(kb.b, kb.loc, range.blockAt(kb, 1), range.end,
                                 kb.idx(1), init1);
  buildPipelinedStep(loop);
  // The last block's P V.
  Value jl = kb.sub(range.end, kb.idx(1));
  Value itl = range.iterOf(kb, jl);
  Value lastStage = loads.stageOf(itl);
  loads.wait(loads.vFullSlot(lastStage), loads.fullParity(itl));
  // Only the range's last block can hold keys past the sequence's count.
  zeroValueRowsPastLength(lastStage, jl);
  int64_t nP = numPRegisters();
  SmallVector<Value> pLast(loop.getResults().begin() + 5,
                           loop.getResults().begin() + 5 + nP);
  Value accIn = loop.getResult(4);
  if (cfg.rescaleBeforePV) {
    Value alphaLast[2] = {loop.getResult(5 + nP), loop.getResult(6 + nP)};
    accIn = rescale(accIn, alphaLast);
  }
  NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  Value acc = cfg.pFromRegisters
                  ? issuePVRegisters(accIn, pLast, stageDesc(lastStage))
                  : issuePVShared(accIn, stageDesc(lastStage));
  commitAndWait(0);
  if (cfg.pFromRegisters)
    keepRegistersLive(kb, pLast);
  loads.releaseStage(lastStage, lane);
  scf::YieldOp::create(kb.b, kb.loc,
                       ValueRange{loop.getResult(0), loop.getResult(1),
                                  loop.getResult(2), loop.getResult(3), acc});
  return resultOf(top.getResults());
}

/// The rows of a sequence's last V block past its key count belong to no key
/// of it (stale cache rows, another sequence's page, possibly NaN): their P
/// is 0, but 0 * NaN is NaN. TMA zero-fills only past the tensor's end, so
/// the warpgroup zeroes them in the stage itself (whole 128-byte rows: the
/// swizzle only permutes chunks within a row) and fences its generic writes
/// before the wgmma (async proxy) reads. The other warpgroup writes the same
/// zeros.
void ConsumerMainloop::zeroValueRowsPastLength(Value stage,
                                               Value block) const {
  if (!cfg.desc.kvCache.any())
    return;
  const SharedMemoryPlan &p = cfg.smem;
  Value first = kb.sub(nk, kb.mul(block, kb.idx(cfg.blockKV)));
  kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, first, kb.idx(cfg.blockKV)), [&] {
    int64_t chunksPerRow = p.rowBytes / 16;
    int64_t perSubTile = cfg.blockKV * chunksPerRow;
    Value base = kb.add(kb.idx(p.vOffset), kb.mul(stage, kb.idx(p.stageBytes)));
    auto chunkTy = VectorType::get({8}, cfg.outputType());
    Value zero = arith::ConstantOp::create(
        kb.b, kb.loc, chunkTy,
        DenseElementsAttr::get(chunkTy, kb.b.getZeroAttr(cfg.outputType())));
    for (int64_t i = 0; i < perSubTile * cfg.subTiles / kThreadsPerWarpgroup;
         ++i) {
      Value c = kb.add(frame.thread.threadInWG,
                       kb.idx(i * kThreadsPerWarpgroup));
      Value sub = kb.div(c, perSubTile), inSub = kb.rem(c, perSubTile);
      Value row = kb.div(inSub, chunksPerRow);
      Value chunk = kb.rem(inSub, chunksPerRow);
      kb.ifThen(kb.cmp(arith::CmpIPredicate::sge, row, first), [&] {
        Value byte = kb.add(
            base, kb.add(kb.mul(sub, kb.idx(p.subTileKV)),
                         kb.add(kb.mul(row, kb.idx(p.rowBytes)),
                                kb.mul(chunk, kb.idx(16)))));
        vector::StoreOp::create(kb.b, kb.loc, zero, smem.flat,
                                ValueRange{kb.div(byte, 2)});
      });
    }
    NVVM::FenceProxyOp::create(
        kb.b, kb.loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    frame.syncWarpgroup(kb);
  });
}

void ConsumerMainloop::buildPipelinedStep(scf::ForOp loop) {
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(loop.getBody());
  Value lane = frame.thread.lane;
  Value j = loop.getInductionVar();
  auto iter = loop.getRegionIterArgs();
  Value m[2] = {iter[0], iter[1]}, l[2] = {iter[2], iter[3]};
  Value acc = iter[4];
  Value jp = kb.sub(j, kb.idx(1));
  Value it = range.iterOf(kb, j), itp = range.iterOf(kb, jp);
  Value stage = loads.stageOf(it), prevStage = loads.stageOf(itp);
  loads.wait(loads.kFullSlot(stage), loads.fullParity(it));
  loads.wait(loads.vFullSlot(prevStage), loads.fullParity(itp));
  turnSync();
  NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  Value s = issueS(stageDesc(stage));
  NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, kb.loc);
  int64_t nP = numPRegisters();
  SmallVector<Value> pPrev(iter.begin() + 5, iter.begin() + 5 + nP);
  if (cfg.rescaleBeforePV) {
    // O *= alpha_{j-1} while S_j is on the tensor cores (FA3's place),
    // instead of after P_{j-1} V_{j-1} completes.
    Value alphaPrev[2] = {iter[5 + nP], iter[6 + nP]};
    acc = rescale(acc, alphaPrev);
    NVVM::WgmmaFenceAlignedOp::create(kb.b, kb.loc);
  }
  acc = cfg.pFromRegisters
            ? issuePVRegisters(acc, pPrev, stageDesc(prevStage))
            : issuePVShared(acc, stageDesc(prevStage));
  NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, kb.loc);
  turnPass(j);
  NVVM::WgmmaWaitGroupSyncOp::create(kb.b, kb.loc, 1); // S_j done
  loads.releaseKey(stage, lane);
  SoftmaxStep o = softmax(s, j, m, l);
  NVVM::WgmmaWaitGroupSyncOp::create(kb.b, kb.loc, 0); // P_{j-1} V_{j-1} done
  if (cfg.pFromRegisters)
    keepRegistersLive(kb, pPrev);
  loads.releaseStage(prevStage, lane);
  if (!cfg.rescaleBeforePV)
    acc = rescaleStep(acc, o);
  scf::YieldOp::create(kb.b, kb.loc, carry(o, acc));
}
