//===- Mainloop.cpp - the key/value loop of the sm_80 kernel --------------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/Mainloop.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Masking.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm80;

Value mlir::fa::sm80::mmaSync(KernelBuilder &kb, Type elt, Value a,
                              Value bFrag, Value c) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  if (elt.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                    ArrayRef<int64_t>{16, 8, 16});
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto regs = [&](Value frag, int64_t n) {
    SmallVector<Value> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(LLVM::BitcastOp::create(
          b, loc, i32,
          vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i})));
    return out;
  };
  SmallVector<Value> cRegs;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t col = 0; col < 2; ++col)
      cRegs.push_back(
          vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{r, col}));
  auto resTy =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, resTy, regs(a, 4), regs(bFrag, 2), cRegs,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                    NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  Value out = c;
  for (int64_t i = 0; i < 4; ++i)
    out = vector::InsertOp::create(b, loc,
                                   LLVM::ExtractValueOp::create(b, loc, d, i),
                                   out, ArrayRef<int64_t>{i / 2, i % 2});
  return out;
}

static VectorType fragmentType(Type elt) {
  return VectorType::get({4, 2}, elt);
}

Value mlir::fa::sm80::loadQFragment(KernelBuilder &kb, Type elt,
                                    const LaneAddresses &lanes, int64_t mt,
                                    int64_t kk) {
  return ldmatrixX4(kb, elt, lanes.q, lanes.offset(mt * 16, kk * 16),
                    /*transpose=*/false);
}

namespace {
/// One step of the loop (block j), as a builder with its inputs fixed.
struct Step {
  KernelBuilder &kb;
  const KernelConfig &cfg;
  const SharedMemoryPlan &plan;
  const AsyncCopyPipeline &loads;
  const MainloopInputs &in;
  const KernelScoreModifiers &modifiers;
  OnlineSoftmaxConfig softmax;

  using Fragments = SmallVector<SmallVector<Value>>; // [m-tile][n]

  /// S = Q K^T: per m-tile 16 rows x block-kv keys, block-kv / 8 n-tiles of
  /// m16n8; each K fragment feeds every m-tile.
  Fragments issueQK(Value zeroAcc) const;
  /// The diagonal key (i32) of row r of m-tile mt from `tid` (%tid.x, i32,
  /// read again where the masks need it; KernelConfig::masksFromThreadId).
  Value rowDiagonal(Value tid, int64_t mt, int r) const;
  /// The scores of every m-tile (row 0's then row 1's per m-tile), scaled
  /// for the softmax and masked when `masked`.
  SmallVector<Value> scores(const Fragments &s, Value colBase,
                            bool masked) const;
  /// O += P V for every m-tile.
  void issuePV(const Fragments &pFrag, Fragments &acc) const;
  /// The online softmax of the step: `p` (row 2 mt + r: this thread's
  /// scores of row r of m-tile mt) become probabilities, `acc` is rescaled,
  /// newM / newL are the running max and sum after the step; returns P as
  /// the A fragments of P V (straight from the S fragments).
  Fragments
  softmaxRescaleEveryStep(MutableArrayRef<SmallVector<Value>> p,
                          ArrayRef<std::array<Value, 2>> m,
                          ArrayRef<std::array<Value, 2>> l, Fragments &acc,
                          MutableArrayRef<std::array<Value, 2>> newM,
                          MutableArrayRef<std::array<Value, 2>> newL) const;
  Fragments
  softmaxConditionalRescale(MutableArrayRef<SmallVector<Value>> p,
                            ArrayRef<std::array<Value, 2>> m,
                            ArrayRef<std::array<Value, 2>> l, Fragments &acc,
                            MutableArrayRef<std::array<Value, 2>> newM,
                            MutableArrayRef<std::array<Value, 2>> newL) const;
  void build(scf::ForOp loop, Value zeroAcc) const;
};
} // namespace

Step::Fragments Step::issueQK(Value zeroAcc) const {
  int64_t mTiles = cfg.mTiles();
  Type elt = cfg.elementType;
  Fragments s(mTiles, SmallVector<Value>(cfg.blockKV / 8, zeroAcc));
  for (int64_t kk = 0; kk < cfg.headDim / 16; ++kk) {
    SmallVector<Value> qk(mTiles);
    for (int64_t mt = 0; mt < mTiles; ++mt)
      qk[mt] = cfg.qInRegisters() ? in.qFragments[mt][kk]
                                  : loadQFragment(kb, elt, in.lanes, mt, kk);
    for (int64_t np = 0; np < cfg.blockKV / 16; ++np) {
      Value kf =
          ldmatrixX4(kb, elt, in.lanes.k, in.lanes.offset(np * 16, kk * 16),
                     /*transpose=*/false);
      for (int64_t half = 0; half < 2; ++half) {
        Value bf = vector::ExtractStridedSliceOp::create(
            kb.b, kb.loc, kf, ArrayRef<int64_t>{2 * half, 0},
            ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1});
        for (int64_t mt = 0; mt < mTiles; ++mt)
          s[mt][2 * np + half] = mmaSync(kb, elt, qk[mt], bf,
                                         s[mt][2 * np + half]);
      }
    }
  }
  return s;
}

Value Step::rowDiagonal(Value tid, int64_t mt, int r) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value warp = arith::ShRUIOp::create(b, loc, tid, kb.i32c(5));
  Value group = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, tid, kb.i32c(31)), kb.i32c(2));
  Value firstRow = kb.toI32(kb.add(in.tile.q0, in.diag)); // uniform
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, warp, kb.i32c(cfg.rowsPerWarp)),
      group);
  return arith::AddIOp::create(
      b, loc, firstRow,
      arith::AddIOp::create(b, loc, row, kb.i32c(mt * 16 + 8 * r)));
}

SmallVector<Value> Step::scores(const Fragments &s, Value colBase,
                                bool masked) const {
  Value ninf = kb.f32(-std::numeric_limits<double>::infinity());
  // The masks' rows from %tid.x read again (i32), or kept (index).
  Value tid = masked && cfg.masksFromThreadId() ? kb.toI32(opaqueThreadIdX(kb))
                                                : Value();
  SmallVector<Value> flat;
  for (int64_t mt = 0; mt < cfg.mTiles(); ++mt) {
    // Column kv0 + 2t + o (o = n*8 + c) of row r: the row's band.
    RowBand band[2];
    if (masked && cfg.masksFromThreadId())
      for (int r = 0; r < 2; ++r)
        band[r] = rowBand(kb, rowDiagonal(tid, mt, r), kb.toI32(colBase),
                          kb.toI32(in.args.sizes.keyLength), cfg.windowLeft,
                          cfg.windowRight);
    else if (masked)
      for (int r = 0; r < 2; ++r)
        band[r] = rowBand(kb, in.rowDiag[mt][r], colBase,
                          in.args.sizes.keyLength, cfg.windowLeft,
                          cfg.windowRight);
    KernelScoreModifiers::Row rows[2];
    if (!modifiers.empty())
      for (int r = 0; r < 2; ++r)
        rows[r] = modifiers.row(in.rows[mt][r]);
    SmallVector<Value> out[2];
    for (int64_t n = 0; n < cfg.blockKV / 8; ++n)
      for (int64_t c = 0; c < 2; ++c)
        for (int r = 0; r < 2; ++r) {
          Value v = vector::ExtractOp::create(kb.b, kb.loc, s[mt][n],
                                              ArrayRef<int64_t>{r, c});
          if (!modifiers.empty())
            v = modifiers.apply(v, cfg.scale, rows[r],
                                kb.add(colBase, kb.idx(n * 8 + c)), masked);
          v = scaleScore(kb, softmax, v);
          if (masked)
            v = arith::SelectOp::create(kb.b, kb.loc,
                                        inBand(kb, band[r], n * 8 + c), v,
                                        ninf);
          out[r].push_back(v);
        }
    flat.append(out[0]);
    flat.append(out[1]);
  }
  return flat;
}

void Step::issuePV(const Fragments &pFrag, Fragments &acc) const {
  for (int64_t kc = 0; kc < cfg.blockKV / 16; ++kc)
    for (int64_t np = 0; np < cfg.headDim / 16; ++np) {
      Value vf = ldmatrixX4(kb, cfg.elementType, in.lanes.v,
                            in.lanes.offset(kc * 16, np * 16),
                            /*transpose=*/true);
      for (int64_t half = 0; half < 2; ++half) {
        Value bf = vector::ExtractStridedSliceOp::create(
            kb.b, kb.loc, vf, ArrayRef<int64_t>{2 * half, 0},
            ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1});
        for (int64_t mt = 0; mt < cfg.mTiles(); ++mt)
          acc[mt][2 * np + half] = mmaSync(kb, cfg.elementType,
                                           pFrag[mt][kc], bf,
                                           acc[mt][2 * np + half]);
      }
    }
}

/// vector<2x2xf32> holding `r0` in row 0 and `r1` in row 1.
static Value rowPair(KernelBuilder &kb, Value r0, Value r1) {
  auto v2 = VectorType::get({2}, kb.b.getF32Type());
  auto v22 = VectorType::get({2, 2}, kb.b.getF32Type());
  Value full = vector::BroadcastOp::create(kb.b, kb.loc, v22, r0);
  Value half = vector::BroadcastOp::create(kb.b, kb.loc, v2, r1);
  return vector::InsertOp::create(kb.b, kb.loc, half, full,
                                  ArrayRef<int64_t>{1});
}

SmallVector<Value> mlir::fa::sm80::packAccumulatorsAsA(KernelBuilder &kb,
                                                      Type elt,
                                                      ArrayRef<Value> row0,
                                                      ArrayRef<Value> row1,
                                                      int64_t chunks) {
  ArrayRef<Value> p[2] = {row0, row1};
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, elt);
  auto aTy = fragmentType(elt);
  Value zeroA = arith::ConstantOp::create(
      kb.b, kb.loc, aTy, DenseElementsAttr::get(aTy, kb.b.getZeroAttr(elt)));
  SmallVector<Value> frags;
  for (int64_t kc = 0; kc < chunks; ++kc) {
    Value a = zeroA;
    for (int64_t i = 0; i < 4; ++i) {
      int64_t n = 2 * kc + i / 2, r = i % 2;
      Value pair = vector::FromElementsOp::create(
          kb.b, kb.loc, v2f32, ValueRange{p[r][2 * n], p[r][2 * n + 1]});
      Value h = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
      a = vector::InsertOp::create(kb.b, kb.loc, h, a, ArrayRef<int64_t>{i});
    }
    frags.push_back(a);
  }
  return frags;
}

Step::Fragments Step::softmaxRescaleEveryStep(
    MutableArrayRef<SmallVector<Value>> p, ArrayRef<std::array<Value, 2>> m,
    ArrayRef<std::array<Value, 2>> l, Fragments &acc,
    MutableArrayRef<std::array<Value, 2>> newM,
    MutableArrayRef<std::array<Value, 2>> newL) const {
  Fragments pFrag(cfg.mTiles());
  for (int64_t mt = 0; mt < cfg.mTiles(); ++mt) {
    Value alpha[2];
    for (int r = 0; r < 2; ++r) {
      OnlineRowUpdate u = updateOnlineSoftmaxRow(kb, softmax, p[2 * mt + r],
                                                 m[mt][r], l[mt][r]);
      newM[mt][r] = u.newMax;
      newL[mt][r] = u.newSum;
      alpha[r] = u.alpha;
    }
    Value alphaVec = rowPair(kb, alpha[0], alpha[1]);
    for (Value &a : acc[mt])
      a = arith::MulFOp::create(kb.b, kb.loc, a, alphaVec);
    pFrag[mt] = packAccumulatorsAsA(kb, cfg.elementType, p[2 * mt],
                                    p[2 * mt + 1], cfg.blockKV / 16);
  }
  return pFrag;
}

Step::Fragments Step::softmaxConditionalRescale(
    MutableArrayRef<SmallVector<Value>> p, ArrayRef<std::array<Value, 2>> m,
    ArrayRef<std::array<Value, 2>> l, Fragments &acc,
    MutableArrayRef<std::array<Value, 2>> newM,
    MutableArrayRef<std::array<Value, 2>> newL) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  int64_t mTiles = cfg.mTiles();
  // The step's row maxima (row 2 mt + r); does any row of the warp ask?
  SmallVector<Value> maxes, stepMax;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    maxes.append({m[mt][0], m[mt][1]});
  Value rescaled =
      voteRescale(kb, softmax, p, maxes, cfg.rescaleThreshold, stepMax);
  // Rescaled: every row of the warp takes its new max (alpha = 1 where it
  // did not move); else max, sum and O stay as they are. The row statistics
  // are in the branch too: computed with selects outside it (only O's
  // multiplications branched), the kernel measured 0.88-0.93x at D = 128
  // (bench/results/rescale_h200_2026-12-03_s25, run3).
  SmallVector<Type> types(4 * mTiles, b.getF32Type());
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (Value a : acc[mt])
      types.push_back(a.getType());
  auto rescale =
      scf::IfOp::create(b, loc, types, rescaled, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&rescale.getThenRegion().front());
    SmallVector<Value> newMaxes, sums, outs;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      Value alpha[2];
      for (int r = 0; r < 2; ++r) {
        OnlineRowUpdate u =
            rescaleRow(kb, softmax, m[mt][r], stepMax[2 * mt + r], l[mt][r]);
        alpha[r] = u.alpha;
        newMaxes.push_back(u.newMax);
        sums.push_back(u.newSum);
      }
      Value alphaVec = rowPair(kb, alpha[0], alpha[1]);
      for (Value a : acc[mt])
        outs.push_back(arith::MulFOp::create(b, loc, a, alphaVec));
    }
    newMaxes.append(sums);
    newMaxes.append(outs);
    scf::YieldOp::create(b, loc, newMaxes);
    b.setInsertionPointToStart(&rescale.getElseRegion().front());
    SmallVector<Value> same(maxes);
    for (int64_t mt = 0; mt < mTiles; ++mt)
      same.append({l[mt][0], l[mt][1]});
    for (int64_t mt = 0; mt < mTiles; ++mt)
      same.append(acc[mt].begin(), acc[mt].end());
    scf::YieldOp::create(b, loc, same);
  }
  int64_t nOut = cfg.headDim / 8;
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    for (int r = 0; r < 2; ++r) {
      newM[mt][r] = rescale.getResult(2 * mt + r);
      Value rowSum = exponentiateRow(kb, softmax, p[2 * mt + r],
                                     safeRowMax(b, loc, newM[mt][r]));
      newL[mt][r] = arith::AddFOp::create(
          b, loc, rescale.getResult(2 * mTiles + 2 * mt + r), rowSum);
    }
    for (int64_t n = 0; n < nOut; ++n)
      acc[mt][n] = rescale.getResult(4 * mTiles + mt * nOut + n);
  }
  Fragments pFrag(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt)
    pFrag[mt] = packAccumulatorsAsA(kb, cfg.elementType, p[2 * mt],
                                    p[2 * mt + 1], cfg.blockKV / 16);
  return pFrag;
}

void Step::build(scf::ForOp loop, Value zeroAcc) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  int64_t mTiles = cfg.mTiles(), nOut = cfg.headDim / 8;
  int64_t blockKV = cfg.blockKV;
  const KernelArgs &args = in.args;
  Value nk = args.sizes.keyLength;
  Value j = loop.getInductionVar();
  auto iter = loop.getRegionIterArgs();
  SmallVector<std::array<Value, 2>> m(mTiles), l(mTiles);
  Fragments acc(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    for (int r = 0; r < 2; ++r) {
      m[mt][r] = iter[2 * mt + r];
      l[mt][r] = iter[2 * mTiles + 2 * mt + r];
    }
    for (int64_t n = 0; n < nOut; ++n)
      acc[mt].push_back(iter[4 * mTiles + mt * nOut + n]);
  }
  Value kv0 = kb.mul(j, kb.idx(blockKV));
  Value kvNext = kb.add(kv0, kb.idx(blockKV));
  // Pending groups here: K_j, V_j. Wait for K_j only.
  loads.wait(in.qToken, 1);
  gpu::BarrierOp::create(b, loc);
  Fragments s = issueQK(zeroAcc);

  // Every warp is done reading K_j: prefetch K_{j+1} under the softmax and
  // P V (past the last block it only zero-fills, keeping the group count).
  gpu::BarrierOp::create(b, loc);
  Value kNextTok =
      loads.loadKeyTile(in.smem, kb.idx(plan.kRow), args.k, in.tile.keys,
                        in.tile.kBase, kvNext, nk, blockKV);

  // The tiled form's masked loops are [begin, fullBegin) and [fullEnd,
  // end); a short last block (the tiled form slices it) is masked here.
  Value colBase = kb.add(kv0, kb.mul(in.tile.quadLane, kb.idx(2)));
  int64_t perRow = 2 * blockKV / 8;
  // Both edges are compared even for a causal band (one is never true):
  // blockNeedsMask's one compare per edge makes ptxas spill 36 bytes at
  // d128 causal (test/Pipelines/fa-to-ptx-sm80-ptxas.mlir).
  Value needMask = kb.cmp(arith::CmpIPredicate::sgt, kvNext, nk);
  if (cfg.hasWindow())
    needMask = arith::OrIOp::create(
        b, loc, needMask,
        blockOutsideFullRange(kb, j, in.range.fullBegin, in.range.fullEnd));
  // A bounded mask_mod: blocks it shows wholly to the tile's rows skip it.
  if (modifiers.classifiesBlocks()) {
    Value all = modifiers
                    .blockVisibility(in.tile.q0,
                                     modifiers.lastRow(in.tile.q0, cfg.blockQ),
                                     kv0, modifiers.blockKeyHi(j, blockKV),
                                     /*warpUniform=*/true)
                    .all;
    needMask = arith::OrIOp::create(
        b, loc, needMask,
        arith::XOrIOp::create(b, loc, all,
                              arith::ConstantOp::create(b, loc,
                                                        b.getBoolAttr(true))));
  }
  auto maskIf = scf::IfOp::create(
      b, loc, SmallVector<Type>(mTiles * 2 * perRow, b.getF32Type()), needMask,
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&maskIf.getThenRegion().front());
    scf::YieldOp::create(b, loc, scores(s, colBase, true));
    b.setInsertionPointToStart(&maskIf.getElseRegion().front());
    scf::YieldOp::create(b, loc, scores(s, colBase, false));
  }

  SmallVector<SmallVector<Value>> p(mTiles * 2);
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int r = 0; r < 2; ++r)
      for (int64_t i = 0; i < perRow; ++i)
        p[2 * mt + r].push_back(
            maskIf.getResult(mt * 2 * perRow + r * perRow + i));
  SmallVector<std::array<Value, 2>> newM(mTiles), newL(mTiles);
  Fragments pFrag = cfg.rescalesConditionally()
                        ? softmaxConditionalRescale(p, m, l, acc, newM, newL)
                        : softmaxRescaleEveryStep(p, m, l, acc, newM, newL);

  // Pending: V_j, K_{j+1}. Wait for V_j.
  loads.wait(kNextTok, 1);
  gpu::BarrierOp::create(b, loc);
  issuePV(pFrag, acc);
  // Every warp is done reading V_j: prefetch V_{j+1} under the next Q K^T.
  gpu::BarrierOp::create(b, loc);
  loads.loadKeyTile(in.smem, kb.idx(plan.vRow), args.v, in.tile.keys,
                    in.tile.kBase, kvNext, nk, blockKV);
  SmallVector<Value> yields;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    yields.append({newM[mt][0], newM[mt][1]});
  for (int64_t mt = 0; mt < mTiles; ++mt)
    yields.append({newL[mt][0], newL[mt][1]});
  for (int64_t mt = 0; mt < mTiles; ++mt)
    yields.append(acc[mt].begin(), acc[mt].end());
  scf::YieldOp::create(b, loc, yields);
}

ValueRange mlir::fa::sm80::buildMainloop(KernelBuilder &kb,
                                         const KernelConfig &cfg,
                                         const SharedMemoryPlan &plan,
                                         const AsyncCopyPipeline &loads,
                                         const MainloopInputs &in) {
  int64_t mTiles = cfg.mTiles(), nOut = cfg.headDim / 8;
  double negInf = -std::numeric_limits<double>::infinity();
  auto accTy = VectorType::get({2, 2}, kb.b.getF32Type());
  Value zeroAcc = arith::ConstantOp::create(
      kb.b, kb.loc, accTy,
      DenseElementsAttr::get(accTy, kb.b.getF32FloatAttr(0.0)));
  SmallVector<Value> init;
  init.append(2 * mTiles, kb.f32(negInf));
  init.append(2 * mTiles, kb.f32(0.0));
  init.append(mTiles * nOut, zeroAcc);
  auto loop = scf::ForOp::create(kb.b, kb.loc, in.range.begin, in.range.end,
                                 kb.idx(1), init);
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(loop.getBody());
  KernelScoreModifiers modifiers(kb, cfg.modifiers, in.args.modifierParams,
                           in.args.sizes, in.tile.batch, in.tile.head);
  Step step{kb, cfg, plan, loads, in, modifiers, {}};
  // With a positive scale the max commutes with it: scores stay raw and
  // exp2(s * scale - max) is one FFMA + MUFU. Modifiers that act on scaled
  // scores have them scaled first (scalesFirst): log2(e) is left.
  step.softmax.scaleLog2e = modifiers.exponentScale(cfg.scale);
  step.softmax.scaleInExponent = step.softmax.scaleLog2e > 0;
  step.softmax.maxReduction = OnlineSoftmaxConfig::MaxReduction::Tree;
  step.build(loop, zeroAcc);
  return loop.getResults();
}
