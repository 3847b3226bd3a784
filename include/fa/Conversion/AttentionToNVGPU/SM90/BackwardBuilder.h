//===- BackwardBuilder.h - the sm_90a backward kernel's parts --*- C++ -*-===//
//
// What SM90/BackwardKernel.cpp (the consumers' step and the composer) and
// SM90/BackwardProducer.cpp (the loader and the writer warps) share: the
// thread's place, the shared memory, the TMA ring and GradBuilder, whose
// methods build the kernel's pieces. Not part of the library's interface.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_BACKWARDBUILDER_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_BACKWARDBUILDER_H

#include "fa/Conversion/AttentionToNVGPU/SM90/BackwardKernel.h"

namespace mlir::fa::sm90::grad {

constexpr int64_t kRowBytes = 128;    ///< a swizzled sub-tile row
constexpr int64_t kSubTileElems = 64; ///< 16-bit elements per row
constexpr int64_t kAlignBytes = 1024; ///< the swizzle atom
constexpr int64_t kWarpgroupKeys = 64;
constexpr int64_t kProducerWarpgroup = 2;
/// The producer warpgroup's warps: Q and dO loads, dQ reduce-adds.
constexpr int64_t kLoaderWarp = 0, kWriterWarp = 1;
/// A consumer warpgroup and the writer warp at a dQ tile handover.
constexpr int64_t kTileHandoverThreads = 128 + 32;
/// mbarrier.try_wait suspend-time hint, in ns (as the forward's ring).
constexpr int64_t kTryWaitTicks = 10000000;

using kernel::BackwardArgs;
using kernel::BackwardConfig;
using kernel::BackwardCTA;
using kernel::BackwardSchedule;
using kernel::KernelBuilder;

/// The thread's place in the CTA.
struct Thread {
  Value tid, warpgroup, warp, lane, group, quadLane;
  std::array<Value, 2> keys; ///< its accumulator rows' keys
};

/// The dynamic shared memory from a 1024-aligned base.
struct Shared {
  Value raw, shift;
  Value descBase; ///< the base address >> 4 (i64), for descriptors
  Value descIndex; ///< the same as an index
  Value addr;     ///< the base's shared-memory address (index)
  Value flat32;   ///< the buffer as [totalBytes / 4] f32 (the dQ tile)
  Value dqAccumAddr; ///< dq_accum_map's global address (index)
  Value flat;     ///< [totalBytes / 2] 16-bit elements
  Value stats;    ///< the row statistics, f32
};

/// The TMA loads: the ring of the step's Q and dO, buffer s filled under
/// mbarrier s (one arrival: the loader's expect_tx) and released under
/// mbarrier `stages` + 1 + s (one arrival per consumer warp), and the CTA's
/// K and V under mbarrier `stages`.
struct QueryTileRing {
  Value bars;                    ///< !nvgpu.mbarrier.group of 2 stages + 1
  Value qMap, doMap, kMap, vMap; ///< the tensor maps
  int64_t stages;

  int64_t keyValueSlot() const { return stages; }
  int64_t releasedBase() const { return stages + 1; }
  int64_t count() const { return 2 * stages + 1; }
};

/// A step's query tile in the tensor maps' 32-bit coordinates.
struct QueryTileCoords {
  /// i32: the first query row (varlen: in the packed planes) and the
  /// plane, batch * Hq + head (varlen: head).
  Value q0, plane;
};

struct GradBuilder {
  KernelBuilder &kb;
  const BackwardConfig &cfg;
  const BackwardSharedMemoryPlan &plan;
  const BackwardArgs &args;
  const BackwardCTA &cta;
  const Thread &th;
  const Shared &sh;
  const BackwardSchedule &schedule;
  const QueryTileRing &ring;

  /// The element index of (row, col) of the swizzled tile at `tileByte`
  /// with `rows` rows; `row % 8` given as `row8` when it is known.
  Value swizzled(Value tileByte, int64_t rows, Value row, Value col) const;
  /// The loader's TMA loads of the CTA's K and V (rows past Nk zero).
  void issueKeyValueTiles() const;
  /// Blocks until K and V have landed.
  void waitKeyValueTiles() const;
  /// Step t's tile coordinates, in 32-bit arithmetic (the 64-bit division
  /// of BackwardSchedule::at spills in the producer's 24 registers).
  QueryTileCoords queryTileCoords(Value t) const;
  /// The loader's TMA loads of step t's Q and dO into ring buffer `buffer`.
  void issueQueryTiles(Value t, Value buffer) const;
  /// Blocks until ring buffer `buffer` holds step t's tiles.
  void waitQueryTiles(Value t, Value buffer) const;
  /// A consumer warp is done with ring buffer `buffer` (lane 0 arrives).
  void releaseQueryTiles(Value buffer) const;
  /// The loader warp's lane 0: K and V, then every step's Q and dO, each
  /// buffer refilled once the consumers have released it.
  void streamQueryTiles() const;
  /// The writer warp: per step, each consumer warpgroup's half of the dQ
  /// tile added into dq_accum once it is written (deterministic: in the
  /// CTA's turn), then handed back.
  void addGradQueryTiles() const;
  /// acc = (64 rows at `aByte`, K-major) x (the stage's 64 rows at
  /// `bByte`, K-major)^T over D: S^T or dP^T.
  Value keysTimesQueries(int64_t aByte, Value stageDesc, int64_t bByte) const;
  /// acc += (per 16-query chunk: 4 x b32 A registers) x (the stage's
  /// [64 x D] tile at `bByte`, MN-major): dV or dK.
  Value accumulate(Value acc, ArrayRef<Value> a, Value stageDesc,
                   int64_t bByte) const;
  /// The A registers of an accumulator tile of 64 columns (f16x2 pairs).
  SmallVector<Value> pack(ArrayRef<Value> row0, ArrayRef<Value> row1) const;
  /// P^T (and the softcap derivative) of the S^T accumulator.
  SmallVector<Value> probabilities(Value s, ArrayRef<Value> lse2, Value head,
                                   Value q0, bool masked, Value stage) const;
  /// The stage's statPair `which` of n-tile n: from `preloaded`
  /// (statPairs) when it holds it, loaded here otherwise.
  Value statAt(ArrayRef<Value> preloaded, Value stage, int64_t which,
               int64_t n) const;
  void writeGradScoresT(ArrayRef<Value> ds0, ArrayRef<Value> ds1,
                        Value stage) const;
  /// Issues S^T of step t (t <= steps), once its Q has landed, as one wgmma
  /// group.
  Value issueScores(Value t) const;
  /// Issues this warpgroup's half of dQ = dS K from dS^T buffer `stage` as
  /// one wgmma group.
  Value gradQueryProduct(Value stage) const;
  /// The complete dQ scaled into this warpgroup's half of the dQ tile, once
  /// the writer has read the last step's, and handed over to the writer;
  /// `midway` runs before column group `split` (of D / 16) is stored, or
  /// after the last and before the handover when `split` is D / 16.
  void storeGradQueryTile(Value acc, int64_t split,
                          llvm::function_ref<void()> midway) const;
  /// Step t, its S^T (`scores`) issued: replaced by step t + 1's, issued
  /// under this step's dQ. `nextStat` (step t + 1's row statistics) is
  /// staged before the barrier that publishes dS^T.
  void step(Value t, Value stage, Value buffer, Value nextStat, Value &dK,
            Value &dV, Value &scores) const;
  void storeGradients(Value dK, Value dV) const;
};

/// Blocks until this thread's bulk reduces have read shared memory (`read`)
/// or completed.
void waitBulkGroups(KernelBuilder &kb, bool read);

} // namespace mlir::fa::sm90::grad

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_BACKWARDBUILDER_H
