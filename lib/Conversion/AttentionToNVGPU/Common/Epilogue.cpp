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
