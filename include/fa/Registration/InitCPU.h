//===- InitCPU.h - register fa for the CPU pipeline alone -------*- C++ -*-===//
//
// The entry points for a compiler that embeds fa for the CPU only (library
// FARegistrationCPU; docs/Embedding.md): it links none of fa's GPU code
// (FAAttentionToNVGPU, FAPipelinesGPU) and refers to no GPU dialect, NVVM
// target or GPU translation.
//
//   mlir::DialectRegistry registry;
//   mlir::fa::registerAllCPU(registry);
//   mlir::MLIRContext context(registry);
//   ... mlir::parsePassPipeline("fa-to-cpu", pm) ...
//
// fa/Registration/InitAll.h adds the GPU side on top of these.
//
//===----------------------------------------------------------------------===//
#ifndef FA_REGISTRATION_INITCPU_H
#define FA_REGISTRATION_INITCPU_H

namespace mlir {
class DialectRegistry;

namespace fa {

/// Adds the fa dialect.
void registerDialects(DialectRegistry &registry);

/// Adds what `fa-to-cpu` needs beyond fa itself: the dialects it parses and
/// produces, the bufferization and buffer-deallocation external models, the
/// value-bounds models, and the ConvertToLLVMPatternInterface of arith, cf,
/// func, index, math, memref, ub and vector.
void registerCPUPipelineDependencies(DialectRegistry &registry);

/// Registers fa's passes (fa-*) and the `fa-to-cpu` pipeline with the global
/// pass registry. Safe to call more than once.
void registerCPUPassesAndPipelines();

/// registerDialects + registerCPUPipelineDependencies +
/// registerCPUPassesAndPipelines.
void registerAllCPU(DialectRegistry &registry);

} // namespace fa
} // namespace mlir

#endif // FA_REGISTRATION_INITCPU_H
