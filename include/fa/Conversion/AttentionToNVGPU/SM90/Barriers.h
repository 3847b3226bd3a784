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

/// Named barriers (bar.sync ids) of a kernel with `warpgroups` consumer
/// warpgroups. 0 is the CTA barrier (gpu.barrier / __syncthreads); then, per
/// consumer warpgroup w:
/// - warpgroupBarrier(w): its 128 threads (P written to shared memory, O
///   staged before the copy out);
/// - turnBarrier(w): its turn to issue its GEMMs (ping-pong; 256 threads:
///   it syncs, the warpgroup before it arrives);
/// consumersBarrier(): all consumer threads (split-kv: the chunk's
/// partials written before the arrival, the arrival's ticket read); and
/// producerBarrier(): the producer warpgroup (transpose-v: every warp done
/// with a staging tile before TMA refills it).
/// With two consumer warpgroups: 1-2, 3-4, 5, 6.
struct NamedBarriers {
  int64_t warpgroups;
  int64_t warpgroupBarrier(int64_t w) const { return 1 + w; }
  int64_t turnBarrier(int64_t w) const { return 1 + warpgroups + w; }
  int64_t consumersBarrier() const { return 1 + 2 * warpgroups; }
  int64_t producerBarrier() const { return 2 + 2 * warpgroups; }
};

/// The mbarrier slots: 0 = Q full; 1 + s = K of stage s full; 1 + S + s = V
/// of stage s full; with warp specialization 1 + 2S + s = stage s released
/// by the consumers (with split release: K of stage s released, and
/// 1 + 3S + s = V of stage s released); persistent: then one more, the Q
/// tile is free (every consumer thread arrives once its epilogue has read O
/// back from it); with two Q buffers then Q tile 1 full and Q tile 1 free
/// (qFullSlot, qFreeSlot). With transpose-v, then one per stage: V of stage
/// s staged (TMA into the staging tile, vStagedBase), and "V of stage s
/// full" is the producer warpgroup's 128 arrivals once it has transposed it.
struct MBarrierLayout {
  int64_t stages;
  bool warpSpecialized, splitRelease, persistent, warpArrive;
  int64_t qBuffers = 1;
  int64_t consumerWarpgroups = kSM90Warpgroups;
  bool transposeV = false;

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
    return vStagedBase() + (transposeV ? stages : 0);
  }
  /// transpose-v: V of stage s in its staging tile: vStagedBase() + s.
  int64_t vStagedBase() const {
    return qFree() + (persistent ? 1 : 0) + 2 * (qBuffers - 1);
  }
  /// Arrivals slot `i` expects per phase: the issuing thread (full slots,
  /// with expect_tx), every consumer thread or one lane per consumer warp
  /// (released), every consumer thread (Q free).
  int64_t arrivals(int64_t i) const {
    if (transposeV && i >= vStagedBase())
      return 1;
    if (transposeV && i >= vFullBase() && i < vFullBase() + stages)
      return kThreadsPerWarpgroup;
    if (i == qFree() || (qBuffers > 1 && i == qFree() + qFreeStride()))
      return consumerWarpgroups * kThreadsPerWarpgroup;
    if (qBuffers > 1 && i == qFullStride())
      return 1;
    if (i > 2 * stages)
      return consumerWarpgroups *
             (warpArrive ? kWarpsPerWarpgroup : kThreadsPerWarpgroup);
    return 1;
  }
};

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_BARRIERS_H
