//===- WarpRoles.h - producer and consumer warpgroups of sm_90a -*- C++ -*-===//
//
// Who issues the loads. Warp specialized: a producer warpgroup (registers
// given back with setmaxnreg.dec) whose thread 0 streams Q and every K/V
// block into the ring, and two consumer warpgroups (setmaxnreg.inc).
// Otherwise thread 0 of the consumers issues Q and the first blocks, and
// refills each stage after a CTA barrier (ConsumerMainloop).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_WARPROLES_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_WARPROLES_H

#include "fa/Conversion/AttentionToNVGPU/SM90/LoadPipeline.h"

namespace mlir::fa::sm90 {

/// What a persistent CTA's tile loops need.
struct PersistentTiles {
  kernel::TileScheduler scheduler;
  kernel::TileScheduler::TileCount count;
  kernel::ProblemSizes sizes;
  /// Dynamic tiles: the tile counter (KernelArgs::tileCounter); else null.
  Value counter;
  /// The kernel's arguments (varlen: each tile reads its sequence's offsets).
  const KernelArgs *args = nullptr;
};

/// Without warp specialization: thread `isIssuer` issues Q and the first
/// `stages` K/V blocks of the tile.
/// `qIssued`: Q's load was issued already (before the key range's scan).
void buildIssuerPrologue(KernelBuilder &kb, const KernelConfig &cfg,
                         const TMALoadPipeline &loads,
                         const SharedMemory &smem, const TileState &tile,
                         const KVRange &range, Value isIssuer,
                         bool qIssued = false);

/// Splits the CTA into the producer warpgroup (built here: one tile, or the
/// persistent tile loop when `persistent` is given) and the consumers; returns
/// with the insertion point in the consumers' branch.
void buildWarpSpecializedRoles(KernelBuilder &kb, const KernelConfig &cfg,
                               const TMALoadPipeline &loads,
                               const SharedMemory &smem,
                               const ThreadIds &thread, const TileState *tile,
                               const KVRange *range,
                               const PersistentTiles *persistent,
                               bool qIssued = false);

/// Whether this thread issues the tile's loads (one tile per CTA, before the
/// roles split): the producer warpgroup's first thread, or the CTA's.
Value isTileLoadIssuer(KernelBuilder &kb, const KernelConfig &cfg,
                       const ThreadIds &thread);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_WARPROLES_H
