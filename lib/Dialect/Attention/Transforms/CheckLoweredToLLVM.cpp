//===- CheckLoweredToLLVM.cpp - nothing left outside the llvm dialect -----===//
//
// fa-check-lowered-to-llvm: the conversions of a CPU pipeline leave an op they
// cannot lower as it is; this check makes the pipeline fail there, at the op,
// rather than succeed with output that mlir-translate or a JIT rejects later.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FACHECKLOWEREDTOLLVMPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

namespace {
struct FACheckLoweredToLLVMPass
    : fa::impl::FACheckLoweredToLLVMPassBase<FACheckLoweredToLLVMPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      // Modules hold the program (nested ones included); their ops count.
      if (isa<ModuleOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      // By name: the CPU-only libraries must not depend on the gpu dialect.
      StringRef name = op->getName().getStringRef();
      if (gpuLaunches && (name == "gpu.binary" || name == "gpu.launch_func"))
        return WalkResult::advance();
      ok = false;
      op->emitOpError() << pipeline
                        << ": could not lower this op to the llvm dialect";
      // Its body is reported with it.
      return WalkResult::skip();
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
