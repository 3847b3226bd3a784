//===- DecomposeAggregatedOps.cpp - linalg.softmax and kin, decomposed ----===//
//
// fa-decompose-aggregated-ops: ops of linalg's AggregatedOpInterface
// (linalg.softmax) bufferize but have no loop lowering; the CPU pipeline
// replaces them by their decomposition before bufferization so that a program
// keeping one still lowers to the llvm dialect.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FADECOMPOSEAGGREGATEDOPSPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

namespace {
struct FADecomposeAggregatedOpsPass
    : fa::impl::FADecomposeAggregatedOpsPassBase<FADecomposeAggregatedOpsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      // Upstream decompositions build tensor ops: on buffers they would
      // leave generics that mix both (an invalid module, not a diagnostic).
      if (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<BaseMemRefType>)) {
        op->emitOpError() << "on buffers is not decomposed (the ops it "
                             "aggregates are built on tensors): run "
                             "fa-decompose-aggregated-ops before bufferization";
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts)) {
        op->emitOpError() << "could not be decomposed into the ops it "
                             "aggregates (which the CPU pipeline lowers)";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *parts);
    }
  }
};
} // namespace
