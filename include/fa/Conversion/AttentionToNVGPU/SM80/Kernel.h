//===- Kernel.h - the sm_80 FlashAttention-2 kernel, composed ---*- C++ -*-===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNEL_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNEL_H

#include "fa/Conversion/AttentionToNVGPU/SM80/KernelState.h"

namespace mlir::fa::sm80 {

/// Builds, at the builder's insertion point (inside a module), the
/// gpu.module holding the sm_80 kernel for `cfg`.
void buildKernel(OpBuilder &b, Location loc, const KernelConfig &cfg);

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNEL_H
