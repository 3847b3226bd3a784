//===- Epilogue.cpp - normalization, lse and stores of sm_80 --------------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm80;

void mlir::fa::sm80::buildEpilogue(KernelBuilder &kb, const KernelConfig &cfg,
                                   const KernelArgs &args,
                                   const ThreadTile &tile, ValueRange res,
                                   ArrayRef<std::array<Value, 2>> rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  int64_t mTiles = cfg.mTiles(), nOut = cfg.headDim / 8;
  Value nq = args.sizes.queryLength;
  auto v2elt = VectorType::get({2}, cfg.elementType);
  Value colOut = kb.mul(tile.quadLane, kb.idx(2));
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int r = 0; r < 2; ++r) {
      Value mFinal = res[2 * mt + r];
      RowNormalizer row = finalizeRowSum(kb, res[2 * mTiles + 2 * mt + r]);
      Value inRows = kb.cmp(arith::CmpIPredicate::slt, rows[mt][r], nq);
      auto ifOp = scf::IfOp::create(b, loc, inRows, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value rowOff =
          kb.mul(kb.add(tile.qRowBase, rows[mt][r]), kb.idx(cfg.headDim));
      for (int64_t n = 0; n < nOut; ++n) {
        Value pair = vector::ExtractOp::create(
            b, loc, res[4 * mTiles + mt * nOut + n], ArrayRef<int64_t>{r});
        Value invVec = vector::BroadcastOp::create(
            b, loc, VectorType::get({2}, b.getF32Type()), row.inverse);
        pair = arith::MulFOp::create(b, loc, pair, invVec);
        Value h = arith::TruncFOp::create(b, loc, v2elt, pair);
        vector::StoreOp::create(
            b, loc, h, args.out,
            ValueRange{kb.add(rowOff, kb.add(colOut, kb.idx(n * 8)))});
      }
      if (cfg.hasLse)
        kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, tile.quadLane, kb.idx(0)),
                  [&] {
                    memref::StoreOp::create(
                        b, loc, rowLogSumExp(kb, mFinal, row), args.lse,
                        ValueRange{kb.add(tile.qRowBase, rows[mt][r])});
                  });
    }
}
