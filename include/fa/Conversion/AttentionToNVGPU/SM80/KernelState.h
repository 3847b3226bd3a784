//===- KernelState.h - the explicit state of the sm_80 kernel ---*- C++ -*-===//
//
// The sm_80 (FlashAttention-2) kernel's configuration, shared-memory plan,
// arguments and per-thread values, built once and passed explicitly to its
// components (LoadPipeline, Mainloop, Epilogue).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNELSTATE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNELSTATE_H

#include "fa/Conversion/AttentionToNVGPU/Common/KVCache.h"
#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/Common/TileScheduler.h"

#include "mlir/IR/BuiltinTypes.h"

#include <array>
#include <string>

namespace mlir::fa::sm80 {

using kernel::KernelBuilder;

/// Padding of a shared-memory row, in elements: 16 bytes make ldmatrix
/// conflict-free.
constexpr int64_t kRowPadding = 8;
/// Past this a block needs dynamic shared memory (and the launcher's opt-in).
constexpr int64_t kStaticSharedMemoryLimitBytes = 48 * 1024;

/// What the sm_80 builder needs to know about one attention.
struct KernelConfig {
  std::string kernelName, moduleName;
  Type elementType;
  int64_t headDim;
  int64_t blockQ, blockKV;
  /// Query rows per warp: 16 or 32 (m16 tiles per warp: every K and V
  /// fragment read from shared memory feeds that many mma).
  int64_t rowsPerWarp;
  int64_t windowLeft = -1, windowRight = -1;
  double scale = 1.0;
  bool hasLse = false;
  /// softcap, mask operand, score_mod / mask_mod (Common/ScoreModifiers).
  ScoreModifierSpec modifiers;
  /// kv_lens / pages of fa.attention (Common/KVCache).
  kernel::KVCacheLayout kvCache;
  /// Conditional rescaling (Common/OnlineSoftmax.h): a row's max moves, and
  /// O is rescaled, only when a step's max exceeds it by more than this
  /// (log2 units); kernel::kRescaleEveryStep (-1): every step rescales
  /// (FlashAttention-2's).
  int64_t rescaleThreshold = -1;

  int64_t mTiles() const { return rowsPerWarp / 16; }
  int64_t threads() const { return 32 * (blockQ / rowsPerWarp); }
  /// With 16 rows per warp the Q fragments live in registers; with 32 they
  /// would not fit beside S and the accumulators, so Q stays in shared
  /// memory and each Q K^T reads its fragments (as FlashAttention-2).
  bool qInRegisters() const { return mTiles() == 1; }
  /// Whether the per-score masks take their rows from %tid.x read again in
  /// the masked branch (in 32 bits) instead of keeping each row's diagonal
  /// live across the key loop. At D = 128 the loop is at the edge of 255
  /// registers (the causal kernel spilled 28 bytes when the H200 assembles
  /// it); at D = 64 keeping them measured 9% faster (ptxas schedules the
  /// smaller allocation worse): bench/results/sm80_h200_2026-12-03_s23.
  bool masksFromThreadId() const { return headDim >= 128; }
  bool rescalesConditionally() const { return rescaleThreshold >= 0; }
  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool isCausal() const { return windowLeft < 0 && windowRight == 0; }
};

/// One buffer of [rows x (D + padding)] elements: [Q: block-q rows, unless
/// Q is in registers] K: block-kv rows, V: block-kv rows. With Q in
/// registers the Q tile is staged through the K/V rows.
struct SharedMemoryPlan {
  int64_t rowStride, kRow, vRow, rows, bytes;
  bool dynamic; ///< past 48 KiB
  static SharedMemoryPlan of(const KernelConfig &cfg);
  MemRefType type(MLIRContext *ctx, Type elementType) const;
};

/// The gpu.func's arguments, sizes as index values.
struct KernelArgs {
  Value q, k, v, out, lse; ///< bare-pointer memrefs; lse null without it
  /// The score modifiers' parameters (mask, captured tensors), in order.
  SmallVector<Value> modifierParams;
  /// kv_lens, page table, pool sizes (null where the layout has none).
  kernel::KVCacheArgs kvCache;
  /// keyLength: Nk as launched; buildKernel replaces it by the tile's
  /// sequence's key count (ThreadTile::keys) before the key loop.
  kernel::ProblemSizes sizes;
};

/// A thread's indices and its tile's global offsets.
struct ThreadTile {
  Value tid, warp, lane, group, quadLane; ///< group = lane / 4, quadLane = lane % 4
  Value qRowBase; ///< (batch * Hq + head) * Nq: the tile's plane, in rows
  Value qBase, kBase; ///< element offsets of the q and k/v planes
  Value q0;           ///< first query row
  Value batch, head;  ///< the tile's batch and query head
  Value warpRow;      ///< the warp's first row in the tile
  /// The keys of the tile's sequence and K/V head (kv_lens, pages).
  kernel::SequenceKeys keys;
};

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNELSTATE_H
