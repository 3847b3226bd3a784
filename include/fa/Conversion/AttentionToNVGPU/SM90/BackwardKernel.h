//===- BackwardKernel.h - the wgmma backward kernel of sm_90a ---*- C++ -*-===//
//
// The backward of one attention (fa.attention_grad) on sm_90a with the five
// products as warpgroup MMAs: a CTA per (128-key block, K/V head, batch), two
// warpgroups of 64 keys each; per query block of 64 rows (of every query
// head of the group that sees the keys):
//   S^T = K Q^T, dP^T = V dO^T      wgmma, both operands in shared memory
//   dV += P^T dO, dK += dS^T Q      wgmma, P^T / dS^T from the registers
//   dQ  = dS K                      wgmma, dS^T through shared memory (read
//                                   MN-major); TMA reduce-adds of the
//                                   [64 x D] f32 tile into dq_accum
// dK and dV stay in the accumulators of the warpgroup owning the keys. K and
// V come once by TMA, Q and dO by TMA into a ring of 2 or 3 buffers, all in
// the 128-byte-swizzled layout wgmma reads. Warp specialized, as
// FlashAttention-3: the two consumer warpgroups compute; a third, the
// producer (setmaxnreg.dec), has a loader warp that streams Q and dO into
// the ring (an mbarrier "full" and "released" per buffer) and a writer warp
// that issues the dQ tiles' reduce-adds (named barriers per consumer
// warpgroup hand each half of the tile over and back).
// The runtime contract is the sm_80 kernel's (Common/Backward.h) but for q,
// k, v, do and dq_accum, which it takes as tensor maps.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_BACKWARDKERNEL_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_BACKWARDKERNEL_H

#include "fa/Conversion/AttentionToNVGPU/Common/Backward.h"

namespace mlir::fa::sm90 {

/// Keys per CTA (two warpgroups of 64) and query rows per step.
constexpr int64_t kGradBlockKV = 128, kGradBlockQ = 64;
/// The two consumer warpgroups and the producer warpgroup (its warp 0 loads
/// Q and dO, its warp 1 adds dQ; warps 2 and 3 exit).
constexpr int64_t kGradConsumerThreads = 256, kGradThreads = 384;
/// setmaxnreg: 240 x 256 + 24 x 128 fits the 168 x 384 a launch of 384
/// threads gets.
constexpr int64_t kGradConsumerRegisters = 240, kGradProducerRegisters = 24;

/// The backward kernel's named barriers (0 is the CTA's barrier).
enum GradNamedBarrier : int64_t {
  /// The 256 consumer threads: dS^T (and the next step's row statistics)
  /// written before dQ's wgmma reads them.
  kGradScoresBarrier = 1,
  /// + consumer warpgroup: its half of the dQ tile is written (its 128
  /// threads arrive, the writer warp syncs: 160 threads).
  kGradQueryTileFullBase = 2,
  /// + consumer warpgroup: the writer's reduce-adds have read that half
  /// (the writer arrives, the warpgroup syncs).
  kGradQueryTileFreeBase = 4,
};
/// Q / dO buffers unless the function's fa.grad.stages says otherwise.
constexpr int64_t kGradDefaultStages = 2;

/// Byte offsets from the 1024-aligned base of the dynamic shared memory.
/// Every 16-bit tile is stored as D / 64 sub-tiles of [rows x 128 bytes]
/// with the 128-byte swizzle (16-byte chunk c of row r at c ^ (r % 8)).
struct BackwardSharedMemoryPlan {
  int64_t kOffset, vOffset; ///< [128 x D] each
  int64_t qOffset, doOffset, stageBytes; ///< buffer s at + s * stageBytes
  int64_t stages;                        ///< Q / dO buffers
  /// dS^T [128 keys x 64 queries], one sub-tile, twice: step t writes
  /// buffer t % 2 while the other warpgroup's dQ product may still read
  /// the other (the consumers meet once per step).
  int64_t dsOffset, dsBytes;
  int64_t statsOffset; ///< [2 stages x (lse2, delta) x 64] f32
  /// The step's dQ, [64 x D] f32 as D / 32 boxes of [64 rows x 128 bytes]
  /// with the 128-byte swizzle (dq_accum_map's boxes).
  int64_t dqOffset;
  /// After the loop: dK and dV rounded to [128 keys x (D + 8)] each (rows
  /// padded, so the fragments' pair stores meet no bank twice), over K, V
  /// and the ring, which no load or product reads any more.
  int64_t gradKVOffset, gradKVRowElems;
  int64_t totalBytes, dynamicBytes;
  static BackwardSharedMemoryPlan of(const kernel::BackwardConfig &cfg);
};

/// Columns of dQ per box of dq_accum_map: 128 bytes of f32, the widest
/// box the 128-byte swizzle allows.
constexpr int64_t kGradQueryBoxCols = 32;

/// The tensor map of dq_accum [B, Hq, Nq, D] f32 as (D, Nq, B * Hq) with
/// boxes of (32, 64, 1), 128-byte swizzle: rows past Nq are outside the
/// tensor, so the reduce-adds leave them out. varlen (here and below): the
/// batch-1 planes (D, N, H) of the packed sequences.
TensorMapSpec gradQueryTensorMap(const kernel::BackwardConfig &cfg);

/// The tensor map of `tensor`: "q" or "do" [B, Hq, Nq, D] as (D, Nq, B * Hq)
/// with boxes of (64, 64, 1), or "k" or "v" [B, Hkv, Nk, D] as (D, Nk,
/// B * Hkv) with boxes of (64, 128, 1); 128-byte swizzle: a box is one
/// [rows x 128 bytes] sub-tile of a tile, rows past the length zero.
TensorMapSpec gradInputTensorMap(StringRef tensor,
                                 const kernel::BackwardConfig &cfg);

/// Builds, at the builder's insertion point (inside a module), the
/// gpu.module holding the backward kernel for `cfg` (blockKV 128, blockQ
/// 64, head dim 64 or 128); returns the kernel.
gpu::GPUFuncOp buildBackwardKernel(OpBuilder &b, Location loc,
                                   const kernel::BackwardConfig &cfg,
                                   ArrayRef<KernelParam> params);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_BACKWARDKERNEL_H
