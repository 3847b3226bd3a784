//===- SM90FlashAttention.h - sm_90a FlashAttention-3 style kernel -*- C++ -*-===//
//
// The sm_90a (Hopper) kernel builder. Its input is a small plain description
// of one attention, so that it does not depend on how the conversion finds it.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H

#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fa {

/// Query rows per consumer warpgroup (wgmma M), consumer warpgroups per CTA,
/// default keys per K/V tile.
constexpr int64_t kSM90RowsPerWarpgroup = 64;
constexpr int64_t kSM90Warpgroups = 2;
constexpr int64_t kSM90BlockQ = kSM90RowsPerWarpgroup * kSM90Warpgroups;
constexpr int64_t kSM90BlockKV = 128;
/// Head dim 256: FlashAttention-3's 80-key K/V tile at 2 stages (Q 64 KiB +
/// 2 x (K + V) 80 KiB fits the 227 KiB of shared memory; 128 keys would not
/// fit even 2 stages).
constexpr int64_t kSM90BlockKVD256 = 80;
/// Head dim 256 with a left window edge: at 80 keys the two-edge mask spills
/// (32 bytes at 240 registers), at 64 it does not.
constexpr int64_t kSM90BlockKVD256LeftEdge = 64;

/// Register budgets of the warp roles (setmaxnreg): the producer warpgroup
/// only issues TMA and gives registers back; the two consumer warpgroups
/// take them (FlashAttention-3's 24 / 240 split of the 64K registers of an
/// SM between 3 warpgroups: 128 x (24 + 2 x 240) = 64,512).
constexpr int64_t kSM90ProducerRegisters = 24;
constexpr int64_t kSM90ConsumerRegisters = 240;

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
  Type elementType;       ///< f16 or bf16 (q, k, v and out)
  int64_t headDim = 128;  ///< 64, 128 or 256 (Dv = D)
  /// Positional window around the bottom-right diagonal Nk - Nq
  /// (docs/Attention.md): query row i sees key j iff
  /// i + Nk - Nq - left <= j <= i + Nk - Nq + right; -1 is unbounded.
  /// Causal is {-1, 0}, no positional mask {-1, -1}.
  int64_t windowLeft = -1, windowRight = -1;
  double scale = 1.0;     ///< softmax scale
  bool hasLse = false;    ///< also write the log-sum-exp [B, Hq, Nq] f32
  // The schedule (SM90Schedule, from SM90/Schedule.def) includes the K/V ring
  // depth `stages` and the keys per K/V tile `blockKV`.
  int64_t producerRegs = kSM90ProducerRegisters; ///< setmaxnreg.dec
  int64_t consumerRegs = kSM90ConsumerRegisters; ///< setmaxnreg.inc

  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool isCausal() const { return windowLeft < 0 && windowRight == 0; }
};

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
