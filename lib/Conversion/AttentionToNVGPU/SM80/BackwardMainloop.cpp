//===- BackwardMainloop.cpp - one query block of the backward kernel ------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardMainloop.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
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
/// Per n-tile n of a 16-row accumulator tile, row half r, column c:
/// element [n][2 r + c] (the order the fragments and packAccumulatorsAsA use
/// is p[r][2 n + c]).
using Tile = SmallVector<Value>; // n-tiles of vector<2x2xf32>

/// m16 tiles of a warp's keys.
constexpr int64_t kKeyTiles = kGradKeysPerWarp / 16;

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

  /// n-tiles of the half's query columns (S^T, dP^T) and of its head-dim
  /// columns (dK, dV).
  int64_t queryTiles() const { return cfg.blockQ / 16; }
  /// Whether dV's and dK's A fragments of the warp's own half come from its
  /// registers (8 ldmatrix fewer a step). At D = 128, and at D = 64 with a
  /// score derivative (softcap, score_mod), the 16 registers they hold
  /// through dV spill; read back from shared memory there.
  bool ownFragmentsInRegisters() const {
    return cfg.headDim <= 64 && !cfg.hasScoreDerivative();
  }
  int64_t dimTiles() const { return cfg.headDim / 16; }

  Value ldmatrix(Value smem, Value row, Value col, bool transpose) const;
  Value zeroAcc() const;
  /// The warp's keys x its half of the step's queries, over D: K Q^T or
  /// V dO^T (`rowBase`: K's or V's first row; `queryRow`: Q's or dO's).
  std::array<Tile, kKeyTiles> keysTimesQueries(int64_t rowBase,
                                               Value queryRow) const;
  /// acc += A B over the block's queries: A = P^T or dS^T of the warp's
  /// keys (its own half's query chunks from `own`, m-tile m's A fragments,
  /// when given; the rest from the [block-kv x block-q] tile in shared
  /// memory),
  /// B = the [block-q x D] tile at `row` (read transposed, the half's
  /// columns): P^T dO or dS^T Q.
  void accumulate(Value row, ArrayRef<SmallVector<Value>> own,
                  SmallVector<Value> &acc) const;
  /// Stores m-tile m's values (`perRow` per row half, in probabilityTile's
  /// order) rounded to the element type into the warp's rows and the half's
  /// columns of the P^T / dS^T tile.
  void storeKeyQueryTile(int64_t m, ValueRange values) const;
  /// The first query of the warp's half of the step's query block.
  Value halfQ0() const;
  /// P^T (and 1 - tanh^2 with softcap) of m-tile m, masked when `masked`.
  SmallVector<Value> probabilities(const Tile &s, int64_t m, bool masked) const;
  /// The stage's lse (which = 0) or delta (1) of n-tile n of the half.
  Value statPair(int64_t which, int64_t n) const;
  /// Synchronizes the pair of warps that share keys.
  void pairBarrier() const;
  /// dQ += scale dS K from dS^T in shared memory, added to dq_accum.
  void accumulateGradQuery() const;
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

std::array<Tile, kKeyTiles>
StepBuilder::keysTimesQueries(int64_t rowBase, Value queryRow) const {
  Value zero = zeroAcc();
  std::array<Tile, kKeyTiles> s;
  for (Tile &t : s)
    t.assign(queryTiles(), zero);
  Value keyRow =
      kb.add(kb.add(kb.mul(tile.keyWarp, kb.idx(kGradKeysPerWarp)), lanes.aRow),
             kb.idx(rowBase));
  Value halfRow = kb.add(queryRow, kb.mul(tile.half, kb.idx(cfg.blockQ / 2)));
  for (int64_t kk = 0; kk < cfg.headDim / 16; ++kk) {
    Value col = kb.add(lanes.aCol, kb.idx(kk * 16));
    Value a[kKeyTiles];
    for (int64_t m = 0; m < kKeyTiles; ++m)
      a[m] = ldmatrix(buf.tiles, kb.add(keyRow, kb.idx(16 * m)), col, false);
    for (int64_t np = 0; np < queryTiles() / 2; ++np) {
      Value bq = ldmatrix(buf.tiles,
                          kb.add(kb.add(halfRow, kb.idx(np * 16)), lanes.bRow),
                          kb.add(lanes.bCol, kb.idx(kk * 16)), false);
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t m = 0; m < kKeyTiles; ++m)
          s[m][2 * np + h] = mmaSync(kb, cfg.elementType, a[m],
                                     halfOf(kb, bq, h), s[m][2 * np + h]);
    }
  }
  return s;
}

void StepBuilder::accumulate(Value row, ArrayRef<SmallVector<Value>> own,
                             SmallVector<Value> &acc) const {
  Value keyRow =
      kb.add(kb.mul(tile.keyWarp, kb.idx(kGradKeysPerWarp)), lanes.aRow);
  Value halfCol = kb.mul(tile.half, kb.idx(cfg.headDim / 2));
  // The half's own query chunks first (A in registers), then the
  // partner's (A from shared memory).
  int64_t ownChunks = own.empty() ? 0 : cfg.blockQ / 32;
  Value ownQuery, partnerQuery;
  if (!own.empty()) {
    ownQuery = kb.mul(tile.half, kb.idx(cfg.blockQ / 2));
    partnerQuery = kb.sub(kb.idx(cfg.blockQ / 2), ownQuery);
  }
  for (int64_t j = 0; j < cfg.blockQ / 16; ++j) {
    bool mine = j < ownChunks;
    Value query = own.empty() ? kb.idx(16 * j)
                              : kb.add(mine ? ownQuery : partnerQuery,
                                       kb.idx(16 * (mine ? j : j - ownChunks)));
    Value a[kKeyTiles];
    for (int64_t m = 0; m < kKeyTiles; ++m)
      a[m] = mine ? own[m][j]
                  : ldmatrix(buf.dsT, kb.add(keyRow, kb.idx(16 * m)),
                             kb.add(lanes.aCol, query), false);
    for (int64_t np = 0; np < dimTiles() / 2; ++np) {
      Value bf =
          ldmatrix(buf.tiles, kb.add(kb.add(row, query), lanes.tRow),
                   kb.add(kb.add(lanes.tCol, halfCol), kb.idx(np * 16)), true);
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t m = 0; m < kKeyTiles; ++m) {
          int64_t i = m * dimTiles() + 2 * np + h;
          acc[i] =
              mmaSync(kb, cfg.elementType, a[m], halfOf(kb, bf, h), acc[i]);
        }
    }
  }
}

void StepBuilder::storeKeyQueryTile(int64_t m, ValueRange values) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.elementType);
  int64_t perRow = 2 * queryTiles();
  Value col0 = kb.add(kb.mul(tile.quadLane, kb.idx(2)),
                      kb.mul(tile.half, kb.idx(cfg.blockQ / 2)));
  for (int r = 0; r < 2; ++r) {
    Value row = kb.sub(tile.keys[m][r], tile.cta.kv0);
    for (int64_t n = 0; n < queryTiles(); ++n) {
      Value pair = vector::FromElementsOp::create(
          b, loc, v2f32,
          ValueRange{values[r * perRow + 2 * n],
                     values[r * perRow + 2 * n + 1]});
      vector::StoreOp::create(
          b, loc, arith::TruncFOp::create(b, loc, v2elt, pair), buf.dsT,
          ValueRange{row, kb.add(col0, kb.idx(8 * n))}, false,
          llvm::MaybeAlign(4));
    }
  }
}

Value StepBuilder::statPair(int64_t which, int64_t n) const {
  // The half's n-tile n is the step's n-tile n + half * block-q / 16:
  // statPair's columns 8 n + 2 quadLane with quadLane + half * block-q / 4.
  Value lane = kb.add(tile.quadLane, kb.mul(tile.half, kb.idx(cfg.blockQ / 4)));
  return schedule.statPair(buf.stats, step.stage, which, lane, n);
}

Value StepBuilder::halfQ0() const {
  return kb.add(step.q0, kb.mul(tile.half, kb.idx(cfg.blockQ / 2)));
}

SmallVector<Value> StepBuilder::probabilities(const Tile &s, int64_t m,
                                              bool masked) const {
  Value q0 = halfQ0();
  return schedule.probabilityTile(
      [&](int64_t n) { return statPair(0, n); }, tile.quadLane, step.head, q0,
      tile.keys[m], masked,
      [&](int64_t n, int r, int64_t c) -> Value {
        return vector::ExtractOp::create(kb.b, kb.loc, s[n],
                                         ArrayRef<int64_t>{r, c});
      },
      queryTiles());
}

void StepBuilder::pairBarrier() const {
  // Barrier 1 + pair (0 is the CTA's), the pair's 64 threads.
  namedBarrier(kb, kb.toI32(kb.add(tile.keyWarp, kb.idx(1))), 64,
               /*sync=*/true);
}

void StepBuilder::accumulateGradQuery() const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value col0 = kb.mul(tile.quadLane, kb.idx(2));
  // dQ of the block = dS (from dS^T, transposed) x K: warp w takes rows
  // rowTiles x 16 (w % rowGroups) .. of them (rowTiles m16 tiles) and the
  // w / rowGroups-th part of D, 64 / rowTiles columns at a time (32
  // accumulator registers). At D = 128 two m-tiles of 32 columns: an
  // ldmatrix of dS or K feeds 4 mma (40 ldmatrix a step with one m-tile of
  // 64 columns, 32 with two).
  int64_t rowTiles = cfg.headDim >= 128 ? 2 : 1;
  int64_t rowGroups = cfg.blockQ / (16 * rowTiles);
  int64_t part = cfg.headDim / (cfg.warps() / rowGroups);
  Value rowGroup = kb.rem(tile.warp, rowGroups);
  Value partCol = kb.mul(kb.div(tile.warp, rowGroups), kb.idx(part));
  auto plus = [&](Value v, int64_t c) { return c ? kb.add(v, kb.idx(c)) : v; };
  // The atomic adds: an add of the fragments' order covers 8 rows x 4
  // columns 2 apart, 8 half-used sectors of 32 bytes. Groups g and g ^ 1 (4
  // lanes apart) swap one value of each pair, so that each add covers rows
  // 2 (g / 2) (first) or 2 (g / 2) + 1 (second) at column 2 quadLane + g % 2
  // of each 8: 4 rows x 8 consecutive columns, 4 full sectors.
  Value odd =
      kb.cmp(arith::CmpIPredicate::eq, kb.rem(tile.group, 2), kb.idx(1));
  Value groupRow = kb.mul(rowGroup, kb.idx(16 * rowTiles));
  Value pairRow = kb.add(kb.add(step.q0, groupRow),
                         kb.sub(tile.group, kb.rem(tile.group, 2)));
  Value laneCol = kb.add(kb.add(col0, kb.rem(tile.group, 2)), partCol);
  int64_t chunk = std::min<int64_t>(part, 64 / rowTiles);
  Value scale = kb.f32(cfg.scale);
  Value four = kb.i32c(4), width = kb.i32c(32);
  if (cfg.deterministic)
    schedule.waitForGradQueryTurn(step);
  for (int64_t dc = 0; dc < part / chunk; ++dc) {
    SmallVector<Tile> dq(rowTiles, Tile(chunk / 8, zeroAcc()));
    for (int64_t kc = 0; kc < cfg.blockKV / 16; ++kc) {
      SmallVector<Value> a;
      for (int64_t m = 0; m < rowTiles; ++m)
        a.push_back(ldmatrix(buf.dsT, kb.add(kb.idx(kc * 16), lanes.bRow),
                             kb.add(plus(groupRow, 16 * m), lanes.bCol), true));
      for (int64_t np = 0; np < chunk / 16; ++np) {
        Value bf = ldmatrix(
            buf.tiles, kb.add(kb.idx(plan.kRow + kc * 16), lanes.tRow),
            kb.add(kb.add(lanes.tCol, partCol), kb.idx(dc * chunk + np * 16)),
            true);
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t m = 0; m < rowTiles; ++m)
            dq[m][2 * np + h] = mmaSync(kb, cfg.elementType, a[m],
                                        halfOf(kb, bf, h), dq[m][2 * np + h]);
      }
    }
    for (int64_t m = 0; m < rowTiles; ++m)
      for (int r = 0; r < 2; ++r) {
        SmallVector<Value> pairValues[2];
        for (int64_t n = 0; n < chunk / 8; ++n) {
          Value v[2];
          for (int64_t c = 0; c < 2; ++c)
            v[c] = arith::MulFOp::create(
                b, loc,
                vector::ExtractOp::create(b, loc, dq[m][n],
                                          ArrayRef<int64_t>{r, c}),
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
          Value row = kb.add(pairRow, kb.idx(16 * m + 8 * r + half));
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
  int64_t perTile = 2 * 2 * sb.queryTiles(); // values of one m-tile
  int64_t numValues = kKeyTiles * perTile * (cfg.hasScoreDerivative() ? 2 : 1);

  // P^T: masked only where the block pair straddles the band or Nk.
  std::array<Tile, kKeyTiles> s = sb.keysTimesQueries(plan.kRow, qRow);
  Value needMask = arith::XOrIOp::create(
      b, loc, kernel::blockFullyVisible(kb, cfg, args, tile.cta, step.q0),
      arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  auto maskIf = scf::IfOp::create(
      b, loc, SmallVector<Type>(numValues, b.getF32Type()), needMask,
      /*withElseRegion=*/true);
  for (bool masked : {true, false}) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(masked ? &maskIf.getThenRegion().front()
                                      : &maskIf.getElseRegion().front());
    SmallVector<Value> values;
    for (int64_t m = 0; m < kKeyTiles; ++m)
      values.append(sb.probabilities(s[m], m, masked));
    scf::YieldOp::create(b, loc, values);
  }
  int64_t perM = numValues / kKeyTiles;
  auto pOf = [&](int64_t m) {
    return ValueRange(maskIf.getResults()).slice(m * perM, perM);
  };
  for (int64_t m = 0; m < kKeyTiles; ++m)
    sb.storeKeyQueryTile(m, pOf(m).take_front(perTile));

  // dS^T = P^T (dP^T - delta) (* (1 - tanh^2)), dP^T = V dO^T.
  std::array<Tile, kKeyTiles> dp = sb.keysTimesQueries(plan.vRow, sb.doRow);
  SmallVector<Value> ds[kKeyTiles];
  for (int64_t m = 0; m < kKeyTiles; ++m) {
    auto dpAt = [&](int64_t n, int r, int64_t c) -> Value {
      return vector::ExtractOp::create(b, loc, dp[m][n],
                                       ArrayRef<int64_t>{r, c});
    };
    ds[m] = schedule.gradScoreTile([&](int64_t n) { return sb.statPair(1, n); },
                                   pOf(m), dpAt, sb.queryTiles());
    if (cfg.hasCaptureGrads())
      schedule.addCaptureGrads(
          cfg.gradScoreIsGradT()
              ? ds[m]
              : schedule.gradModifiedScoreTile(
                    [&](int64_t n) { return sb.statPair(1, n); }, pOf(m), dpAt,
                    sb.queryTiles()),
          sb.tile.quadLane, sb.step.head, sb.halfQ0(), sb.tile.keys[m],
          sb.queryTiles());
  }

  // A fragments of the warp's own P^T and dS^T (rounded as the stores).
  Type elt = cfg.elementType;
  auto ownFragments = [&](ValueRange range) {
    SmallVector<Value> values(range);
    ArrayRef<Value> all(values);
    return packAccumulatorsAsA(kb, elt, all.take_front(perTile / 2),
                               all.slice(perTile / 2, perTile / 2),
                               sb.queryTiles() / 2);
  };
  SmallVector<SmallVector<Value>> ownP, ownDS;
  for (int64_t m = 0; m < kKeyTiles && sb.ownFragmentsInRegisters(); ++m) {
    ownP.push_back(ownFragments(pOf(m)));
    ownDS.push_back(ownFragments(ds[m]));
  }

  // dV += P^T dO, P^T of both halves of the pair.
  sb.pairBarrier();
  sb.accumulate(sb.doRow, ownP, acc.dV);
  // The partner is done reading P^T: dS^T replaces it; the CTA's dS^T is
  // complete after the barrier (dQ reads all of it).
  sb.pairBarrier();
  for (int64_t m = 0; m < kKeyTiles; ++m)
    sb.storeKeyQueryTile(m, ds[m]);
  gpu::BarrierOp::create(b, loc);
  // dK += dS^T Q (scaled once, at the end).
  sb.accumulate(qRow, ownDS, acc.dK);
  sb.accumulateGradQuery();
}
