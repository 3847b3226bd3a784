//===- VTranspose.h - fp8 V transposed in shared memory (sm_90a) -*- C++ -*-===//
//
// transpose-v: an 8-bit wgmma reads its B operand only K-major, so P V needs
// V^T (keys contiguous). Without a pre-pass the kernel takes V as stored
// ([B, Hkv, Nk, D] e4m3, like K): TMA brings each V tile into a staging tile
// and the producer warpgroup transposes it into the V ring, keys of each
// 16-key group in kFP8VKeyOrder (the order P leaves the S accumulator in),
// FlashAttention-3's way: ldmatrix.trans of 8x8 16-bit matrices (two keys'
// bytes of a pair of head-dim rows), two byte permutes per output word,
// stmatrix. docs/FP8.md ("The V layout decision").
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_VTRANSPOSE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_VTRANSPOSE_H

#include "fa/Conversion/AttentionToNVGPU/SM90/LoadPipeline.h"

namespace mlir::fa::sm90 {

/// The producer warpgroup's work for one tile with transpose-v (every one of
/// its 128 threads runs it; `threadInWG` is the thread's index in it): its
/// thread 0 issues Q (unless `qIssued`) and the K/V loads (V into staging
/// tiles) S - 1 blocks ahead, and at each block all threads transpose the
/// block's staged V into the ring once the consumers released that V^T
/// buffer, then arrive on the stage's "V full" mbarrier.
void streamTileTransposingV(KernelBuilder &kb, const KernelConfig &cfg,
                            const TMALoadPipeline &loads,
                            const SharedMemory &smem, const TileState &tile,
                            const KVRange &range, Value threadInWG,
                            bool qIssued);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_VTRANSPOSE_H
