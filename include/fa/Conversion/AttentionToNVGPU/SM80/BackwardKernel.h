//===- BackwardKernel.h - the FlashAttention-2 backward kernel --*- C++ -*-===//
//
// The backward of one attention (fa.attention_grad) as one mma.sync kernel
// in FlashAttention-2's design: a CTA per (key block, K/V head, batch) keeps
// its dK and dV in registers while it streams the query blocks (of every
// query head of its group) that see its keys, recomputing S and P from Q, K
// and the forward's log-sum-exp; dQ is accumulated in f32 in global memory
// with atomic adds. The runtime computes delta = rowsum(dO * O) before the
// launch and converts dQ after it (docs/Backward.md). Valid PTX for sm_80 and
// later (mma.sync).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_BACKWARDKERNEL_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_BACKWARDKERNEL_H

#include "fa/Conversion/AttentionToNVGPU/Common/Backward.h"

namespace mlir::fa::sm80 {

using kernel::BackwardConfig;

/// Shared memory of the backward kernel, in one dynamic buffer: a tile
/// buffer of [rows x (D + 8)] elements (K, V, then two stages of Q and dO),
/// dS^T [block-kv x (block-q + 8)] elements, and two stages of the staged
/// lse (as log2, +inf on rows that see no key) and delta, f32.
struct BackwardSharedMemoryPlan {
  int64_t rowStride, kRow, vRow, stageRow, stageRows, rows;
  int64_t dsOffsetBytes, dsStride, rowStatsOffsetBytes, bytes;
  static BackwardSharedMemoryPlan of(const BackwardConfig &cfg);
};

/// Builds, at the builder's insertion point (inside a module), the
/// gpu.module holding the backward kernel for `cfg`; returns the kernel.
gpu::GPUFuncOp buildBackwardKernel(OpBuilder &b, Location loc,
                                   const BackwardConfig &cfg,
                                   ArrayRef<KernelParam> params);

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_BACKWARDKERNEL_H
