//===- Plugin.cpp - fa as a plugin of a stock mlir-opt --------------------===//
//
// FAPlugin.so is both a dialect plugin and a pass plugin of MLIR 22's
// mlir-opt (docs/Embedding.md, "The mlir-opt plugin"):
//
//   mlir-opt-22 --load-dialect-plugin=FAPlugin.so --load-pass-plugin=FAPlugin.so \
//     input.mlir --fa-to-cpu
//
// The dialect plugin adds the fa dialect to mlir-opt's registry, which already
// holds every upstream dialect, extension and translation that fa's pipelines
// need (mlir-opt registers them all), so registerPipelineDependencies is not
// called: adding the same external models a second time is not what a plugin
// should do to its host. The pass plugin registers fa's passes and named
// pipelines (fa-*, convert-fa-to-nvgpu, fa-dump-kernel, fa-to-cpu, fa-to-ptx).
// The dialect plugin registers them too, as upstream's standalone plugin does,
// so that either flag alone is enough; registration is idempotent.
//
// The library links libMLIR.so, the one mlir-opt-22 links: fa's static
// libraries resolve against it and no second copy of MLIR (whose TypeIDs and
// registries would differ from the host's) enters the process.
//
//===----------------------------------------------------------------------===//
#include "fa/Registration/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

static void registerFADialectPlugin(DialectRegistry *registry) {
  fa::registerDialects(*registry);
  fa::registerAllPassesAndPipelines();
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "fa", LLVM_VERSION_STRING,
          registerFADialectPlugin};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "fa", LLVM_VERSION_STRING,
          fa::registerAllPassesAndPipelines};
}
