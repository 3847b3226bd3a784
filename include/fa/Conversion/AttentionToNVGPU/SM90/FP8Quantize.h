//===- FP8Quantize.h - the fp8 kernel's quantization kernels -----*- C++ -*-===//
//
// An fp8 attention kernel with per-block descales (blocks = its 128 x 128
// tiles) takes e4m3 q and k, V^T in the kernel's key order and one f32
// descale per 128-row block. Producing them with torch ops takes several
// passes (amax, scale, cast, transpose): about as long as the attention at
// 16k tokens and up to 20x longer at 512 (docs/FP8.md). Built into the
// kernel's module they are three launches that read each f16 / bf16 byte
// once and write each e4m3 byte once: a CTA per 128-row block computes the
// block's max |x| (delta = max|x| / 448, as fa-quantize-fp8 states it),
// divides and rounds to nearest even with saturation; V's kernel writes the
// block transposed through shared memory. The manifest lists them as
// "auxiliary_kernels" (ops attention_fp8_quantize_q / _k / _v), which
// fa_runtime's Kernel.quantize launches.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_FP8QUANTIZE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_FP8QUANTIZE_H

#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fa::sm90 {

/// Threads and rows of a quantization CTA: one 128-row block of one
/// (batch, head); grid [ceil(N / 128), H, B].
constexpr int64_t kQuantizeThreads = 256;
constexpr int64_t kQuantizeRows = 128;

/// What the quantization kernels of one fp8 attention kernel need.
struct FP8QuantizeConfig {
  std::string kernelName; ///< the attention kernel's; `_quantize_q` etc. added
  Type sourceType;        ///< f16 or bf16: the inputs before quantization
  int64_t headDim = 0;
};

/// Builds `<kernel>_quantize_q`, `_quantize_k` (x [B, H, N, D] -> x8 the same
/// shape in e4m3, x_descale [B, H, ceil(N / 128)]) and `_quantize_v` (v ->
/// v_t [B, Hkv, D, ceil(Nk / 32) * 32] in kFP8VKeyOrder, zero padded, and
/// v_descale) at the end of `module`; returns them as the manifest lists
/// them.
std::vector<AuxiliaryKernel> buildFP8QuantizeKernels(OpBuilder &b,
                                                     Location loc,
                                                     gpu::GPUModuleOp module,
                                                     const FP8QuantizeConfig &cfg);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_FP8QUANTIZE_H
