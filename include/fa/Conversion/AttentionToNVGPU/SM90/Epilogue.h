//===- Epilogue.h - normalization, lse and the O store of sm_90a -*- C++ -*-===//
//
// After a consumer warpgroup's loop: O normalized by 1 / l
// (Common/Epilogue), staged swizzled in the warpgroup's part of the Q tile,
// then copied out with 16-byte stores; the log-sum-exp of each row by its
// lane 0.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_EPILOGUE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_EPILOGUE_H

#include "fa/Conversion/AttentionToNVGPU/SM90/Mainloop.h"

namespace mlir::fa::sm90 {

/// Where the tile's rows go (recomputed for the epilogue of a persistent
/// tile).
struct EpilogueRows {
  Value qPlane; ///< batch * Hq + head
  Value wgRow0; ///< the warpgroup's first query row
  Value rowQ[2]; ///< the thread's two rows
  /// varlen: the plane row of the sequence's row 0 and its row count (the
  /// rows stored are [0, rowEnd)); null: 0 and Nq.
  Value rowOffset, rowEnd;
  /// varlen token-major ([T, Hq, D] out): Hq, the rows' stride in heads;
  /// null for out [B, Hq, Nq, D].
  Value tokenHeads;
};

/// Normalization (O / l, times `outScale` when set: fp8's v descale, the
/// unit O accumulated in), lse, O staged and stored.
void buildEpilogue(KernelBuilder &kb, const KernelConfig &cfg,
                   const KernelArgs &args, const SharedMemory &smem,
                   const ConsumerFrame &frame, const EpilogueRows &rows,
                   const MainloopResult &result, Value outScale = Value());

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_EPILOGUE_H
