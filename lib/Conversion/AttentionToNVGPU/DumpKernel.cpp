//===- DumpKernel.cpp - write PTX and launch manifests to disk ------------===//
#include "fa/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FADUMPKERNELPASS
#include "fa/Conversion/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

static LogicalResult writeFile(Operation *op, StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return op->emitError("fa-dump-kernel: cannot write '")
           << path << "': " << ec.message();
  os << text;
  return success();
}

namespace {
struct FADumpKernelPass
    : public fa::impl::FADumpKernelPassBase<FADumpKernelPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      module.emitError("fa-dump-kernel: cannot create directory '")
          << dir << "': " << ec.message();
      return signalPassFailure();
    }
    for (auto bin : module.getOps<gpu::BinaryOp>()) {
      auto manifest = module->getAttrOfType<DictionaryAttr>(
          ("fa.manifest." + bin.getSymName()).str());
      if (!manifest)
        continue;
      auto kernel = manifest.getAs<StringAttr>("kernel");
      auto json = manifest.getAs<StringAttr>("json");
      gpu::ObjectAttr ptx;
      for (Attribute a : bin.getObjects())
        if (auto obj = dyn_cast<gpu::ObjectAttr>(a);
            obj && obj.getFormat() == gpu::CompilationTarget::Assembly)
          ptx = obj;
      if (!ptx || !kernel || !json) {
        bin.emitError("fa-dump-kernel: no PTX object (use "
                      "gpu-module-to-binary{format=isa}) or malformed manifest");
        return signalPassFailure();
      }
      SmallString<128> ptxPath(dir), jsonPath(dir);
      llvm::sys::path::append(ptxPath, kernel.getValue() + ".ptx");
      llvm::sys::path::append(jsonPath, kernel.getValue() + ".json");
      if (failed(writeFile(bin, ptxPath, ptx.getObject().getValue())) ||
          failed(writeFile(bin, jsonPath, json.getValue().str() + "\n")))
        return signalPassFailure();
    }
  }
};
} // namespace
