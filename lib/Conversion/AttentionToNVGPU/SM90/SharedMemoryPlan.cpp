//===- SharedMemoryPlan.cpp - the sm_90a kernel's shared memory -----------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/SharedMemoryPlan.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Barriers.h"

#include <algorithm>

using namespace mlir::fa;
using namespace mlir::fa::sm90;

SharedMemoryPlan mlir::fa::sm90::planSharedMemory(const SM90AttentionDesc &d) {
  // Bytes per input element: 2 (f16 / bf16) or 1 (fp8). A sub-tile is
  // [rows x 128 bytes] either way.
  int64_t kBytes = d.isFP8() ? 1 : 2;
  SharedMemoryPlan p;
  p.rowBytes = std::min(kSwizzleRowBytes, d.headDim * kBytes);
  p.subTileQ = kSM90RowsPerWarpgroup * p.rowBytes;
  p.subTileO = kSM90RowsPerWarpgroup * kSwizzleRowBytes;
  p.subTileKV = d.blockKV * p.rowBytes;
  p.qOffset = 0;
  p.qBytes = d.blockQ() * d.headDim * kBytes;
  p.stageBytes = d.blockKV * d.headDim * kBytes;
  p.qBuffers = d.persistent && d.warpSpecialized ? d.qBuffers : 1;
  p.kOffset = p.qOffset + p.qBuffers * p.qBytes;
  p.vOffset = p.kOffset + d.stages * p.stageBytes;
  p.pOffset = p.vOffset + d.stages * p.stageBytes;
  p.pBytesPerWarpgroup =
      d.pFromRegisters ? 0 : kSM90RowsPerWarpgroup * d.blockKV * kBytes;
  p.totalBytes = p.pOffset + d.consumerWarpgroups * p.pBytesPerWarpgroup;
  p.vStagingOffset = p.totalBytes;
  p.vStagingBytes = d.transposeV ? d.stages * p.stageBytes : 0;
  p.totalBytes += p.vStagingBytes;
  p.oOffset = p.qOffset;
  if (d.isFP8()) {
    p.oOffset = p.totalBytes;
    p.totalBytes += d.blockQ() * d.headDim * 2;
  }
  p.scanOffset = p.totalBytes;
  p.scanBytes = 0;
  if (d.modifiers.classifyingReadsTensors())
    p.scanBytes =
        4 * kernel::KernelScoreModifiers::scanScratchWords(
                (d.consumerWarpgroups + 1) * kThreadsPerWarpgroup / 32);
  p.totalBytes += p.scanBytes;
  p.tileSlotOffset = p.totalBytes;
  p.tileSlotBytes =
      d.dynamicTiles && d.persistent && d.warpSpecialized
          ? SharedMemoryPlan::kTileSlotBytes * p.qBuffers
          : 0;
  p.totalBytes += p.tileSlotBytes;
  p.dynamicBytes = p.totalBytes + kSwizzleAtomBytes;
  return p;
}
