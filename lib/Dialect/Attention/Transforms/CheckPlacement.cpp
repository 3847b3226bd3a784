//===- CheckPlacement.cpp - fa ops where the pipelines lower them ---------===//
//
// fa-to-cpu bufferizes the functions of the module it runs on, and fa-to-ptx
// puts kernels and manifests into that module: an fa op anywhere else (a
// function of a nested builtin.module, or no function at all) would be left
// unlowered or fail later with an unrelated message.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FACHECKPLACEMENTPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

/// `'builtin.module' @inner` (or without the name) for an op holding `op`.
static void describe(InFlightDiagnostic &diag, Operation *op) {
  diag << "'" << op->getName() << "'";
  if (auto name =
          op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    diag << " @" << name.getValue();
}

LogicalResult mlir::fa::checkAttentionPlacement(ModuleOp module,
                                                StringRef who) {
  bool ok = true;
  module.walk([&](Operation *op) {
    if (!isa<AttentionOp, AttentionGradOp, OnlineAttentionOp, KVBlockRangeOp>(op))
      return;
    auto func = op->getParentOfType<func::FuncOp>();
    if (func && func->getParentOp() == module.getOperation())
      return;
    ok = false;
    InFlightDiagnostic diag = op->emitOpError()
                              << who
                              << ": must be in a func.func directly in the "
                                 "module the pipeline runs on, ";
    if (!func) {
      diag << "not outside any func.func (in ";
      describe(diag, op->getParentOp());
      diag << ")";
      return;
    }
    diag << "not in one nested in ";
    describe(diag, func->getParentOp());
    if (isa<ModuleOp>(func->getParentOp()))
      diag << " (run the pipeline on that module: "
              "--pass-pipeline='builtin.module(builtin.module(...))')";
  });
  return success(ok);
}

namespace {
struct FACheckPlacementPass
    : fa::impl::FACheckPlacementPassBase<FACheckPlacementPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkAttentionPlacement(getOperation(), pipeline)))
      signalPassFailure();
  }
};
} // namespace
