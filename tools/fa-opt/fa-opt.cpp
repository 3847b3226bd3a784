//===- fa-opt.cpp - the fa optimizer driver -------------------------------===//
//
// Registers fa through mlir::fa::registerAll (the dialect, its passes and
// pipelines, and what the pipelines need: fa/Registration/InitAll.h), then
// every upstream dialect, extension and pass, so that tests can mix fa with
// any upstream IR and pass.
//
//===----------------------------------------------------------------------===//
#include "fa/Registration/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::fa::registerAll(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fa optimizer driver\n", registry));
}
