//===- SharedMemoryPlan.cpp - the sm_90a kernel's shared memory -----------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/SharedMemoryPlan.h"

using namespace mlir::fa;
using namespace mlir::fa::sm90;

SharedMemoryPlan mlir::fa::sm90::planSharedMemory(const SM90AttentionDesc &d) {
  constexpr int64_t kBytes = 2; // f16 / bf16
  SharedMemoryPlan p;
  p.subTileQ = kSM90RowsPerWarpgroup * kSwizzleElems * kBytes;
  p.subTileKV = d.blockKV * kSwizzleElems * kBytes;
  p.qOffset = 0;
  p.qBytes = kSM90Warpgroups * kSM90RowsPerWarpgroup * d.headDim * kBytes;
  p.stageBytes = d.blockKV * d.headDim * kBytes;
  p.kOffset = p.qOffset + p.qBytes;
  p.vOffset = p.kOffset + d.stages * p.stageBytes;
  p.pOffset = p.vOffset + d.stages * p.stageBytes;
  p.pBytesPerWarpgroup =
      d.pFromRegisters ? 0 : kSM90RowsPerWarpgroup * d.blockKV * kBytes;
  p.totalBytes = p.pOffset + kSM90Warpgroups * p.pBytesPerWarpgroup;
  p.dynamicBytes = p.totalBytes + kSwizzleAtomBytes;
  return p;
}
