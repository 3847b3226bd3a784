//===- Pipelines.cpp - every named fa pipeline ----------------------------===//
#include "fa/Pipelines/Pipelines.h"

void mlir::fa::registerPipelines() {
  registerCPUPipeline();
  registerPTXPipeline();
  registerGPUPipeline();
}
