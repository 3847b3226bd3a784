//===- ReportPipelineError.cpp - fail a pipeline with a message -----------===//
//
// fa-report-pipeline-error: what a named pipeline's builder adds instead of
// its passes when an option value is invalid (builders cannot emit
// diagnostics themselves).
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAREPORTPIPELINEERRORPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

namespace {
struct FAReportPipelineErrorPass
    : public fa::impl::FAReportPipelineErrorPassBase<FAReportPipelineErrorPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError(message);
    signalPassFailure();
  }
};
} // namespace
