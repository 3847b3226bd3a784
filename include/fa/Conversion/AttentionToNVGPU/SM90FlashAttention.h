//===- SM90FlashAttention.h - sm_90a FlashAttention-3 style kernel -*- C++ -*-===//
//
// The sm_90a (Hopper) kernel builder. Its input is a small plain description
// of one attention, so that it does not depend on how the conversion finds it.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H

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

/// The K/V ring depth used when none is asked for: 3, but 2 at head dim 256
/// (3 stages of 80-key tiles need 305 KiB).
constexpr int64_t getSM90DefaultStages(int64_t headDim) {
  return headDim == 256 ? 2 : 3;
}

/// The sm_90a schedule switches: the convert-fa-to-nvgpu options of the same
/// names (NVGPUKernelOptions::sm90), overridden per function by `fa.sm90.*`
/// attributes; see docs/SM90.md.
struct SM90Schedule {
  /// A producer warpgroup issuing the TMA loads (registers rebalanced with
  /// setmaxnreg) instead of thread 0 of the consumers plus a CTA barrier.
  bool warpSpecialized = true;
  /// Software-pipelined consumers (S_j with P_{j-1} V_{j-1}, softmax under
  /// the P V GEMM) and ping-pong of the two consumer warpgroups; needs
  /// warpSpecialized.
  bool overlap = true;
  /// P fed to the P V wgmma from registers (wgmma with A in registers, emitted
  /// as llvm.inline_asm: the nvvm dialect has only the shared-memory form)
  /// instead of a swizzled shared-memory tile + fence.proxy.async + a named
  /// barrier per block; frees 2 x 16 KiB of shared memory.
  bool pFromRegisters = true;
  /// One elected arrival per consumer warp (lane 0, after the warp's
  /// wgmma.wait_group) on the "stage released" mbarriers instead of one per
  /// consumer thread.
  bool warpArrive = true;
  /// Softmax with fewer instructions: the row max as a tree of max.f32 on
  /// the unscaled scores, exp2(s * scale * log2(e) - m) as one FMA (instead
  /// of a serial compare/select chain and a multiply + subtract per score).
  bool fastSoftmax = true;
  /// With overlap and pFromRegisters: O *= alpha_{j-1} between issuing S_j
  /// and P_{j-1} V_{j-1} (FlashAttention-3's place, under the S GEMM)
  /// instead of after P_{j-1} V_{j-1} completes.
  bool rescaleBeforePV = false;
  /// With overlap: the two consumer warpgroups take turns issuing their GEMMs
  /// (named barriers 3 and 4).
  bool pingPong = true;
  /// Causal (a right edge and no left one): CTAs take query blocks in
  /// descending order of work (the last query block, which visits the most
  /// key blocks, first), so that the last CTAs of the grid are the short ones.
  /// The conversion turns it off at D = 256, where it measured slower.
  bool longestFirst = true;
  /// Every n-th softmax exponent (n > 0) computed by a polynomial on the FMA
  /// pipes instead of ex2.approx on the MUFU, which is the unit the softmax
  /// waits on (ncu: MUFU issue stalls); 0 = all on the MUFU. Same accuracy.
  int64_t exp2PolyEvery = 0;
  /// Persistent CTAs with a static tile scheduler: a 1-D grid of
  /// min(tiles, SMs) CTAs, each looping over tiles blockIdx.x, +gridDim.x, ...
  /// (tiles = ceil(Nq/128) * Hq * B); the K/V ring's stage and parity run on
  /// across tiles and a "Q free" mbarrier lets the producer load the next
  /// tile's Q once the consumers' epilogue is done with the Q tile. Needs
  /// warpSpecialized.
  bool persistent = false;
  /// With warp specialization: K and V of a ring stage released (and
  /// refilled) separately, K as soon as S_j is done instead of when
  /// P_j V_j is: the producer gets about one more step to bring the next
  /// K/V blocks in, which matters with 2 stages (D = 256).
  bool splitRelease = false;
};

/// What the sm_90a builder needs to know about one attention.
struct SM90AttentionDesc : SM90Schedule {
  std::string kernelName; ///< gpu.func name
  std::string moduleName; ///< gpu.module name
  Type elementType;       ///< f16 or bf16 (q, k, v and out)
  int64_t headDim = 128;  ///< 64, 128 or 256 (Dv = D)
  /// Positional window around the bottom-right diagonal Nk - Nq
  /// (docs/Attention.md): query row i sees key j iff
  /// i + Nk - Nq - left <= j <= i + Nk - Nq + right; -1 is unbounded.
  /// Causal is {-1, 0}, no positional mask {-1, -1}.
  int64_t windowLeft = -1, windowRight = -1;
  double scale = 1.0;     ///< softmax scale
  bool hasLse = false;    ///< also write the log-sum-exp [B, Hq, Nq] f32
  int64_t stages = 3;     ///< K/V ring depth
  /// Keys per K/V tile = the N of the S wgmma (16..256, a multiple of 16; of
  /// 64 with P through shared memory). FlashAttention-3 uses 176 at d128.
  int64_t blockKV = kSM90BlockKV;
  int64_t producerRegs = 24;  ///< setmaxnreg.dec of the producer
  int64_t consumerRegs = 240; ///< setmaxnreg.inc of the consumers

  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool isCausal() const { return windowLeft < 0 && windowRight == 0; }
};

/// Checks that `desc` can be built for sm_90a (head dim 64, 128 or 256, f16 or
/// bf16, shared memory, tile and stage ranges); on failure returns the reason.
std::string checkSM90AttentionDesc(const SM90AttentionDesc &desc);

/// Builds, at the builder's insertion point (inside a module), the gpu.module
/// holding the sm_90a kernel for `desc`, and returns the JSON launch manifest
/// (LaunchManifest::toJSONString); empty after an error if the manifest does
/// not verify against the kernel's signature.
std::string buildSM90AttentionKernel(OpBuilder &b, Location loc,
                                     const SM90AttentionDesc &desc);


} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90FLASHATTENTION_H
