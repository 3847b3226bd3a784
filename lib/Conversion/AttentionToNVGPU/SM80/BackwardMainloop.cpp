//===- BackwardMainloop.cpp - one query block of the backward kernel ------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardMainloop.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/Mainloop.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"


using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm80;

namespace {
/// Per n-tile n of a 16 x block-q accumulator tile, row half r, column c:
/// element [n][2 r + c] (the order the fragments and packAccumulatorsAsA use
/// is p[r][2 n + c]).
using Tile = SmallVector<Value>; // block-q / 8 vector<2x2xf32>

struct StepBuilder {
  KernelBuilder &kb;
  const BackwardConfig &cfg;
  const BackwardSharedMemoryPlan &plan;
  const BackwardArgs &args;
  const BackwardTile &tile;
  const BackwardLanes &lanes;
  const BackwardBuffers &buf;
  const BackwardSchedule &schedule;
  const BackwardStep &step;
  Value qRow, doRow; ///< the step's Q and dO rows in the tile buffer

  Value ldmatrix(Value smem, Value row, Value col, bool transpose) const;
  Value zeroAcc() const;
  /// rows x block-q = (16 of `rowBase`'s rows) x (the step's query rows)^T
  /// over D: K Q^T or V dO^T.
  Tile keysTimesQueries(int64_t rowBase, Value queryRow) const;
  /// acc += A B for A = `a` (per 16-query chunk) and B = the [block-q x D]
  /// tile at `row` (read transposed): P^T dO or dS^T Q.
  void accumulate(ArrayRef<Value> a, Value row, SmallVector<Value> &acc) const;
  /// P^T (and 1 - tanh^2 with softcap) of the scores, masked when `masked`.
  SmallVector<Value> probabilities(const Tile &s, bool masked) const;
  /// Stores dS^T into shared memory, multiplies it by K and adds scale * dQ
  /// to dq_accum.
  void accumulateGradQuery(ArrayRef<Value> dsFrags) const;
};
} // namespace

Value StepBuilder::ldmatrix(Value smem, Value row, Value col,
                            bool transpose) const {
  return nvgpu::LdMatrixOp::create(
      kb.b, kb.loc, VectorType::get({4, 2}, cfg.elementType), smem,
      ValueRange{row, col}, transpose, /*numTiles=*/4);
}

Value StepBuilder::zeroAcc() const {
  auto accTy = VectorType::get({2, 2}, kb.b.getF32Type());
  return arith::ConstantOp::create(
      kb.b, kb.loc, accTy,
      DenseElementsAttr::get(accTy, kb.b.getF32FloatAttr(0.0)));
}

/// The B operand of n-tile `half` of an ldmatrix x4 (two n-tiles).
static Value halfOf(KernelBuilder &kb, Value frag, int64_t half) {
  return vector::ExtractStridedSliceOp::create(
      kb.b, kb.loc, frag, ArrayRef<int64_t>{2 * half, 0},
      ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1});
}

Tile StepBuilder::keysTimesQueries(int64_t rowBase, Value queryRow) const {
  Value zero = zeroAcc();
  Tile s(cfg.blockQ / 8, zero);
  Value keyRow = kb.add(kb.add(kb.mul(tile.warp, kb.idx(16)), lanes.aRow),
                        kb.idx(rowBase));
  for (int64_t kk = 0; kk < cfg.headDim / 16; ++kk) {
    Value a = ldmatrix(buf.tiles, keyRow, kb.add(lanes.aCol, kb.idx(kk * 16)),
                       false);
    for (int64_t np = 0; np < cfg.blockQ / 16; ++np) {
      Value bq = ldmatrix(buf.tiles,
                          kb.add(kb.add(queryRow, kb.idx(np * 16)), lanes.bRow),
                          kb.add(lanes.bCol, kb.idx(kk * 16)), false);
      for (int64_t h = 0; h < 2; ++h)
        s[2 * np + h] =
            mmaSync(kb, cfg.elementType, a, halfOf(kb, bq, h), s[2 * np + h]);
    }
  }
  return s;
}

void StepBuilder::accumulate(ArrayRef<Value> a, Value row,
                             SmallVector<Value> &acc) const {
  for (int64_t kc = 0; kc < cfg.blockQ / 16; ++kc)
    for (int64_t np = 0; np < cfg.headDim / 16; ++np) {
      Value bf = ldmatrix(buf.tiles,
                          kb.add(kb.add(row, kb.idx(kc * 16)), lanes.tRow),
                          kb.add(lanes.tCol, kb.idx(np * 16)), true);
      for (int64_t h = 0; h < 2; ++h)
        acc[2 * np + h] = mmaSync(kb, cfg.elementType, a[kc], halfOf(kb, bf, h),
                                  acc[2 * np + h]);
    }
}

SmallVector<Value> StepBuilder::probabilities(const Tile &s,
                                              bool masked) const {
  return schedule.probabilityTile(
      [&](int64_t n) {
        return schedule.statPair(buf.stats, step.stage, 0, tile.quadLane, n);
      },
      tile.quadLane, step.head, step.q0, tile.keys, masked,
      [&](int64_t n, int r, int64_t c) -> Value {
        return vector::ExtractOp::create(kb.b, kb.loc, s[n],
                                         ArrayRef<int64_t>{r, c});
      });
}

void StepBuilder::accumulateGradQuery(ArrayRef<Value> dsFrags) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  // dS^T rows of this warp: packAccumulatorsAsA's element i of chunk kc is
  // row half i % 2 of n-tile 2 kc + i / 2.
  Value keyRow = kb.add(kb.mul(tile.warp, kb.idx(16)), tile.group);
  Value col0 = kb.mul(tile.quadLane, kb.idx(2));
  for (size_t kc = 0; kc < dsFrags.size(); ++kc)
    for (int64_t i = 0; i < 4; ++i) {
      Value pair = vector::ExtractOp::create(b, loc, dsFrags[kc],
                                             ArrayRef<int64_t>{i});
      int64_t n = 2 * kc + i / 2, r = i % 2;
      vector::StoreOp::create(
          b, loc, pair, buf.dsT,
          ValueRange{kb.add(keyRow, kb.idx(8 * r)),
                     kb.add(col0, kb.idx(8 * n))});
    }
  gpu::BarrierOp::create(b, loc);

  // dQ of the block = dS (from dS^T, transposed) x K: warp w takes rows
  // 16 (w % rowGroups) .. + 15 and the w / rowGroups-th part of D, 64
  // columns at a time (32 accumulator registers).
  int64_t rowGroups = cfg.blockQ / 16;
  int64_t part = cfg.headDim / (cfg.warps() / rowGroups);
  Value rowGroup = kb.rem(tile.warp, rowGroups);
  Value partCol = kb.mul(kb.div(tile.warp, rowGroups), kb.idx(part));
  // The atomic adds: an add of the fragments' order covers 8 rows x 4
  // columns 2 apart, 8 half-used sectors of 32 bytes. Groups g and g ^ 1 (4
  // lanes apart) swap one value of each pair, so that each add covers rows
  // 2 (g / 2) (first) or 2 (g / 2) + 1 (second) at column 2 quadLane + g % 2
  // of each 8: 4 rows x 8 consecutive columns, 4 full sectors.
  Value odd =
      kb.cmp(arith::CmpIPredicate::eq, kb.rem(tile.group, 2), kb.idx(1));
  Value pairRow = kb.add(kb.add(step.q0, kb.mul(rowGroup, kb.idx(16))),
                         kb.sub(tile.group, kb.rem(tile.group, 2)));
  Value laneCol = kb.add(kb.add(col0, kb.rem(tile.group, 2)), partCol);
  int64_t chunk = std::min<int64_t>(part, 64);
  Value scale = kb.f32(cfg.scale);
  Value four = kb.i32c(4), width = kb.i32c(32);
  if (cfg.deterministic)
    schedule.waitForGradQueryTurn(step);
  for (int64_t dc = 0; dc < part / chunk; ++dc) {
    Tile dq(chunk / 8, zeroAcc());
    for (int64_t kc = 0; kc < cfg.blockKV / 16; ++kc) {
      Value a = ldmatrix(buf.dsT, kb.add(kb.idx(kc * 16), lanes.bRow),
                         kb.add(kb.mul(rowGroup, kb.idx(16)), lanes.bCol),
                         true);
      for (int64_t np = 0; np < chunk / 16; ++np) {
        Value bf = ldmatrix(
            buf.tiles, kb.add(kb.idx(plan.kRow + kc * 16), lanes.tRow),
            kb.add(kb.add(lanes.tCol, partCol), kb.idx(dc * chunk + np * 16)),
            true);
        for (int64_t h = 0; h < 2; ++h)
          dq[2 * np + h] = mmaSync(kb, cfg.elementType, a, halfOf(kb, bf, h),
                                   dq[2 * np + h]);
      }
    }
    for (int r = 0; r < 2; ++r) {
      SmallVector<Value> pairValues[2];
      for (int64_t n = 0; n < chunk / 8; ++n) {
        Value v[2];
        for (int64_t c = 0; c < 2; ++c)
          v[c] = arith::MulFOp::create(
              b, loc,
              vector::ExtractOp::create(b, loc, dq[n], ArrayRef<int64_t>{r, c}),
              scale);
        Value sent = arith::SelectOp::create(b, loc, odd, v[0], v[1]);
        Value got = gpu::ShuffleOp::create(b, loc, sent, four, width,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
        pairValues[0].push_back(
            arith::SelectOp::create(b, loc, odd, got, v[0]));
        pairValues[1].push_back(
            arith::SelectOp::create(b, loc, odd, v[1], got));
      }
      for (int64_t half = 0; half < 2; ++half) {
        Value row = kb.add(pairRow, kb.idx(8 * r + half));
        kb.ifThen(
            kb.cmp(arith::CmpIPredicate::slt, row, args.sizes.queryLength),
            [&] {
              Value base = kb.add(
                  kb.mul(kb.add(step.qRowBase, row), kb.idx(cfg.headDim)),
                  kb.add(laneCol, kb.idx(dc * chunk)));
              for (int64_t n = 0; n < chunk / 8; ++n)
                memref::AtomicRMWOp::create(
                    b, loc, arith::AtomicRMWKind::addf, pairValues[half][n],
                    args.dqAccum, ValueRange{kb.add(base, kb.idx(8 * n))});
            });
      }
    }
  }
  if (cfg.deterministic)
    schedule.passGradQueryTurn(step, /*bulkAdds=*/false);
}

void mlir::fa::sm80::buildBackwardStep(
    KernelBuilder &kb, const BackwardConfig &cfg,
    const BackwardSharedMemoryPlan &plan, const BackwardArgs &args,
    const BackwardTile &tile, const BackwardLanes &lanes,
    const BackwardBuffers &buf, const BackwardSchedule &schedule,
    const BackwardStep &step, GradAccumulators &acc) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value qRow = kb.add(kb.idx(plan.stageRow),
                      kb.mul(step.stage, kb.idx(plan.stageRows)));
  StepBuilder sb{kb,  cfg,      plan, args, tile,
                 lanes, buf, schedule, step, qRow,
                 kb.add(qRow, kb.idx(cfg.blockQ))};
  Type elt = cfg.elementType;
  int64_t perRow = cfg.blockQ / 4; // 2 per n-tile
  int64_t chunks = cfg.blockQ / 16;

  // P^T: masked only where the block pair straddles the band or Nk.
  Tile s = sb.keysTimesQueries(plan.kRow, qRow);
  int64_t numValues = cfg.probabilityTileValues();
  Value needMask = arith::XOrIOp::create(
      b, loc, kernel::blockFullyVisible(kb, cfg, args, tile.cta, step.q0),
      arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  auto maskIf = scf::IfOp::create(
      b, loc, SmallVector<Type>(numValues, b.getF32Type()), needMask,
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&maskIf.getThenRegion().front());
    scf::YieldOp::create(b, loc, sb.probabilities(s, true));
    b.setInsertionPointToStart(&maskIf.getElseRegion().front());
    scf::YieldOp::create(b, loc, sb.probabilities(s, false));
  }
  ValueRange res = maskIf.getResults();
  SmallVector<Value> p[2] = {SmallVector<Value>(res.slice(0, perRow)),
                             SmallVector<Value>(res.slice(perRow, perRow))};

  // dV += P^T dO.
  sb.accumulate(packAccumulatorsAsA(kb, elt, p[0], p[1], chunks), sb.doRow,
                acc.dV);

  // dS^T = P^T (dP^T - delta) (* (1 - tanh^2)), dP^T = V dO^T.
  Tile dp = sb.keysTimesQueries(plan.vRow, sb.doRow);
  SmallVector<Value> ds = schedule.gradScoreTile(
      [&](int64_t n) {
        return schedule.statPair(buf.stats, step.stage, 1, tile.quadLane, n);
      },
      res,
      [&](int64_t n, int r, int64_t c) -> Value {
        return vector::ExtractOp::create(b, loc, dp[n], ArrayRef<int64_t>{r, c});
      });
  SmallVector<Value> dsFrags = packAccumulatorsAsA(
      kb, elt, ArrayRef(ds).take_front(perRow), ArrayRef(ds).drop_front(perRow),
      chunks);
  // dK += dS^T Q (scaled once, at the end).
  sb.accumulate(dsFrags, qRow, acc.dK);
  sb.accumulateGradQuery(dsFrags);
}
