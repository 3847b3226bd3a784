//===- SharedMemoryPlan.h - the sm_90a kernel's shared memory ---*- C++ -*-===//
//
// Where each tile of the sm_90a kernel lives in dynamic shared memory (bytes
// from a 1024-aligned base): the Q tile, the K and V rings, the P tiles when
// P goes through shared memory. One function, used both by the fit check
// (checkSM90AttentionDesc) and by the builder.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_SHAREDMEMORYPLAN_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_SHAREDMEMORYPLAN_H

#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"

namespace mlir::fa::sm90 {

/// Shared memory a block may opt into on H100/H200
/// (cudaDevAttrMaxSharedMemoryPerBlockOptin): 227 KiB.
constexpr int64_t kSharedMemoryLimitBytes = 227 * 1024;
/// 16-bit elements per 128-byte swizzle row: TMA boxes and wgmma operands
/// are [rows x 64] sub-tiles (fp8: [rows x 128], kSwizzleRowBytes bytes).
constexpr int64_t kSwizzleElems = 64;
constexpr int64_t kSwizzleRowBytes = 128;
/// Alignment of the 128-byte swizzle atom (8 rows of 128 bytes); the
/// dynamic buffer is over-allocated by this much and realigned.
constexpr int64_t kSwizzleAtomBytes = 1024;

struct SharedMemoryPlan {
  /// Bytes of an input tile's row in one sub-tile: 128 (the 128-byte
  /// swizzle), or 64 for fp8 at head dim 64 (the 64-byte swizzle).
  int64_t rowBytes;
  int64_t subTileQ;    ///< one [64 x rowBytes] sub-tile of Q (f16: or P): 8 KiB
  int64_t subTileO;    ///< one [64 x 64] 16-bit sub-tile of the staged O: 8 KiB
  int64_t subTileKV;   ///< one [blockKV x 64] sub-tile of K or V
  int64_t qOffset, qBytes;     ///< the Q tile (two warpgroups' 64 rows)
  /// Q tiles (persistent q-buffers): tile n of the CTA uses Q tile n % 2 at
  /// qOffset + (n % 2) * qBytes.
  int64_t qBuffers;
  int64_t stageBytes;          ///< one K (or V) tile of the ring
  int64_t kOffset, vOffset;    ///< the K ring, the V ring (stages tiles)
  int64_t pOffset, pBytesPerWarpgroup; ///< P tiles (0 with P in registers)
  /// transpose-v: the V tiles as TMA brings them ([blockKV x rowBytes]
  /// sub-tiles, like K), one per stage, before the producer transposes them
  /// into the V ring; 0 bytes otherwise.
  int64_t vStagingOffset, vStagingBytes;
  /// Where the epilogue stages O (16-bit, [64 x 64] sub-tiles of subTileQ
  /// bytes): the Q tile (the tile's own with two), or with fp8 inputs (Q takes half of O's bytes, and
  /// one warpgroup's O would cover the other's Q) a tile of its own.
  int64_t oOffset;
  /// The CTA's shared scan of a mask_mod that reads captured tensors
  /// (KernelScoreModifiers::WarpShare: full-block ballots and each warp's
  /// range), i32 words; 0 bytes without one.
  int64_t scanOffset, scanBytes;
  /// Dynamic tiles: the coordinates of each Q tile's tile (query block,
  /// head, batch: kTileSlotBytes per Q tile), written by the producer before
  /// it loads that Q; 0 bytes otherwise.
  int64_t tileSlotOffset, tileSlotBytes;
  static constexpr int64_t kTileSlotBytes = 12;
  /// O is staged in the tile's Q buffer.
  bool oInQTile() const { return oOffset == qOffset; }
  int64_t totalBytes;          ///< from the aligned base
  int64_t dynamicBytes;        ///< what the launch asks for (+ realignment)
};

SharedMemoryPlan planSharedMemory(const SM90AttentionDesc &desc);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_SHAREDMEMORYPLAN_H
