//===- Kernel.h - the sm_80 FlashAttention-2 kernel, composed ---*- C++ -*-===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNEL_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNEL_H

#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/KernelState.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fa::sm80 {

/// The kernel's parameters in launch order (q, k, v, out, lse, sizes): the
/// gpu.func signature and the manifest's parameter list, from one
/// description.
std::vector<KernelParam> getKernelParams(MLIRContext *ctx,
                                         const KernelConfig &cfg);

/// Builds, at the builder's insertion point (inside a module), the
/// gpu.module holding the sm_80 kernel for `cfg` with `params`' signature;
/// returns the kernel.
gpu::GPUFuncOp buildKernel(OpBuilder &b, Location loc, const KernelConfig &cfg,
                           ArrayRef<KernelParam> params);

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_KERNEL_H
