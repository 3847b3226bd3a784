//===- fa-opt.cpp - the fa optimizer driver -------------------------------===//
//
// Registers the fa dialect and passes, the upstream dialects, passes and
// extensions the fa pipelines need, and the GPU-to-LLVM-IR translations that
// gpu-module-to-binary uses.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/Attention/IR/AttentionDialect.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::fa::FADialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  mlir::fa::registerFAPasses();
  mlir::fa::registerFAConversionPasses();
  mlir::fa::registerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fa optimizer driver\n", registry));
}
