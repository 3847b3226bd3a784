//===- VTranspose.cpp - fp8 V transposed in shared memory (sm_90a) --------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/VTranspose.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Barriers.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

namespace {

/// i32 arithmetic on shared-memory byte addresses.
struct I32 {
  KernelBuilder &kb;
  Value c(int64_t v) { return kb.i32c(static_cast<int32_t>(v)); }
  Value add(Value x, Value y) { return kb.add(x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  Value mul(Value x, int64_t y) { return kb.mul(x, c(y)); }
  Value xori(Value x, Value y) {
    return arith::XOrIOp::create(kb.b, kb.loc, x, y);
  }
  Value xori(Value x, int64_t y) { return y ? xori(x, c(y)) : x; }
  Value shr(Value x, int64_t n) {
    return arith::ShRUIOp::create(kb.b, kb.loc, x, c(n));
  }
  Value shl(Value x, int64_t n) {
    return arith::ShLIOp::create(kb.b, kb.loc, x, c(n));
  }
  Value andi(Value x, int64_t m) {
    return arith::AndIOp::create(kb.b, kb.loc, x, c(m));
  }
};

/// Byte permutes selecting, from the two transposed 16-bit matrices of one
/// head-dim row pair (keys 2t, 2t + 1 and 8 + 2t, 9 + 2t of the group, each
/// key's bytes of rows d, d + 1), the word of row d (bytes 0, 2, 4, 6) or of
/// row d + 1 (bytes 1, 3, 5, 7): keys 2t, 2t + 1, 2t + 8, 2t + 9, which is
/// kFP8VKeyOrder's word t of the group.
constexpr int64_t kEvenRowBytes = 0x6420, kOddRowBytes = 0x7531;

/// A lane's fixed part of the transposition, derived afresh at each block
/// from an opaque %tid.x: the producer runs on few registers (setmaxnreg),
/// so nothing of it is kept live across the key loop.
///
/// A warp's round moves one 16-key group g (of the tile's 8) times 32
/// head-dim rows (two 16-byte chunks 2c, 2c + 1 of a staged key row):
/// ldmatrix.x4.trans reads the four 8x8 16-bit matrices (keys 0-7 and 8-15
/// of the group, chunk 2c and 2c + 1); lane l gets, of each, the byte pair
/// of rows d, d + 1 (d = 2 (l / 4) in the chunk) of keys 2 (l % 4), +1; two
/// permutes make the V^T words of rows d and d + 1; stmatrix.x4 writes them.
/// Warp w takes the rounds w + 4k: group w + 4 (k % 2), chunks of k / 2.
///
/// Bank conflicts: each ldmatrix matrix is 8 consecutive keys of one chunk,
/// which the staging tile's swizzle spreads over 8 distinct 16-byte bank
/// groups (128-byte rows; 64-byte rows: 2 rows per 128 bytes, 4 chunks). The
/// stmatrix matrices take rows d = 0, 2, 4, 6, 9, 11, 13, 15 (and the other
/// eight) of a 16-row chunk, so that their V^T swizzle (chunk ^ d % 8) is 8
/// distinct bank groups: the lanes of fragment rows 4-7 store their odd row
/// where those of rows 0-3 store their even one (the permute selectors are
/// swapped for them).
struct TransposeLane {
  Value load;       ///< the lane's ldmatrix row in a staging tile, round 0
  Value store;      ///< the lane's stmatrix row in a V^T tile, round 0
  Value firstPair;  ///< permute of stmatrix matrices 0 and 2
  Value secondPair; ///< of matrices 1 and 3

  static TransposeLane of(KernelBuilder &kb, const KernelConfig &cfg) {
    I32 x{kb};
    Value t = x.andi(kb.toI32(opaqueThreadIdX(kb)), kThreadsPerWarpgroup - 1);
    Value warp = x.shr(t, 5), lane = x.andi(t, 31);
    Value matrix = x.shr(lane, 3), row = x.andi(lane, 7);
    Value keyHalf = x.andi(matrix, 1), chunkHalf = x.shr(matrix, 1);
    int64_t rowBytes = cfg.smem.rowBytes;
    // Staging tile: key k's chunk c at k * rowBytes + (c ^ swizzle(k)) * 16,
    // swizzle(k) = k % 8 (128-byte rows) or (k / 2) % 4 (64-byte rows); the
    // round's keys start at a multiple of 8.
    Value swizzle = rowBytes == kSwizzleRowBytes ? row : x.shr(row, 1);
    TransposeLane l;
    Value key = x.add(x.add(x.shl(warp, 4), x.shl(keyHalf, 3)), row);
    l.load = x.add(x.mul(key, rowBytes),
                   x.shl(x.xori(chunkHalf, swizzle), 4));
    // V^T tile: row d's 16-key group g at d * 128 + (g ^ d % 8) * 16. Lane
    // l addresses row `row` of stmatrix matrix l / 8: chunk half m / 2,
    // row 2 r + (1 if (r >= 4) != (m odd)).
    Value high = arith::ExtUIOp::create(
        kb.b, kb.loc, kb.b.getI32Type(),
        kb.cmp(arith::CmpIPredicate::uge, row, x.c(4)));
    Value d = x.add(x.add(x.shl(chunkHalf, 4), x.shl(row, 1)),
                    x.xori(high, keyHalf));
    l.store = x.add(x.shl(d, 7), x.shl(x.xori(warp, x.andi(d, 7)), 4));
    // This lane's fragment row (lane / 4) among 4-7: the odd row first.
    Value fragmentHigh =
        kb.cmp(arith::CmpIPredicate::uge, x.shr(lane, 2), x.c(4));
    l.firstPair = arith::SelectOp::create(kb.b, kb.loc, fragmentHigh,
                                          x.c(kOddRowBytes),
                                          x.c(kEvenRowBytes));
    l.secondPair = arith::SelectOp::create(kb.b, kb.loc, fragmentHigh,
                                           x.c(kEvenRowBytes),
                                           x.c(kOddRowBytes));
    return l;
  }
};

/// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 at `address`: 4 x i32.
SmallVector<Value> loadTransposed(KernelBuilder &kb, Value address) {
  Type i32 = kb.b.getI32Type();
  auto st =
      LLVM::LLVMStructType::getLiteral(kb.b.getContext(), {i32, i32, i32, i32});
  Value regs = emitInlinePTX(
      kb, st, ValueRange{address},
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4];",
      "=r,=r,=r,=r,r");
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(kb.extract(regs, i));
  return out;
}

Value permute(KernelBuilder &kb, Value a, Value b, Value selector) {
  return emitInlinePTX(kb, kb.b.getI32Type(), ValueRange{a, b, selector},
                       "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", /*pure=*/true);
}

void storeMatrices(KernelBuilder &kb, Value address, ArrayRef<Value> words) {
  emitInlinePTXEffect(
      kb, ValueRange{address, words[0], words[1], words[2], words[3]},
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
      "r,r,r,r,r");
}

/// The producer warpgroup transposes block `it`'s staged V (stage `stage`)
/// into the V ring, then tells the consumers (every thread arrives on the
/// stage's "V full" after a proxy fence: wgmma reads through the async
/// proxy) and meets the other producer warps (the staging tile is refilled
/// next).
void transposeStagedV(KernelBuilder &kb, const KernelConfig &cfg,
                      const TMALoadPipeline &loads, Value smemBase, Value it,
                      Value stage) {
  I32 x{kb};
  loads.wait(loads.vStagedSlot(stage), loads.fullParity(it));
  loads.waitReleased(cfg.barriers.vReleasedBase(), it, stage);
  const SharedMemoryPlan &p = cfg.smem;
  Value stageOff = x.mul(kb.toI32(stage), p.stageBytes);
  Value staging = x.add(x.add(smemBase, p.vStagingOffset), stageOff);
  Value vt = x.add(x.add(smemBase, p.vOffset), stageOff);
  TransposeLane lane = TransposeLane::of(kb, cfg);
  // Rounds of a warp: 8 groups x D / 32 chunk pairs over 4 warps.
  for (int64_t k = 0; k < cfg.headDim / 16; ++k) {
    int64_t groupHigh = k % 2, chunkPair = k / 2;
    Value src = x.add(staging,
                      x.add(x.xori(lane.load, 32 * chunkPair),
                            64 * groupHigh * p.rowBytes));
    SmallVector<Value> m = loadTransposed(kb, src);
    Value words[] = {permute(kb, m[0], m[1], lane.firstPair),
                     permute(kb, m[0], m[1], lane.secondPair),
                     permute(kb, m[2], m[3], lane.firstPair),
                     permute(kb, m[2], m[3], lane.secondPair)};
    Value dst = x.add(vt, x.add(x.xori(lane.store, 64 * groupHigh),
                                32 * kSwizzleRowBytes * chunkPair));
    storeMatrices(kb, dst, words);
  }
  NVVM::FenceProxyOp::create(
      kb.b, kb.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  nvgpu::MBarrierArriveOp::create(
      kb.b, kb.loc, nvgpu::MBarrierTokenType::get(kb.b.getContext()),
      loads.barriers(), loads.vFullSlot(stage));
  namedBarrier(kb, kb.i32c(cfg.namedBarriers().producerBarrier()),
               kThreadsPerWarpgroup, /*sync=*/true);
}

} // namespace

void mlir::fa::sm90::streamTileTransposingV(
    KernelBuilder &kb, const KernelConfig &cfg, const TMALoadPipeline &loads,
    const SharedMemory &smem, const TileState &tile, const KVRange &range,
    Value threadInWG, bool qIssued) {
  int64_t S = cfg.stages;
  Value issuer = kb.cmp(arith::CmpIPredicate::eq, threadInWG, kb.idx(0));
  // Q and blocks 0 .. S - 2 (no earlier use of their stages to wait for).
  kb.ifThen(issuer, [&] {
    if (!qIssued)
      loads.issueQ(smem, tile.qLoadRow(kb), tile.qPlane);
    for (int64_t s = 0; s + 1 < S; ++s) {
      Value block = range.blockAt(kb, s);
      kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, block, range.end), [&] {
        loads.issueKV(smem, block, kb.idx(s), tile);
      });
    }
  });
  auto wg = gpu::AddressSpaceAttr::get(kb.b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  Value smemBase = sharedAddress32(
      kb, smem.view(kb, kb.idx(0),
                    MemRefType::get({cfg.smem.totalBytes}, kb.b.getI8Type(),
                                    MemRefLayoutAttrInterface{}, wg)));
  auto loop = scf::ForOp::create(kb.b, kb.loc, range.begin, range.end,
                                 kb.idx(1));
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value it = range.iterOf(kb, j);
  transposeStagedV(kb, cfg, loads, smemBase, it, kb.rem(it, S));
  // Then block j + S - 1 into the stage block j - 1 used (its V staging
  // tile transposed by every warp: the named barrier above).
  Value next = kb.add(j, kb.idx(S - 1));
  kb.ifThen(
      arith::AndIOp::create(
          kb.b, kb.loc, issuer,
          kb.cmp(arith::CmpIPredicate::slt, next, range.end)),
      [&] {
        Value nextIt = kb.add(it, kb.idx(S - 1));
        Value stage = kb.rem(nextIt, S);
        loads.produce(nextIt, stage, [&](KVPart part) {
          loads.issueKV(smem, next, stage, tile, part);
        });
      });
}
