//===- TileScheduler.cpp - which tile a CTA works on ----------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/TileScheduler.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::fa::kernel;

TileCoord TileScheduler::getBlockTile(KernelBuilder &kb) const {
  OpBuilder &b = kb.b;
  TileCoord c;
  c.qBlock = gpu::BlockIdOp::create(b, kb.loc, gpu::Dimension::x);
  if (longestFirst)
    c.qBlock = kb.sub(
        kb.sub(gpu::GridDimOp::create(b, kb.loc, gpu::Dimension::x), kb.idx(1)),
        c.qBlock);
  c.head = gpu::BlockIdOp::create(b, kb.loc, gpu::Dimension::y);
  c.batch = gpu::BlockIdOp::create(b, kb.loc, gpu::Dimension::z);
  return c;
}

/// The batch size as an index, cast where it is used when it is the i32
/// kernel argument.
static Value batchIndex(KernelBuilder &kb, const ProblemSizes &sizes) {
  return sizes.batch.getType().isIndex() ? sizes.batch
                                         : kb.asIndex(sizes.batch);
}

TileScheduler::TileCount
TileScheduler::getTileCount(KernelBuilder &kb,
                            const ProblemSizes &sizes) const {
  TileCount n;
  n.queryBlocks = kb.div(kb.add(sizes.queryLength, kb.idx(blockQ - 1)), blockQ);
  n.tiles = kb.mul(kb.mul(n.queryBlocks, sizes.queryHeads),
                   batchIndex(kb, sizes));
  return n;
}

TileCoord TileScheduler::decodeTile(KernelBuilder &kb, Value tile,
                                    const TileCount &count,
                                    const ProblemSizes &sizes) const {
  OpBuilder &b = kb.b;
  auto divV = [&](Value x, Value y) -> Value {
    return arith::DivUIOp::create(b, kb.loc, x, y);
  };
  auto remV = [&](Value x, Value y) -> Value {
    return arith::RemUIOp::create(b, kb.loc, x, y);
  };
  TileCoord c;
  Value rest;
  if (longestFirst) {
    Value planes = kb.mul(sizes.queryHeads, batchIndex(kb, sizes));
    c.qBlock = kb.sub(kb.sub(count.queryBlocks, kb.idx(1)), divV(tile, planes));
    rest = remV(tile, planes);
  } else {
    c.qBlock = remV(tile, count.queryBlocks);
    rest = divV(tile, count.queryBlocks);
  }
  c.head = remV(rest, sizes.queryHeads);
  c.batch = divV(rest, sizes.queryHeads);
  return c;
}
