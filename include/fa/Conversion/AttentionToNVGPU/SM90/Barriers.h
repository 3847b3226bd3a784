//===- Barriers.h - mbarrier slots and named barriers of sm_90a -*- C++ -*-===//
//
// The CTA's mbarrier group (which slot guards what, how many arrivals each
// expects) and the named barriers (bar.sync ids) of the sm_90a kernel.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_BARRIERS_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_BARRIERS_H

#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"

namespace mlir::fa::sm90 {

constexpr int64_t kThreadsPerWarpgroup = 128;
constexpr int64_t kWarpsPerWarpgroup = 4;

/// Named barriers. 0 is the CTA barrier (gpu.barrier / __syncthreads).
enum NamedBarrier : int64_t {
  /// + warpgroup: the 128 threads of one consumer warpgroup (P written to
  /// shared memory, O staged before the copy out).
  kWarpgroupBarrierBase = 1,
  /// + warpgroup: that consumer warpgroup's turn to issue its GEMMs
  /// (ping-pong; 256 threads: it syncs, the other arrives).
  kTurnBarrierBase = 3,
  /// The 256 threads of the two consumer warpgroups (split-kv: the chunk's
  /// partials written before the arrival, the arrival's ticket read).
  kConsumersBarrier = 5,
};

/// The mbarrier slots: 0 = Q full; 1 + s = K of stage s full; 1 + S + s = V
/// of stage s full; with warp specialization 1 + 2S + s = stage s released
/// by the consumers (with split release: K of stage s released, and
/// 1 + 3S + s = V of stage s released); persistent: then one more, the Q
/// tile is free (every consumer thread arrives once its epilogue has read O
/// back from it); with two Q buffers then Q tile 1 full and Q tile 1 free
/// (qFullSlot, qFreeSlot).
struct MBarrierLayout {
  int64_t stages;
  bool warpSpecialized, splitRelease, persistent, warpArrive;
  int64_t qBuffers = 1;

  static constexpr int64_t kQFull = 0;
  int64_t kFullBase() const { return 1; }
  int64_t vFullBase() const { return 1 + stages; }
  int64_t kReleasedBase() const { return 1 + 2 * stages; }
  int64_t vReleasedBase() const {
    return splitRelease ? 1 + 3 * stages : kReleasedBase();
  }
  int64_t qFree() const { return 1 + (splitRelease ? 4 : 3) * stages; }
  /// Q tile b's "full" and "free" slots: b * (qFree() + 1) and
  /// qFree() + 2 * b (b = 0: kQFull and qFree()).
  int64_t qFullStride() const { return qFree() + 1; }
  int64_t qFreeStride() const { return 2; }
  int64_t count() const {
    if (!warpSpecialized)
      return 1 + 2 * stages;
    return qFree() + (persistent ? 1 : 0) + 2 * (qBuffers - 1);
  }
  /// Arrivals slot `i` expects per phase: the issuing thread (full slots,
  /// with expect_tx), every consumer thread or one lane per consumer warp
  /// (released), every consumer thread (Q free).
  int64_t arrivals(int64_t i) const {
    if (i == qFree() || (qBuffers > 1 && i == qFree() + qFreeStride()))
      return kSM90Warpgroups * kThreadsPerWarpgroup;
    if (qBuffers > 1 && i == qFullStride())
      return 1;
    if (i > 2 * stages)
      return kSM90Warpgroups *
             (warpArrive ? kWarpsPerWarpgroup : kThreadsPerWarpgroup);
    return 1;
  }
};

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_BARRIERS_H
