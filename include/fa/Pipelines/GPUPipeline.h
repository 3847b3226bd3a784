//===- GPUPipeline.h - fa-to-gpu --------------------------------*- C++ -*-===//
//
// The whole-program GPU pipeline (library FAPipelinesGPU): every attention of
// a program becomes a kernel in a gpu.module and a launch on the host; the
// rest of the program is lowered as fa-to-cpu lowers it; the result is the
// LLVM dialect that mlir-translate turns into a host object calling the
// mgpu* runtime (lib/Runtime).
//
//===----------------------------------------------------------------------===//
#ifndef FA_PIPELINES_GPUPIPELINE_H
#define FA_PIPELINES_GPUPIPELINE_H

#include "fa/Pipelines/PTXPipeline.h"

namespace mlir::fa {

/// fa.attention anywhere in the functions of a module, to the LLVM dialect
/// with gpu.binary kernels and their launches: fa-tile-attention-for-chip,
/// fa-outline-attention, convert-fa-to-nvgpu{host-launch}, the kernels'
/// lowering to PTX, then the host's bufferization, convert-nvgpu-to-nvvm (the
/// tensor maps), gpu-to-llvm (bare pointers for kernels) and convert-to-llvm.
/// Takes fa-to-ptx's options.
void buildGPUPipeline(OpPassManager &pm, const PTXPipelineOptions &options);

/// Registers `fa-to-gpu` with the global pass pipeline registry (once).
void registerGPUPipeline();

} // namespace mlir::fa

#endif // FA_PIPELINES_GPUPIPELINE_H
