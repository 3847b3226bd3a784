//===- fa-embed.cpp - a compiler embedding fa -----------------------------===//
//
//   fa-embed <input.mlir> <pipeline>
//
// Parses a module that holds fa.attention, runs <pipeline> on it (a textual
// pass pipeline run on the module: "fa-to-cpu", "fa-to-ptx{chip=sm_90a}",
// "fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=out}", ...) and prints the
// result. Everything it knows about fa and what fa's pipelines need comes from
// one call, mlir::fa::registerAll; it registers nothing else.
//
// Built with FA_EMBED_CPU_ONLY (fa-embed-cpu), it calls mlir::fa::registerAllCPU
// instead and links FA::FARegistrationCPU: fa-to-cpu only, and none of fa's
// GPU code or upstream's GPU targets (test/Embedding/cpu-only.test).
//
//===----------------------------------------------------------------------===//
#ifdef FA_EMBED_CPU_ONLY
#include "fa/Registration/InitCPU.h"
#else
#include "fa/Registration/InitAll.h"
#endif

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: fa-embed <input.mlir> <pipeline>\n";
    return 2;
  }

  mlir::DialectRegistry registry;
#ifdef FA_EMBED_CPU_ONLY
  mlir::fa::registerAllCPU(registry);
#else
  mlir::fa::registerAll(registry);
#endif
  mlir::MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], sourceMgr, &context);
  if (!module)
    return 1;

  // The passes of <pipeline> run on the module itself (pm is anchored on
  // builtin.module; text wrapped in "builtin.module(...)" here would nest).
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(argv[2], pm, llvm::errs())))
    return 1;
  if (mlir::failed(pm.run(*module)))
    return 1;

  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
