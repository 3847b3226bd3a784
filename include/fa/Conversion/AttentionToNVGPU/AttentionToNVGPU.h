//===- AttentionToNVGPU.h - fa.attention to an nvgpu kernel -----*- C++ -*-===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_ATTENTIONTONVGPU_H
#define FA_CONVERSION_ATTENTIONTONVGPU_ATTENTIONTONVGPU_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::fa {

/// Rows of queries per thread block and keys per step of the sm_80 kernel.
constexpr int64_t kSM80BlockQ = 64;
constexpr int64_t kSM80BlockKV = 64;
constexpr int64_t kSM80Threads = 128;

/// Replaces `func` (which must hold exactly one fa.attention) by a gpu.module
/// with the FlashAttention-2 kernel for `chip`, inserted before `func`, and
/// attaches the launch manifest to the enclosing module. Emits a diagnostic and
/// fails, leaving the IR untouched, when the attention is not supported.
LogicalResult convertAttentionFuncToNVGPU(func::FuncOp func, StringRef chip);

} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_ATTENTIONTONVGPU_H
