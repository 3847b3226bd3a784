//===- TileScheduler.cpp - which tile a CTA works on ----------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/TileScheduler.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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
  if (longestFirst) {
    // clamp(kL2SectionBytes / (Nk * kvRowBytes), 1, planes).
    Value planeBytes = arith::MaxUIOp::create(
        kb.b, kb.loc, kb.mul(sizes.keyLength, kb.idx(kvRowBytes)), kb.idx(1));
    Value fit = arith::DivUIOp::create(kb.b, kb.loc, kb.idx(kL2SectionBytes),
                                       planeBytes);
    Value planes = kb.mul(sizes.queryHeads, batchIndex(kb, sizes));
    n.sectionPlanes = arith::MinUIOp::create(
        kb.b, kb.loc, arith::MaxUIOp::create(kb.b, kb.loc, fit, kb.idx(1)),
        planes);
  }
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
    // Section s holds planes [s g, s g + n), n = min(g, planes - s g); its
    // tiles are n planes' last query block, then their one before, ...
    Value planes = kb.mul(sizes.queryHeads, batchIndex(kb, sizes));
    Value g = count.sectionPlanes;
    Value perSection = kb.mul(g, count.queryBlocks);
    Value first = kb.mul(divV(tile, perSection), g);
    Value within = remV(tile, perSection);
    Value n = arith::MinUIOp::create(b, kb.loc, g, kb.sub(planes, first));
    c.qBlock = kb.sub(kb.sub(count.queryBlocks, kb.idx(1)), divV(within, n));
    rest = kb.add(first, remV(within, n));
  } else {
    c.qBlock = remV(tile, count.queryBlocks);
    rest = divV(tile, count.queryBlocks);
  }
  c.head = remV(rest, sizes.queryHeads);
  c.batch = divV(rest, sizes.queryHeads);
  return c;
}

/// atomicrmw `kind` of `value` on counter[word] (NVPTX emits a relaxed
/// atom.global); the old value as an index.
static Value counterRMW(KernelBuilder &kb, arith::AtomicRMWKind kind,
                        Value counter, int64_t word, int32_t value) {
  Value old = memref::AtomicRMWOp::create(kb.b, kb.loc, kind, kb.i32c(value),
                                          counter, ValueRange{kb.idx(word)});
  return kb.asIndex(old);
}

Value TileScheduler::claimNextTile(KernelBuilder &kb, Value counter) const {
  return kb.add(gpu::GridDimOp::create(kb.b, kb.loc, gpu::Dimension::x),
                counterRMW(kb, arith::AtomicRMWKind::addi, counter, 0, 1));
}

void TileScheduler::retireCTA(KernelBuilder &kb, Value counter) const {
  // Every CTA counts itself out after its last claim, a fence between (the
  // atomics are relaxed), so when the last one is out every claim of this
  // launch is ordered before its reset (the fence after its count).
  NVVM::MembarOp::create(kb.b, kb.loc, NVVM::MemScopeKind::GPU);
  Value out = counterRMW(kb, arith::AtomicRMWKind::addi, counter, 1, 1);
  Value last = kb.sub(gpu::GridDimOp::create(kb.b, kb.loc, gpu::Dimension::x),
                      kb.idx(1));
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, out, last), [&] {
    NVVM::MembarOp::create(kb.b, kb.loc, NVVM::MemScopeKind::GPU);
    counterRMW(kb, arith::AtomicRMWKind::assign, counter, 0, 0);
    counterRMW(kb, arith::AtomicRMWKind::assign, counter, 1, 0);
  });
}
