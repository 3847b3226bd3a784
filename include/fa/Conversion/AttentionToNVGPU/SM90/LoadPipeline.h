//===- LoadPipeline.h - TMA + mbarrier ring of the sm_90a kernel -*- C++ -*-===//
//
// The load side of the sm_90a kernel: Q, K and V tiles brought by TMA
// (nvgpu.tma.async.load, 128-byte swizzle, zero fill out of bounds) into a
// ring of `stages` K/V buffers guarded by mbarriers; the stage and phase of
// ring iteration `it` are it % S and (it / S) % 2. The producer waits until
// the consumers released a stage's previous use, then refills it (K and V
// separately with split release); the consumers wait on "full" and arrive on
// "released".
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_LOADPIPELINE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_LOADPIPELINE_H

#include "fa/Conversion/AttentionToNVGPU/SM90/KernelState.h"

namespace mlir::fa::sm90 {

/// Which tiles of a ring stage one issue loads.
enum class KVPart { Key, Value, Both };

class TMALoadPipeline {
public:
  /// Creates the mbarrier group and initializes it (thread `isIssuer`),
  /// then a CTA barrier.
  TMALoadPipeline(KernelBuilder &kb, const KernelConfig &cfg,
                  const KernelArgs &args, Value isIssuer);

  /// Q of the tile (rows q0.. of plane qPlane, both warpgroups) into the Q
  /// tile, on the Q-full mbarrier; with `buffer` (persistent q-buffers) into
  /// Q tile `buffer` on its mbarrier.
  void issueQ(const SharedMemory &smem, Value q0, Value qPlane,
              Value buffer = Value()) const;
  /// A plain arrival (no bytes, no load) on Q tile `buffer`'s "full"
  /// mbarrier: dynamic tiles' end of the consumers' tile loop.
  void arriveQFull(Value buffer) const;
  /// The "full" / "free" mbarrier slot of Q tile `buffer` (null: tile 0).
  Value qFullSlot(Value buffer) const;
  Value qFreeSlot(Value buffer) const;
  /// K and/or V of key block `block` of the tile (plane tile.kvPlane, or
  /// paged the pages of tile.keys) into ring `stage` (transpose-v: V into
  /// the stage's staging tile, on its "staged" mbarrier). Issued by one thread,
  /// or with `lane` by a whole warp: lane 0 issues, the lanes look up a
  /// paged block's pages in parallel.
  void issueKV(const SharedMemory &smem, Value block, Value stage,
               const TileState &tile, KVPart part = KVPart::Both,
               Value lane = Value()) const;

  /// The producer's step for ring iteration `it` (stage `stage`): waits
  /// until the consumers released the stage's previous use, then `issue`s
  /// its loads. With split release K and V are released and refilled
  /// separately (K_j's buffer is free once S_j is done, half a step before
  /// P V frees V's).
  void produce(Value it, Value stage,
               llvm::function_ref<void(KVPart)> issue) const;

  /// Blocks until the consumers released ring iteration `it`'s stage from
  /// its previous use (iteration it - S; nothing to wait for when it < S):
  /// base kReleasedBase() (K, or with one release the whole stage) or
  /// vReleasedBase() (V).
  void waitReleased(int64_t base, Value it, Value stage) const;
  /// Stage and "full" phase of ring iteration `it`.
  Value stageOf(Value it) const;
  Value fullParity(Value it) const;
  /// The phase bit of `round` (i1).
  Value parityOf(Value round) const;
  /// mbarrier slots of stage `stage`.
  Value kFullSlot(Value stage) const;
  Value vFullSlot(Value stage) const;
  /// transpose-v: V of `stage` landed in its staging tile.
  Value vStagedSlot(Value stage) const;
  /// Blocks until slot `slot` completed phase `parity`.
  void wait(Value slot, Value parity) const;
  /// The consumer's arrival on "released": K of `stage` once S is done
  /// (split release only), the stage (or its V) once P V is done.
  void releaseKey(Value stage, Value lane) const;
  void releaseStage(Value stage, Value lane) const;
  /// The persistent Q tile `buffer` (null: tile 0) handed back (every
  /// consumer thread).
  void releaseQTile(Value buffer = Value()) const;
  /// The descriptor base (address >> 4) of ring stage `stage`.
  Value stageDescBase(const SharedMemory &smem, Value stage) const;

  Value barriers() const { return bars; }

private:
  /// A 16-bit K or V tile of block `block` into the ring at byte `dstBase`:
  /// one box of blockKV rows per 128-byte sub-tile, or paged one box per
  /// page chunk (kvBoxRows rows) per sub-tile.
  void issueTile(const SharedMemory &smem, Value dstBase, Value map,
                 Value block, const TileState &tile, Value barId,
                 Value lane) const;
  /// The pool planes of page chunks [first, first + count) of the block
  /// (keys key0 + c * rows), looked up by one thread, or with `lane` one per
  /// lane and handed to every lane by shuffles.
  SmallVector<Value> chunkPlanes(const TileState &tile, Value key0,
                                 int64_t first, int64_t count, int64_t rows,
                                 Value lane) const;
  void arriveReleased(int64_t base, Value stage, Value lane) const;

  KernelBuilder &kb;
  const KernelConfig &cfg;
  const KernelArgs &args;
  Value bars;
};

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_LOADPIPELINE_H
