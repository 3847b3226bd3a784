//===- SM90FlashAttention.h - sm_90a FlashAttention-3 style kernel -*- C++ -*-===//
//
// The sm_90a (Hopper) kernel builder. Its input is a small plain description
// of one attention, so that it does not depend on how the conversion finds it.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H

#include "fa/Conversion/AttentionToNVGPU/Common/KVCache.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fa {

/// Query rows per consumer warpgroup (wgmma M), consumer warpgroups per CTA
/// by default, default keys per K/V tile.
constexpr int64_t kSM90RowsPerWarpgroup = 64;
constexpr int64_t kSM90Warpgroups = 2;
constexpr int64_t kSM90BlockQ = kSM90RowsPerWarpgroup * kSM90Warpgroups;
/// Three consumer warpgroups (192-row tiles, FlashAttention-3's head-dim-64
/// tile): the tiled form's block-q is 192. Four warpgroups share the 64K
/// registers of an SM: 128 x (32 + 3 x 160) = 65,536.
constexpr int64_t kSM90MaxWarpgroups = 3;
constexpr int64_t kSM90BlockKV = 128;
/// Head dim 256: FlashAttention-3's 80-key K/V tile at 2 stages (Q 64 KiB +
/// 2 x (K + V) 80 KiB fits the 227 KiB of shared memory; 128 keys would not
/// fit even 2 stages).
constexpr int64_t kSM90BlockKVD256 = 80;
/// Head dim 256 with a mask band (causal or a window): at 80 keys a two-edge
/// window spills 32 bytes at 240 registers and a causal band with split
/// release and conditional rescaling 20; at 64 neither spills, and causal
/// runs 1.01-1.04x as fast (bench/results/fp8_rescale_h200_2026-12-03_s26,
/// run6).
constexpr int64_t kSM90BlockKVD256Band = 64;

/// Register budgets of the warp roles (setmaxnreg, the producer-registers
/// switch): the producer warpgroup only issues TMA and gives registers back;
/// the consumer warpgroups share the rest of what the CTA launched with
/// (FlashAttention-3's 24 / 240 split of the 64K registers of an SM between 3
/// warpgroups: 128 x (24 + 2 x 240) = 64,512).
constexpr int64_t kSM90ProducerRegisters = 24;
/// Persistent CTAs: the producer runs the tile loop (decode, key range,
/// coordinates) and spills 96 bytes on 24 registers; 40 / 232 (the same
/// 64,512) spill nothing in either role and were 0.5-1.3% faster on the H200
/// (bench/results/persistent_h200_2026-12-01_s11, run2 `pd64r`).
constexpr int64_t kSM90PersistentProducerRegisters = 40;
/// Dynamic tiles: the producer also claims tiles and decodes the L2
/// sections of longest-first order; on 40 it spilled 40 bytes (causal),
/// on 56 nothing, and the consumers spill nothing on 224 either (ptxas).
constexpr int64_t kSM90DynamicTilesProducerRegisters = 56;
/// A score_mod region whose score goes through arithmetic alone (no
/// math-dialect op on a value computed from it; scoreModIsArithmetic) at
/// head dim 128: 56 / 224 measured 1.005-1.02x the 24 / 240 split for ALiBi
/// and relpos, full and causal (ptxas schedules the consumers differently;
/// nothing spills either way), round-robin on the H200
/// (bench/results/variants_h200_2026-12-04_s28, run6-run7); a score_mod with
/// tanh measured 0.98-0.99x without causal on it and keeps 24 / 240.
constexpr int64_t kSM90ScoreModProducerRegisters = 56;
/// Three consumer warpgroups: producer registers, with one tile per CTA and
/// with persistent CTAs alike. The consumers need their 160 (on 152 the d64
/// consumers spilled 32 bytes and ran 20-30% slower); a persistent
/// producer's tile loop spills 28 bytes on 32 (0 on 56, which leaves the
/// consumers 152), once per tile, off the consumers' path: measured
/// 1.02-1.05x the one-tile-per-CTA kernel from 2k tokens
/// (bench/results/sm90_d64_h200_2026-12-03_s24, run3).
constexpr int64_t kSM90ThreeWGProducerRegisters = 32;

/// The registers per thread a warp-specialized CTA launches with: W =
/// consumerWarpgroups + 1 warpgroups share the SM's 65536, floor8(65536 /
/// (128 W)) each (168 for 3, 128 for 4). setmaxnreg.dec may only lower a
/// count and setmaxnreg.inc only raise it (ptxas rejects the PTX
/// otherwise), so the producer keeps at most this many.
constexpr int64_t getSM90LaunchRegisters(int64_t consumerWarpgroups) {
  return 65536 / (128 * (consumerWarpgroups + 1)) / 8 * 8;
}

/// The consumers' setmaxnreg when the producer keeps `producerRegisters`:
/// the consumers share what the producer gives back of the launch's
/// registers (getSM90LaunchRegisters), in multiples of 8.
constexpr int64_t getSM90ConsumerRegisters(int64_t producerRegisters,
                                           int64_t consumerWarpgroups) {
  int64_t warpgroups = consumerWarpgroups + 1;
  int64_t launched = getSM90LaunchRegisters(consumerWarpgroups);
  return (warpgroups * launched - producerRegisters) / consumerWarpgroups / 8 *
         8;
}
static_assert(getSM90ConsumerRegisters(kSM90ProducerRegisters, 2) == 240 &&
                  getSM90ConsumerRegisters(kSM90PersistentProducerRegisters,
                                           2) == 232 &&
                  getSM90ConsumerRegisters(kSM90DynamicTilesProducerRegisters,
                                           2) == 224 &&
                  getSM90ConsumerRegisters(kSM90ThreeWGProducerRegisters, 3) ==
                      160,
              "the measured splits");

/// The K/V ring depth used when none is asked for: 3, but 2 at head dim 256
/// (3 stages of 80-key tiles need 305 KiB).
constexpr int64_t getSM90DefaultStages(int64_t headDim) {
  return headDim == 256 ? 2 : 3;
}

/// What the sm_90a builder needs to know about one attention: its shape and
/// the schedule (resolveSM90Schedule, SM90/Schedule.h).
struct SM90AttentionDesc : SM90Schedule {
  std::string kernelName; ///< gpu.func name
  std::string moduleName; ///< gpu.module name
  std::string sourceName; ///< the func.func, as written (manifest "function")
  Type elementType;       ///< f16, bf16 or f8E4M3FN (q, k and v)
  /// out: elementType, or f16 / bf16 with f8E4M3FN inputs (null: elementType).
  Type outputType;
  int64_t headDim = 128;  ///< 64, 128 or 256 (Dv = D)
  /// Positional window around the bottom-right diagonal Nk - Nq
  /// (docs/Attention.md): query row i sees key j iff
  /// i + Nk - Nq - left <= j <= i + Nk - Nq + right; -1 is unbounded.
  /// Causal is {-1, 0}, no positional mask {-1, -1}.
  int64_t windowLeft = -1, windowRight = -1;
  double scale = 1.0;     ///< softmax scale
  bool hasLse = false;    ///< also write the log-sum-exp [B, Hq, Nq] f32
  /// softcap, mask operand, score_mod / mask_mod (16-bit inputs only).
  ScoreModifierSpec modifiers;
  /// kv_lens / pages of fa.attention (Common/KVCache): per-sequence key
  /// counts, K and V as page pools loaded a page (chunk) per TMA box.
  kernel::KVCacheLayout kvCache;
  /// Packed variable-length sequences (fa.attention's varlen): the kernel
  /// takes cu_seqlens_q / cu_seqlens_k and the grid's batch is the sequence.
  bool varlen = false;
  /// varlen: q, k, v, out are [T, H, D] in memory (varlen-layout=thd), else
  /// the op's [1, H, T, D].
  bool varlenTokenMajor = false;
  /// Consumer warpgroups of 64 query rows each: 2, or 3 (the tiled form's
  /// block-q 192; head dim 64).
  int64_t consumerWarpgroups = kSM90Warpgroups;
  /// Query rows per tile (the tiled form's block-q).
  int64_t blockQ() const { return consumerWarpgroups * kSM90RowsPerWarpgroup; }
  /// Paged: rows per TMA box, gcd(blockKV, page size) (a box never crosses
  /// a page).
  int64_t kvBoxRows() const;
  // The schedule (SM90Schedule, from SM90/Schedule.def) includes the K/V ring
  // depth `stages` and the keys per K/V tile `blockKV`.

  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool isCausal() const { return windowLeft < 0 && windowRight == 0; }
  /// FP8 E4M3 inputs: both GEMMs in e4m3 with f32 accumulators, per-tensor
  /// descales read from device memory (docs/FP8.md).
  bool isFP8() const { return elementType && elementType.isFloat(8); }
  /// FP8: what the descales scale (fa.attention's descale operands): one
  /// factor per tensor, per (batch, head), or per block of rows, the blocks
  /// being the kernel's tiles (128 query rows, blockKV keys).
  enum class DescaleGranularity { Tensor, Head, Block };
  DescaleGranularity descaleGranularity = DescaleGranularity::Tensor;
  Type getOutputType() const { return outputType ? outputType : elementType; }
};

/// FP8: keys per 32-key group of the V^T operand, in the order the P V wgmma
/// reads them. The register-A fragment of an e4m3 wgmma (k32) holds columns
/// 4t..4t+3 and 16+4t..16+4t+3 of its rows in lane t of a quad, while the S
/// accumulator holds columns 8n+2t, 8n+2t+1: column c of the A operand is
/// key kFP8VKeyOrder[c]. Storing V^T's keys in this order lets P go from the
/// S accumulator into the A registers without a shuffle (the reduction over
/// keys does not care about their order).
constexpr int64_t kFP8VKeyOrder[32] = {0,  1,  8,  9,  2,  3,  10, 11,
                                       4,  5,  12, 13, 6,  7,  14, 15,
                                       16, 17, 24, 25, 18, 19, 26, 27,
                                       20, 21, 28, 29, 22, 23, 30, 31};
/// FP8: keys per V^T row group (V^T's key dimension is padded to it).
constexpr int64_t kFP8VKeyGroup = 32;

/// Checks that `desc` can be built for sm_90a (head dim 64, 128 or 256, f16 or
/// bf16, shared memory, tile and stage ranges); on failure returns the reason.
std::string checkSM90AttentionDesc(const SM90AttentionDesc &desc);

/// Builds, at the builder's insertion point (inside a module), the gpu.module
/// holding the sm_90a kernel for `desc`, and returns the JSON launch manifest
/// (LaunchManifest::toJSONString); empty after an error if the manifest does
/// not verify against the kernel's signature. The schedule of `desc` is the
/// kernel's as resolveSM90Schedule returns it (normalizeSM90Schedule): the
/// manifest records it as it is.
std::string buildSM90AttentionKernel(OpBuilder &b, Location loc,
                                     const SM90AttentionDesc &desc);

} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H
