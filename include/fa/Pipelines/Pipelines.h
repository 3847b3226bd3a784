//===- Pipelines.h - named fa pass pipelines --------------------*- C++ -*-===//
#ifndef FA_PIPELINES_PIPELINES_H
#define FA_PIPELINES_PIPELINES_H

#include "fa/Pipelines/CPUPipeline.h"
#include "fa/Pipelines/GPUPipeline.h"
#include "fa/Pipelines/PTXPipeline.h"

namespace mlir::fa {

/// Registers every named fa pipeline with the pass registry.
void registerPipelines();

} // namespace mlir::fa

#endif // FA_PIPELINES_PIPELINES_H
