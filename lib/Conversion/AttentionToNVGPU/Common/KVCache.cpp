//===- KVCache.cpp - per-sequence key lengths and paged K/V pools ---------===//
#include "fa/Conversion/AttentionToNVGPU/Common/KVCache.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa::kernel;

/// clamp(v, lo, hi) on index values.
static Value clampIndex(KernelBuilder &kb, Value v, Value lo, Value hi) {
  Value atLeast = arith::MaxSIOp::create(kb.b, kb.loc, v, lo);
  return arith::MinSIOp::create(kb.b, kb.loc, atLeast, hi);
}

SequenceKeys SequenceKeys::of(KernelBuilder &kb, const KVCacheLayout &layout,
                              const KVCacheArgs &args, Value batch,
                              Value kvHead, Value kvHeads, Value capacity) {
  SequenceKeys s;
  s.layout = layout;
  s.length = capacity;
  if (layout.kvLens) {
    Value len = memref::LoadOp::create(kb.b, kb.loc, args.kvLens,
                                       ValueRange{batch});
    s.length = clampIndex(kb, kb.asIndex(len), kb.idx(0), capacity);
  }
  s.kvHead = kvHead;
  s.kvHeads = kvHeads;
  if (layout.paged()) {
    s.pageTable = args.pageTable;
    s.numPages = args.numPages;
    s.maxPages = args.maxPages;
    s.tableBase = kb.mul(batch, args.maxPages);
  } else {
    s.planeRow = kb.mul(kb.add(kb.mul(batch, kvHeads), kvHead), capacity);
  }
  return s;
}

Value SequenceKeys::pageOf(KernelBuilder &kb, Value key) const {
  // Blocks past the sequence (the last block's tail) may index past the
  // table: those keys are masked, any in-bounds page will do.
  Value index = arith::MinUIOp::create(kb.b, kb.loc, kb.div(key, layout.pageSize),
                                       kb.sub(maxPages, kb.idx(1)));
  Value id = memref::LoadOp::create(kb.b, kb.loc, pageTable,
                                    ValueRange{kb.add(tableBase, index)});
  return clampIndex(kb, kb.asIndex(id), kb.idx(0), kb.sub(numPages, kb.idx(1)));
}

Value SequenceKeys::pagePlane(KernelBuilder &kb, Value key) const {
  return kb.add(kb.mul(pageOf(kb, key), kvHeads), kvHead);
}

Value SequenceKeys::rowOf(KernelBuilder &kb, Value key) const {
  if (!layout.paged())
    return kb.add(planeRow, key);
  return kb.add(kb.mul(pagePlane(kb, key), kb.idx(layout.pageSize)),
                kb.rem(key, layout.pageSize));
}
