//===- LoadPipeline.cpp - cp.async tiles of the sm_80 kernel --------------===//
#include "fa/Conversion/AttentionToNVGPU/SM80/LoadPipeline.h"

#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fa::sm80;

Value AsyncCopyPipeline::loadTile(Value smem, int64_t smemRow, Value gmem,
                                  Value base, Value rowStart, Value nRows,
                                  int64_t numRows) const {
  return loadTileAt(smem, kb.idx(smemRow), gmem, contiguousRows(base), rowStart,
                    nRows, numRows);
}

Value AsyncCopyPipeline::loadTile(Value smem, Value smemRow, Value gmem,
                                  Value base, Value rowStart, Value nRows,
                                  int64_t numRows) const {
  return loadTileAt(smem, smemRow, gmem, contiguousRows(base), rowStart, nRows,
                    numRows);
}

Value AsyncCopyPipeline::loadKeyTile(Value smem, Value smemRow, Value gmem,
                                     const kernel::SequenceKeys &keys,
                                     Value base, Value rowStart, Value nRows,
                                     int64_t numRows) const {
  if (!keys.layout.paged())
    return loadTile(smem, smemRow, gmem, base, rowStart, nRows, numRows);
  int64_t pageSize = keys.layout.pageSize;
  if (pageSize % numRows == 0) {
    // The tile (numRows-aligned) lies in one page: one lookup for all rows
    // (a zero-filled row reads row 0 of the page).
    Value page = kb.mul(kb.mul(keys.pagePlane(kb, rowStart), kb.idx(pageSize)),
                        kb.idx(headDim));
    return loadTileAt(
        smem, smemRow, gmem,
        [&](Value srcRow, Value col, int64_t) {
          return kb.add(page,
                        kb.add(kb.mul(kb.rem(srcRow, pageSize), kb.idx(headDim)),
                               col));
        },
        rowStart, nRows, numRows);
  }
  // Pages shorter than the tile. Copy i of a thread reads row
  // (tid + i * threads) / (D / 8) = a + i * T with a < T = threads / (D / 8):
  // when T divides S that row is in the tile's page (i * T) / S whatever the
  // thread, so each page is looked up once (uniform) and reused.
  int64_t rowsPerCopy = threads / (headDim / 8);
  if (pageSize % rowsPerCopy == 0) {
    SmallVector<Value> pages(numRows / pageSize);
    return loadTileAt(
        smem, smemRow, gmem,
        [&](Value srcRow, Value col, int64_t i) {
          int64_t chunk = i * rowsPerCopy / pageSize;
          if (!pages[chunk])
            pages[chunk] = kb.mul(
                kb.mul(keys.pagePlane(kb, kb.add(rowStart,
                                                 kb.idx(chunk * pageSize))),
                       kb.idx(pageSize)),
                kb.idx(headDim));
          return kb.add(pages[chunk],
                        kb.add(kb.mul(kb.rem(srcRow, pageSize), kb.idx(headDim)),
                               col));
        },
        rowStart, nRows, numRows);
  }
  // Otherwise each row's page is looked up (the table stays in L1).
  return loadTileAt(
      smem, smemRow, gmem,
      [&](Value srcRow, Value col, int64_t) {
        return kb.add(kb.mul(keys.rowOf(kb, srcRow), kb.idx(headDim)), col);
      },
      rowStart, nRows, numRows);
}

AsyncCopyPipeline::SourceOf AsyncCopyPipeline::contiguousRows(Value base) const {
  return [this, base](Value srcRow, Value col, int64_t) {
    return kb.add(base, kb.add(kb.mul(srcRow, kb.idx(headDim)), col));
  };
}

Value AsyncCopyPipeline::loadTileAt(Value smem, Value smemRow, Value gmem,
                                    SourceOf srcOf, Value rowStart, Value nRows,
                                    int64_t numRows) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  int64_t chunksPerRow = headDim / 8;
  assert(threads % chunksPerRow == 0 && "copies must cover whole rows");
  int64_t rowsPerCopy = threads / chunksPerRow;
  int64_t iters = numRows / rowsPerCopy;
  int64_t rowStride = cast<MemRefType>(smem.getType()).getShape()[1];
  // Copy i of the thread: row laneRow + i * rowsPerCopy, column laneCol.
  Value laneRow = kb.div(tid, chunksPerRow);
  Value laneCol = kb.mul(kb.rem(tid, chunksPerRow), kb.idx(8));
  // The lane's shared address, computed in 32 bits; copy i adds an
  // immediate.
  Value dstRow = kb.toI32(kb.add(smemRow, laneRow));
  Value dstElem = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, dstRow, kb.i32c(rowStride)),
      kb.toI32(laneCol));
  Value dst =
      arith::AddIOp::create(b, loc, kernel::sharedAddress32(kb, smem),
                            arith::MulIOp::create(b, loc, dstElem, kb.i32c(2)));
  Value src0 = kernel::globalAddress(kb, gmem);
  for (int64_t i = 0; i < iters; ++i) {
    Value grow = kb.add(rowStart, kb.add(laneRow, kb.idx(i * rowsPerCopy)));
    Value valid = kb.cmp(arith::CmpIPredicate::slt, grow, nRows);
    Value srcRow = arith::SelectOp::create(b, loc, valid, grow, kb.idx(0));
    Value src = arith::AddIOp::create(
        b, loc, src0, kb.toI64(kb.mul(srcOf(srcRow, laneCol, i), kb.idx(2))));
    Value n = arith::SelectOp::create(b, loc, valid, kb.i32c(16), kb.i32c(0));
    kernel::cpAsync16(kb, dst, i * rowsPerCopy * rowStride * 2, src, n);
  }
  auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokTy, ValueRange{});
}

void AsyncCopyPipeline::wait(Value token, int32_t pendingGroups) const {
  nvgpu::DeviceAsyncWaitOp::create(kb.b, kb.loc, token,
                                   kb.b.getI32IntegerAttr(pendingGroups));
}
