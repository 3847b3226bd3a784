//===- Registration.cpp - C API: register fa, compile through a pipeline --===//
#include "fa-c/Registration.h"

#include "fa/Registration/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

void faRegisterAllDialects(MlirDialectRegistry registry) {
  fa::registerDialects(*unwrap(registry));
  fa::registerPipelineDependencies(*unwrap(registry));
}

void faRegisterAllPassesAndPipelines(void) {
  fa::registerAllPassesAndPipelines();
}

MlirLogicalResult faCompileModule(MlirModule module, MlirStringRef pipeline) {
  fa::registerAllPassesAndPipelines();
  ModuleOp op = unwrap(module);
  PassManager pm(op->getContext());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  // Anchored on builtin.module: the pipeline's passes run on `module` itself.
  if (failed(parsePassPipeline(unwrap(pipeline), pm, errorStream))) {
    emitError(op.getLoc()) << "fa: invalid pipeline '" << unwrap(pipeline)
                           << "': " << error;
    return wrap(failure());
  }
  return wrap(pm.run(op));
}
