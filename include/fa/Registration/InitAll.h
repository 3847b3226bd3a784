//===- InitAll.h - register fa and what its pipelines need ------*- C++ -*-===//
//
// The entry points for a compiler that embeds fa (docs/Embedding.md):
//
//   mlir::DialectRegistry registry;
//   mlir::fa::registerAll(registry);        // dialects, interfaces, translations,
//                                           // fa's passes and named pipelines
//   mlir::MLIRContext context(registry);
//   ... mlir::parsePassPipeline("fa-to-cpu", pm) ...
//
// Each piece is also available on its own, for a compiler that builds its own
// registry and pass registry; fa/Registration/InitCPU.h (FARegistrationCPU)
// has the CPU pipeline's pieces alone, for a compiler that links no GPU target.
//
//===----------------------------------------------------------------------===//
#ifndef FA_REGISTRATION_INITALL_H
#define FA_REGISTRATION_INITALL_H

#include "fa/Registration/InitCPU.h"

namespace mlir {
class DialectRegistry;

namespace fa {

/// Adds everything upstream that fa's pipelines (fa-to-cpu, fa-to-ptx) need
/// beyond fa itself and beyond what their passes load on their own: the
/// dialects they produce and parse, the external models that one-shot
/// bufferization, buffer deallocation, convert-to-llvm and value bounds use
/// (bufferizable op interfaces of arith, linalg, tensor, scf, cf and func;
/// ConvertToLLVMPatternInterface of arith, cf, func, index, math, memref, ub,
/// vector and nvvm), the NVVM target attribute's serialization model, and the
/// builtin, LLVM, NVVM and GPU translations to LLVM IR that
/// gpu-module-to-binary uses. Includes registerCPUPipelineDependencies.
void registerPipelineDependencies(DialectRegistry &registry);

/// Registers fa's passes (fa-*, convert-fa-to-nvgpu, fa-dump-kernel) and
/// named pipelines (fa-to-cpu, fa-to-ptx) with the global pass registry, so
/// that `parsePassPipeline` and `--pass-pipeline` find them. Upstream passes
/// are not registered (the pipelines build them directly). Safe to call more
/// than once; includes registerCPUPassesAndPipelines.
void registerAllPassesAndPipelines();

/// registerDialects + registerPipelineDependencies +
/// registerAllPassesAndPipelines: one call that makes every fa pipeline
/// runnable on a context built from `registry`.
void registerAll(DialectRegistry &registry);

} // namespace fa
} // namespace mlir

#endif // FA_REGISTRATION_INITALL_H
