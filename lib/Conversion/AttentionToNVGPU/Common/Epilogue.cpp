//===- Epilogue.cpp - deferred normalization and log-sum-exp --------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;

RowNormalizer mlir::fa::kernel::finalizeRowSum(KernelBuilder &kb,
                                               Value partialSum) {
  RowNormalizer row;
  row.sum = kb.quadReduce(partialSum, QuadReduction::Add);
  row.isEmpty = arith::CmpFOp::create(kb.b, kb.loc, arith::CmpFPredicate::OEQ,
                                      row.sum, kb.f32(0.0));
  row.inverse = reciprocalRowSum(kb.b, kb.loc, row.sum);
  return row;
}

Value mlir::fa::kernel::rowLogSumExp(KernelBuilder &kb, Value max,
                                     const RowNormalizer &row) {
  Value lse = logSumExpFromLog2Sum(kb.b, kb.loc, max, kb.log2Approx(row.sum));
  return arith::SelectOp::create(
      kb.b, kb.loc, row.isEmpty,
      kb.f32(-std::numeric_limits<double>::infinity()), lse);
}

void mlir::fa::kernel::forEachRowChunk(
    KernelBuilder &kb, Value tid, int64_t threads, int64_t rows,
    int64_t rowChunks, llvm::function_ref<Value(Value row, Value chunk)> inside,
    llvm::function_ref<void()> copy) {
  int64_t chunks = rows * rowChunks;
  for (int64_t i = 0; i * threads < chunks; ++i) {
    Value c = kb.add(tid, kb.idx(threads * i));
    Value row = kb.div(c, rowChunks);
    Value cond = inside(row, kb.rem(c, rowChunks));
    if ((i + 1) * threads > chunks)
      cond = arith::AndIOp::create(
          kb.b, kb.loc, cond,
          kb.cmp(arith::CmpIPredicate::slt, c, kb.idx(chunks)));
    kb.ifThen(cond, copy);
  }
}
