//===- Epilogue.cpp - normalization, lse and stores of sm_80 --------------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm80;

void mlir::fa::sm80::buildEpilogue(KernelBuilder &kb, const KernelConfig &cfg,
                                   const SharedMemoryPlan &plan,
                                   const KernelArgs &args,
                                   const ThreadTile &tile, Value smem,
                                   ValueRange res,
                                   ArrayRef<std::array<Value, 2>> rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  int64_t mTiles = cfg.mTiles(), nOut = cfg.headDim / 8;
  Value nq = args.sizes.queryLength;
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value colOut = kb.mul(tile.quadLane, kb.idx(2));
  // O goes through shared memory: stored from the fragments, 4 bytes per
  // thread and row, a warp's store would touch 8 rows x 16 bytes of global
  // memory. Rows [0, block-q) of the buffer (padded rows: the pair stores
  // meet no bank twice) once every warp is past its last P V.
  gpu::BarrierOp::create(b, loc);
  // The thread id read again and the tile's first row derived from the
  // thread's first row: kept live across the key loop, they spilled.
  Value tid = opaqueThreadIdX(kb);
  Value firstRow = kb.add(kb.mul(kb.div(tid, 32), kb.idx(cfg.rowsPerWarp)),
                          kb.div(kb.rem(tid, 32), 4));
  Value q0 = kb.sub(rows[0][0], firstRow);
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int r = 0; r < 2; ++r) {
      Value mFinal = res[2 * mt + r];
      RowNormalizer row = finalizeRowSum(kb, res[2 * mTiles + 2 * mt + r]);
      Value tileRow = kb.add(firstRow, kb.idx(16 * mt + 8 * r));
      Value invVec = vector::BroadcastOp::create(
          b, loc, VectorType::get({2}, b.getF32Type()), row.inverse);
      for (int64_t n = 0; n < nOut; ++n) {
        Value pair = vector::ExtractOp::create(
            b, loc, res[4 * mTiles + mt * nOut + n], ArrayRef<int64_t>{r});
        pair = arith::MulFOp::create(b, loc, pair, invVec);
        Value h = arith::TruncFOp::create(b, loc, v2elt, pair);
        vector::StoreOp::create(
            b, loc, h, smem, ValueRange{tileRow, kb.add(colOut, kb.idx(n * 8))},
            false, llvm::MaybeAlign(4));
      }
      if (cfg.hasLse)
        kb.ifThen(
            arith::AndIOp::create(
                b, loc, kb.cmp(arith::CmpIPredicate::slt, rows[mt][r], nq),
                kb.cmp(arith::CmpIPredicate::eq, tile.quadLane, kb.idx(0))),
            [&] {
              memref::StoreOp::create(
                  b, loc, rowLogSumExp(kb, mFinal, row), args.lse,
                  ValueRange{kb.add(tile.qRowBase, rows[mt][r])});
            });
    }
  gpu::BarrierOp::create(b, loc);
  // Chunk c = tid + threads i: row c / (D / 8), columns 8 (c % (D / 8)) and
  // on; rows past Nq stay unwritten.
  auto v8elt = VectorType::get({8}, cfg.elementType);
  assert(plan.rows >= cfg.blockQ && "O is staged in the first block-q rows");
  Value tileRow, col, q;
  forEachRowChunk(
      kb, tid, cfg.threads(), cfg.blockQ, cfg.headDim / 8,
      [&](Value row, Value chunk) {
        tileRow = row;
        col = kb.mul(chunk, kb.idx(8));
        q = kb.add(q0, tileRow);
        return kb.cmp(arith::CmpIPredicate::slt, q, nq);
      },
      [&] {
        Value chunk = vector::LoadOp::create(b, loc, v8elt, smem,
                                             ValueRange{tileRow, col}, false,
                                             llvm::MaybeAlign(16));
        vector::StoreOp::create(
            b, loc, chunk, args.out,
            ValueRange{kb.add(
                kb.mul(kb.add(tile.qRowBase, q), kb.idx(cfg.headDim)), col)},
            false, llvm::MaybeAlign(16));
      });
}
