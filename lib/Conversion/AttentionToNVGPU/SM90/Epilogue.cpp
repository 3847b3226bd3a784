//===- Epilogue.cpp - normalization, lse and the O store of sm_90a --------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

/// O * (1 / l) into the warpgroup's [64 x D] part of the O staging tile (the
/// Q tile but with fp8; swizzled as the TMA wrote Q: conflict-free), two
/// elements per store.
static void stageOutput(KernelBuilder &kb, const KernelConfig &cfg,
                        const SharedMemory &smem, const ConsumerFrame &frame,
                        Value acc, const RowNormalizer row[2]) {
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  auto v2elt = VectorType::get({2}, cfg.outputType());
  for (int64_t n = 0; n < cfg.headDim / 8; ++n)
    for (int r = 0; r < 2; ++r) {
      Value a0 = arith::MulFOp::create(kb.b, kb.loc,
                                       kb.extract(acc, 4 * n + 2 * r),
                                       row[r].inverse);
      Value a1 = arith::MulFOp::create(kb.b, kb.loc,
                                       kb.extract(acc, 4 * n + 2 * r + 1),
                                       row[r].inverse);
      Value pair = vector::FromElementsOp::create(kb.b, kb.loc, v2f32,
                                                  ValueRange{a0, a1});
      Value h = arith::TruncFOp::create(kb.b, kb.loc, v2elt, pair);
      vector::StoreOp::create(
          kb.b, kb.loc, h, smem.flat,
          ValueRange{frame.swizzledIndex(kb, frame.oFlat, frame.rowInWG[r],
                                         n * 8)},
          false, llvm::MaybeAlign(4));
    }
}

/// The staged tile to global memory: 16-byte chunks, 128 threads, rows past
/// Nq skipped.
static void copyOutput(KernelBuilder &kb, const KernelConfig &cfg,
                       const KernelArgs &args, const SharedMemory &smem,
                       const ConsumerFrame &frame, const EpilogueRows &rows) {
  int64_t D = cfg.headDim, chunksPerRow = D / 8;
  Value nq = args.sizes.queryLength;
  Value ltid = frame.thread.threadInWG;
  auto v8 = VectorType::get({8}, cfg.outputType());
  Value outPlane = kb.mul(rows.qPlane, nq);
  if (rows.rowOffset)
    outPlane = kb.add(outPlane, rows.rowOffset);
  Value rowEnd = rows.rowEnd ? rows.rowEnd : nq;
  Value cch, sIdx, qRow;
  forEachRowChunk(
      kb, ltid, kThreadsPerWarpgroup, kSM90RowsPerWarpgroup, chunksPerRow,
      [&](Value row, Value chunk) {
        cch = chunk;
        // The 128-byte swizzle of the staged tile (stageOutput).
        Value sub = kb.div(cch, 8), cc = kb.rem(cch, 8);
        Value phys = arith::XOrIOp::create(kb.b, kb.loc, cc, kb.rem(row, 8));
        sIdx = kb.add(
            kb.add(frame.oFlat,
                   kb.mul(sub, kb.idx(kSM90RowsPerWarpgroup * kSwizzleElems))),
            kb.add(kb.mul(row, kb.idx(kSwizzleElems)),
                   kb.mul(phys, kb.idx(8))));
        qRow = kb.add(rows.wgRow0, row);
        return kb.cmp(arith::CmpIPredicate::slt, qRow, rowEnd);
      },
      [&] {
        Value v = vector::LoadOp::create(kb.b, kb.loc, v8, smem.flat,
                                         ValueRange{sIdx}, false,
                                         llvm::MaybeAlign(16));
        // [T, Hq, D]: packed row rowOffset + qRow, head qPlane.
        Value gRow =
            rows.tokenHeads
                ? kb.add(kb.mul(kb.add(rows.rowOffset, qRow), rows.tokenHeads),
                         rows.qPlane)
                : kb.add(outPlane, qRow);
        Value gIdx = kb.add(kb.mul(gRow, kb.idx(D)), kb.mul(cch, kb.idx(8)));
        vector::StoreOp::create(kb.b, kb.loc, v, args.out, ValueRange{gIdx},
                                false, llvm::MaybeAlign(16));
      });
}

void mlir::fa::sm90::buildEpilogue(KernelBuilder &kb, const KernelConfig &cfg,
                                   const KernelArgs &args,
                                   const SharedMemory &smem,
                                   const ConsumerFrame &frame,
                                   const EpilogueRows &rows,
                                   const MainloopResult &result,
                                   Value outScale) {
  RowNormalizer row[2];
  for (int r = 0; r < 2; ++r)
    row[r] = finalizeRowSum(kb, result.sum[r]);
  RowNormalizer outRow[2] = {row[0], row[1]};
  if (outScale) {
    // fp8: the v descale once per row, folded into 1 / l (the lse keeps l).
    for (int r = 0; r < 2; ++r)
      outRow[r].inverse =
          arith::MulFOp::create(kb.b, kb.loc, row[r].inverse, outScale);
  }
  stageOutput(kb, cfg, smem, frame, result.acc, outRow);
  if (cfg.desc.hasLse) {
    Value nq = args.sizes.queryLength;
    Value rowEnd = rows.rowEnd ? rows.rowEnd : nq;
    // Built at the store (varlen: plus the sequence's first plane row).
    auto lseIndex = [&](Value row) {
      Value plane = kb.mul(rows.qPlane, nq);
      if (rows.rowOffset)
        plane = kb.add(plane, rows.rowOffset);
      return kb.add(plane, row);
    };
    kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, frame.thread.quadLane,
                     kb.idx(0)),
              [&] {
                for (int r = 0; r < 2; ++r)
                  kb.ifThen(
                      kb.cmp(arith::CmpIPredicate::slt, rows.rowQ[r], rowEnd),
                      [&] {
                        Value lse = rowLogSumExp(kb, result.max[r], row[r]);
                        memref::StoreOp::create(
                            kb.b, kb.loc, lse, args.lse,
                            ValueRange{lseIndex(rows.rowQ[r])});
                      });
              });
  }
  frame.syncWarpgroup(kb);
  copyOutput(kb, cfg, args, smem, frame, rows);
}
