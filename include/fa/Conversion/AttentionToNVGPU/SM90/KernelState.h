//===- KernelState.h - the explicit state of the sm_90a kernel --*- C++ -*-===//
//
// The values the sm_90a components share, as plain structs built once and
// passed explicitly: the switches as the body uses them, the kernel's
// arguments, a thread's indices, a tile's coordinates and key range, the
// dynamic shared memory. A component never changes a struct it was given;
// where a value must be recomputed (persistent tiles, opaque copies that keep
// ptxas from holding it in registers) a new struct is made.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_KERNELSTATE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_KERNELSTATE_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/Common/TileScheduler.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Barriers.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/SharedMemoryPlan.h"
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::fa::sm90 {

using kernel::KernelBuilder;

/// The switches of SM90AttentionDesc as the body uses them, normalized
/// (normalizeSM90Schedule: a switch whose prerequisite is off is off).
struct KernelConfig {
  explicit KernelConfig(const SM90AttentionDesc &desc) : desc(desc) {}
  const SM90AttentionDesc &desc;
  bool warpSpecialized; ///< a producer warpgroup issues the TMA loads
  bool overlap;         ///< pipelined consumers
  bool pFromRegisters;
  bool fastSoftmax;
  bool rescaleBeforePV;
  bool warpArrive;
  bool pingPong;
  bool longestFirst;
  bool persistent;
  bool dynamicTiles; ///< persistent tiles claimed from the tile counter
  bool splitRelease;
  bool splitKV; ///< in-kernel split-KV (SM90/SplitKV.h)
  bool transposeV; ///< fp8: V taken as stored, transposed by the producer
  int64_t exp2PolyEvery;
  /// Conditional rescaling (Common/OnlineSoftmax.h): a row's max moves, and
  /// O is rescaled, only when a step's max exceeds it by more than this
  /// (log2 units); kRescaleEveryStep (-1): every step rescales.
  int64_t rescaleThreshold;
  bool rescalesConditionally() const { return rescaleThreshold >= 0; }
  int64_t headDim, stages, blockKV;
  /// Consumer warpgroups (2 or 3) and the query rows of a tile (64 each).
  int64_t consumerWarpgroups, blockQ;
  bool fp8;         ///< f8E4M3FN inputs (SM90AttentionDesc::isFP8)
  int64_t swizzleElems; ///< input elements per swizzled row: 64, fp8 128
                        ///< (64 at head dim 64: the 64-byte swizzle)
  int64_t subTiles; ///< 128-byte sub-tiles of a [rows x D] input tile
  int64_t outSubTiles; ///< 64-column sub-tiles of a [rows x D] 16-bit O tile
  int64_t threads;  ///< consumers (+ producer) warpgroups x 128
  /// setmaxnreg of the producer / consumer warpgroups: the schedule's
  /// producer-registers (its measured default in SM90/Schedule.cpp) and what
  /// that leaves the consumers (getSM90ConsumerRegisters).
  int64_t producerRegs, consumerRegs;
  SharedMemoryPlan smem;
  MBarrierLayout barriers;

  static KernelConfig derive(const SM90AttentionDesc &desc);
  /// The consumer threads (every consumer warpgroup).
  int64_t consumerThreads() const {
    return consumerWarpgroups * kThreadsPerWarpgroup;
  }
  NamedBarriers namedBarriers() const { return {consumerWarpgroups}; }
  Type elementType() const { return desc.elementType; }
  /// out's element type (f16 / bf16): the staged O and the flat view.
  Type outputType() const { return desc.getOutputType(); }
  /// The element type of shared-memory boxes and global tensors of q, k, v
  /// as the kernel addresses them: i8 for fp8 (bytes moved, never computed
  /// on), else elementType.
  Type storageType() const;
  /// Q and K tiles use the 64-byte swizzle (fp8 at head dim 64), else the
  /// 128-byte one.
  bool qkSwizzle64() const { return smem.rowBytes == 64; }
  /// The CTA's tile scheduler.
  kernel::TileScheduler scheduler() const;
};

/// The gpu.func's arguments, sizes as index values.
struct KernelArgs {
  Value qMap, kMap, vMap; ///< !nvgpu.tensormap.descriptor (from pointers)
  /// fp8: the per-tensor descales, [1] f32 each in device memory; else null.
  Value qDescale, kDescale, vDescale;
  Value out, lse;         ///< memrefs; lse null without it
  /// The score modifiers' parameters (mask, captured tensors), in order.
  SmallVector<Value> modifierParams;
  /// kv_lens, page table, pool sizes (null where the layout has none).
  kernel::KVCacheArgs kvCache;
  /// Dynamic tiles: the [2] i32 tile counter (memref); else null.
  Value tileCounter;
  /// varlen: the cumulative query and key offsets, [B + 1] i32 memrefs, and
  /// max_seqlen_q (index: the grid's and the persistent tiles' query blocks).
  Value cuSeqlensQ, cuSeqlensK, maxSeqlenQ;
  /// split-kv: the workspaces split_o, split_lse (f32) and the arrival
  /// counters split_counter (i32) as memrefs, and num_splits (index).
  Value splitO, splitLse, splitCounter, numSplits;
  Value batchArg;         ///< B as the i32 argument (cast where used)
  kernel::ProblemSizes sizes; ///< batch left null (see batchArg)
};

/// A thread's indices: warpgroup, thread in warpgroup, warp in warpgroup,
/// lane, and the lane's accumulator row group (lane / 4) and column pair
/// (lane % 4).
struct ThreadIds {
  Value tid, warpgroup, threadInWG, warp, lane, group, quadLane;
  static ThreadIds of(KernelBuilder &kb, Value tid);
};

/// One tile's coordinates and the planes it reads and writes.
struct TileState {
  kernel::TileCoord coord;
  Value kvHead;  ///< GQA: head / (Hq / Hkv)
  Value qPlane;  ///< batch * Hq + head: the [Nq, D] plane of q and out
  Value kvPlane; ///< batch * Hkv + kvHead
  Value q0;      ///< first query row
  /// kv_lens / pages: the keys of the tile's sequence (length null
  /// otherwise; withSequenceKeys sets them).
  kernel::SequenceKeys keys;
  /// varlen: the sequence's first packed query row and key, and its query
  /// row count (null otherwise): q0 and the key blocks count from them.
  Value qRow0, kvRow0, queryLength;
  /// The packed row of the tile's first query row: q0 (+ qRow0).
  Value qLoadRow(KernelBuilder &kb) const {
    return qRow0 ? kb.add(qRow0, q0) : q0;
  }
  /// varlen: whether the tile holds rows of its sequence (q0 < its query
  /// rows); null otherwise (every tile does).
  Value hasRows(KernelBuilder &kb) const {
    return queryLength
               ? kb.cmp(arith::CmpIPredicate::slt, q0, queryLength)
               : Value();
  }
  static TileState of(KernelBuilder &kb, const KernelConfig &cfg,
                      kernel::TileCoord coord,
                      const kernel::ProblemSizes &sizes);
  /// This tile with `keys` set from the kernel's kv_lens / page table.
  TileState withSequenceKeys(KernelBuilder &kb, const KernelConfig &cfg,
                             const KernelArgs &args) const;
  /// `sizes` with the key length of the tile's sequence (kv_lens, varlen)
  /// and its query length (varlen).
  kernel::ProblemSizes sequenceSizes(const kernel::ProblemSizes &sizes) const;
};

/// A tile's key blocks [begin, end), of which blocks outside [fullBegin,
/// fullEnd) straddle a window edge (null without a window); `base` is the
/// running block count of the CTA's earlier tiles (persistent; else null),
/// from which ring stages and parities follow.
struct KVRange {
  Value diag, begin, end, fullBegin, fullEnd, base;
  bool hasLeftEdge;
  /// narrowToMaskMod: the blocks the mask_mod shows wholly (words null
  /// otherwise; the steps then classify each block themselves).
  kernel::KernelScoreModifiers::FullBlocks fullBlocks;

  /// The ring iteration count of block j.
  Value iterOf(KernelBuilder &kb, Value j) const;
  /// Block begin + k (a constant without a left edge).
  Value blockAt(KernelBuilder &kb, int64_t k) const;
  static KVRange of(KernelBuilder &kb, const KernelConfig &cfg, Value q0,
                    const kernel::ProblemSizes &sizes);
  /// [begin, end) narrowed to the blocks a bounded mask_mod may show to the
  /// tile's rows [q0, min(q0 + blockQ, Nq)) (KernelScoreModifiers); the
  /// window's [fullBegin, fullEnd) stays valid for the blocks left. With
  /// `share` the CTA's warps scan together (every thread must be here).
  void narrowToMaskMod(
      KernelBuilder &kb, const KernelConfig &cfg,
      const kernel::KernelScoreModifiers &modifiers, Value q0,
      const kernel::ProblemSizes &sizes,
      const kernel::KernelScoreModifiers::WarpShare *share = nullptr);
};

/// FP8: a tile's descales (docs/FP8.md). The softmax multiplies the e4m3
/// scores of key block j by scoreScale(j) = scale * log2(e) * q_descale *
/// k_descale; O accumulates in units of 1 / vUnit(j) (per-block v descales:
/// the acc is rescaled by vUnit(j-1) / vUnit(j) with alpha) and the epilogue
/// multiplies 1 / l by vUnit(last).
struct FP8Descales {
  using Granularity = SM90AttentionDesc::DescaleGranularity;
  Granularity granularity;
  Value kv;        ///< k_descale / v_descale pointers (for per-block loads)
  Value vdesc;
  Value base;      ///< scale * log2(e) * q_descale (* k_descale unless per block)
  Value kvIndex0;  ///< per block: index of the tile's (kv plane, block 0)
  Value kvLastBlock; ///< per block: ceil(Nk / blockKV) - 1 (indices clamp)
  Value vFloor;    ///< per block: vUnit's floor, v_descale(begin) * 2^-40
  Value vConstant; ///< per tensor / head: v_descale

  static FP8Descales of(KernelBuilder &kb, const KernelConfig &cfg,
                        const KernelArgs &args, const TileState &tile,
                        const KVRange &range);
  /// scale * log2(e) * q_descale * k_descale(j).
  Value scoreScale(KernelBuilder &kb, Value j) const;
  /// The unit of O after block j: v_descale(j), at least vFloor (a block of
  /// zeros has a tiny descale; O in its units would overflow).
  Value vUnit(KernelBuilder &kb, Value j) const;
  /// vUnit(j - 1) / vUnit(j) (1 at the range's first block), or null when
  /// v's descale is not per block.
  Value vRescale(KernelBuilder &kb, Value j, Value begin) const;
  bool perBlock() const { return granularity == Granularity::Block; }

private:
  /// k_descale / v_descale index of block j (clamped into the plane: an
  /// empty range may start past the last block).
  Value kvIndex(KernelBuilder &kb, Value j) const;
};

/// The dynamic shared memory, realigned to kSwizzleAtomBytes.
struct SharedMemory {
  Value dynamic; ///< the i8 buffer
  Value shift;   ///< bytes from its start to the aligned base
  Value descBase; ///< aligned base address >> 4 (i64), for descriptors
  Value flat;     ///< the aligned buffer as [totalBytes / 2] 16-bit elements
                  ///< of out's type (P tiles, staged O)

  static SharedMemory allocate(KernelBuilder &kb, const KernelConfig &cfg);
  /// `ty` at `byteOffset` from the aligned base.
  Value view(KernelBuilder &kb, Value byteOffset, MemRefType ty) const;
  /// The same buffer with `shift` through an opaque copy: addresses derived
  /// from it are computed where they are used, not hoisted and kept live.
  SharedMemory withOpaqueShift(KernelBuilder &kb) const;
  /// Dynamic tiles: the coordinates (query block, head, batch) of the tile
  /// that Q tile `buffer` (null: 0) belongs to, in its three shared-memory
  /// words (SharedMemoryPlan::tileSlotOffset): written by the producer, who
  /// decoded the tile, before it loads that Q (the Q-full mbarrier orders
  /// them before the consumers' reads), so the consumers never divide.
  /// After the last tile the query block word holds kEndOfTiles.
  void storeTileCoord(KernelBuilder &kb, const KernelConfig &cfg,
                      Value buffer, const kernel::TileCoord &coord) const;
  void storeEndOfTiles(KernelBuilder &kb, const KernelConfig &cfg,
                       Value buffer) const;
  kernel::TileCoord loadTileCoord(KernelBuilder &kb, const KernelConfig &cfg,
                                  Value buffer) const;
  /// The query block word after the last tile (above any query block).
  static constexpr int32_t kEndOfTiles = INT32_MAX;
  /// A TMA box [1, rows, 64] in shared memory.
  static MemRefType boxType(const KernelConfig &cfg, int64_t rows);
  /// fp8: a TMA box of V^T, [1, D, 128 keys] bytes.
  static MemRefType vTransposedBoxType(const KernelConfig &cfg);
};

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_KERNELSTATE_H
