//===- Wgmma.h - warpgroup MMA (wgmma) of sm_90a ----------------*- C++ -*-===//
//
// The shared-memory matrix descriptor with its bit fields named, and the two
// forms of wgmma the kernel issues: both operands from shared memory
// (nvvm.wgmma.mma_async) and A from registers (inline PTX: MLIR 22's nvvm
// dialect has only the shared-memory form).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_WGMMA_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_WGMMA_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

namespace mlir::fa::sm90 {

/// The 64-bit wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
/// bits 0-13 start address >> 4, 16-29 leading dimension byte offset >> 4,
/// 32-45 stride dimension byte offset >> 4, 62-63 the swizzle mode.
struct WgmmaDescriptor {
  static constexpr int kStartAddressBit = 0;
  static constexpr int kLeadingByteOffsetBit = 16;
  static constexpr int kStrideByteOffsetBit = 32;
  static constexpr int kSwizzleModeBit = 62;
  enum SwizzleMode : int64_t { kNoSwizzle = 0, k128B = 1, k64B = 2, k32B = 3 };

  /// The constant fields: leading byte offset, stride byte offset, swizzle.
  static constexpr int64_t constantFields(int64_t leadingBytes,
                                          int64_t strideBytes,
                                          SwizzleMode mode) {
    return ((leadingBytes >> 4) << kLeadingByteOffsetBit) |
           ((strideBytes >> 4) << kStrideByteOffsetBit) |
           (int64_t(mode) << kSwizzleModeBit);
  }
};

/// The descriptor of an operand swizzled with `mode` (128- or 64-byte) at
/// `base` (start address >> 4, i64) + `byteOffset`, leading byte offset
/// `leadingBytes`; the stride between 8-row core matrices is 8 rows of the
/// swizzle width.
Value wgmmaDescriptor(kernel::KernelBuilder &kb, Value base, int64_t byteOffset,
                      int64_t leadingBytes, WgmmaDescriptor::SwizzleMode mode);

/// The descriptor of a 128-byte-swizzled operand at `base` (start address
/// >> 4, i64) + `byteOffset` (a multiple of 16), leading byte offset
/// `leadingBytes`.
Value wgmmaDescriptor128B(kernel::KernelBuilder &kb, Value base,
                          int64_t byteOffset, int64_t leadingBytes);

/// The f32 accumulator struct of an m64nN wgmma (N/2 floats per thread).
LLVM::LLVMStructType wgmmaAccumulatorType(MLIRContext *ctx, int64_t n);

/// K of one wgmma for `elementType`: 16 (f16, bf16) or 32 (e4m3): 32 bytes.
int64_t wgmmaK(Type elementType);

/// One m64nNk16 (e4m3: k32) wgmma, A and B from shared memory; `first` overwrites the
/// accumulator (scale-d 0); `transposeB` reads B MN-major, `transposeA` A
/// (16-bit types only).
Value wgmmaSS(kernel::KernelBuilder &kb, Type elementType, Value acc,
              Value descA, Value descB, int64_t n, bool first,
              bool transposeB, bool transposeA = false);

/// One m64nNk16 wgmma with A (4 x b32: element pairs in the accumulator
/// fragment layout) in registers and B MN-major from shared memory,
/// accumulating into `acc` (tied outputs). e4m3: m64nNk32, A 4 x b32 of
/// four e4m3 each, B K-major (8-bit wgmma has no transpose).
Value wgmmaRS(kernel::KernelBuilder &kb, Type elementType, Value acc,
              ArrayRef<Value> a, Value descB, int64_t n);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_WGMMA_H
