//===- BackwardRowKernels.h - the backward's pre- and postprocess -*- C++
//-*-===//
//
// Around the backward kernel a launch needs two passes over the query rows
// that are no attention: before it delta = rowsum(dO * O) in f32 with
// dq_accum zeroed, after it dq = dq_accum rounded to q's dtype. Both are
// memory bound. Done with torch they took five passes (dO to f32, the
// product, the sum, the zeros, the conversion): at 16k tokens 0.4 ms, a
// third of the backward at N = 1k. Built into the kernel's module they are
// two launches that read and write each byte once (FlashAttention-2 and -3
// have the same two kernels): the manifest's "auxiliary_kernels", which a
// runtime launches around the backward kernel (docs/Backward.md).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_BACKWARDROWKERNELS_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_BACKWARDROWKERNELS_H

#include "fa/Conversion/AttentionToNVGPU/Common/Backward.h"

namespace mlir::fa::kernel {

/// Threads and query rows of a row kernel's CTA: a CTA per 64 rows of one
/// (batch, query head), grid [ceil(Nq / 64), Hq, B]; each thread moves 8
/// elements (16 bytes of f16) per pass, D / 32 passes.
constexpr int64_t kRowKernelThreads = 256;
constexpr int64_t kRowKernelRows = 64;

/// Builds the preprocess kernel `<kernel>_preprocess` (do, out, delta,
/// dq_accum, then the launch sizes: delta = rowsum(do * out) in f32, the
/// products in f32; dq_accum = 0) and the postprocess kernel
/// `<kernel>_postprocess` (dq_accum, dq, the sizes: dq = dq_accum rounded to
/// nearest even in q's dtype) at the end of `module`, and returns them as
/// the manifest lists them.
std::vector<AuxiliaryKernel> buildGradRowKernels(OpBuilder &b, Location loc,
                                                 gpu::GPUModuleOp module,
                                                 const BackwardConfig &cfg);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_BACKWARDROWKERNELS_H
