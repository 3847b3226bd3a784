//===- HostLaunch.h - the host side of a kernel, as IR ----------*- C++ -*-===//
//
// convert-fa-to-nvgpu{host-launch}: the function a kernel was built from stays
// and its body becomes the launch, read from the kernel's launch manifest (the
// same data python/fa_runtime interprets): device buffers, copies, tensor
// maps, grid and gpu.launch_func, so that upstream gpu-to-llvm lowers it and a
// whole program runs on the GPU (docs/Embedding.md, "The GPU lowering
// composes").
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_HOSTLAUNCH_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_HOSTLAUNCH_H

#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"

namespace mlir::fa {

/// The runtime function that host code calls for the `num_sms` size symbol
/// (persistent kernels' grids); lib/Runtime provides it.
constexpr llvm::StringLiteral kMultiprocessorCountFunction =
    "faCudaMultiprocessorCount";
/// The runtime function that frees a tensor map's device copy (what
/// nvgpu.tma.create.descriptor's lowering allocates) after the launch.
constexpr llvm::StringLiteral kFreeTensorMapFunction = "faCudaFreeTensorMap";

/// Replaces the body of `attn.func`, whose kernel `gpu.module
/// @<gpuModuleName>` has just been built with its manifest attached to the
/// enclosing module, by host code on tensors: each input copied to a device
/// buffer, the outputs allocated there, the tensor maps encoded
/// (nvgpu.tma.create.descriptor), the grid computed from the runtime sizes,
/// gpu.launch_func, the outputs copied back, the buffers freed, all on one
/// stream of async tokens ending in gpu.wait. Emits a diagnostic and fails on
/// a kernel it cannot launch (fp8: v is transposed by the Python runtime).
LogicalResult buildHostLaunch(const TiledAttention &attn,
                              StringRef gpuModuleName);

} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_HOSTLAUNCH_H
