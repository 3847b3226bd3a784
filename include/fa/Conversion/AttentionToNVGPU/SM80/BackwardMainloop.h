//===- BackwardMainloop.h - one query block of the backward kernel -*- C++
//-*-===//
//
// The step of the FlashAttention-2 backward kernel (SM80/BackwardKernel.h)
// for one query block of one query head, in a CTA that owns block-kv keys.
// Warps come in pairs: warp w takes keys 32 (w / 2) .. + 31 (the rows of
// its m16n8k16 tiles, two m-tiles) and half h = w % 2: query columns
// 32 h .. + 31 of S^T and dP^T, head-dim columns (D / 2) h .. of dK and dV.
// P^T and dS^T pass between the pair through shared memory (a warp's dV
// and dK sum over all of the block's queries):
//   S^T  = K Q^T, P^T = exp(score(S^T) - lse)  (masked to the band)
//   dV  += P^T dO
//   dP^T = V dO^T, dS^T = P^T (dP^T - delta)    (softcap: * (1 - tanh^2))
//   dK  += dS^T Q
//   dQ  += scale dS K                           (dS^T through shared memory;
//                                                f32 atomic adds)
// Everything is computed transposed (keys as rows) so that dK and dV stay in
// the accumulators of the warp that owns the keys.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_BACKWARDMAINLOOP_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_BACKWARDMAINLOOP_H

#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardKernel.h"

#include <array>

namespace mlir::fa::sm80 {

using kernel::BackwardArgs;
using kernel::BackwardCTA;
using kernel::BackwardSchedule;
using kernel::BackwardStep;

/// Keys of a warp (two m16 tiles); a pair of warps shares them.
constexpr int64_t kGradKeysPerWarp = 32;

/// The thread's indices and the keys of its accumulator rows.
struct BackwardTile {
  Value tid, warp, lane, group, quadLane;
  Value keyWarp; ///< warp / 2: the pair, keys 32 keyWarp .. + 31 of the CTA
  Value half;    ///< warp % 2: the pair's half of the queries and of D
  BackwardCTA cta;
  /// Rows of the thread's accumulators: m-tile m's keys kv0 + 32 keyWarp +
  /// 16 m + group (+ 8).
  std::array<std::array<Value, 2>, 2> keys;
};

/// Lane addresses of ldmatrix x4: (aRow, aCol) an A operand from a
/// [rows][k] tile; (bRow, bCol) two B operands (n-tiles) from an [n][k]
/// tile, or transposed an A operand from a [k][rows] tile; (tRow, tCol)
/// transposed two B operands from a [k][n] tile.
struct BackwardLanes {
  Value aRow, aCol, bRow, bCol, tRow, tCol;
};

/// Views of the dynamic shared memory (BackwardSharedMemoryPlan).
struct BackwardBuffers {
  Value tiles; ///< [rows x (D + 8)]: K, V, stages of Q and dO
  Value dsT;   ///< [block-kv x (block-q + 8)]: P^T, then dS^T of the step
  Value stats; ///< [2 stages x (lse as log2, delta) x block-q] f32
};

/// The m16n8 accumulators of dK and dV: D / 8 vector<2x2xf32> each, m-tile
/// m's n-tile n (of the half's D / 2 columns) at m D / 16 + n.
struct GradAccumulators {
  SmallVector<Value> dK, dV;
};

/// Builds one step: adds the step's contributions to `acc` and, with
/// atomics, to dq_accum. Reads the step's stage once its loads are complete
/// and the CTA has synchronized; the caller ends the step with a barrier
/// (the stage and dS^T are free for reuse after it).
void buildBackwardStep(kernel::KernelBuilder &kb, const BackwardConfig &cfg,
                       const BackwardSharedMemoryPlan &plan,
                       const BackwardArgs &args, const BackwardTile &tile,
                       const BackwardLanes &lanes, const BackwardBuffers &buf,
                       const BackwardSchedule &schedule,
                       const BackwardStep &step, GradAccumulators &acc);

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_BACKWARDMAINLOOP_H
