//===- Epilogue.h - deferred normalization and log-sum-exp ------*- C++ -*-===//
//
// After the key/value loop: a row's sum over its 4 lanes, the factor every
// accumulator of the row is multiplied by (1 / l, 0 for a fully masked row)
// and its log-sum-exp (natural log, -inf for a fully masked row), on
// AttentionUtils' definitions. The fragment stores are the chip's (fragment
// layouts differ); the copy of a staged tile to global memory in 16-byte
// chunks is shared (forEachRowChunk).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_EPILOGUE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_EPILOGUE_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

namespace mlir::fa::kernel {

/// A finished row's normalization.
struct RowNormalizer {
  Value sum;     ///< the row's sum l (all 4 lanes)
  Value isEmpty; ///< l == 0: no key was visible
  Value inverse; ///< 1 / l, 0 when empty
};

/// Reduces this thread's partial row sum over the quad and derives the
/// normalization.
RowNormalizer finalizeRowSum(KernelBuilder &kb, Value partialSum);

/// The row's log-sum-exp from its running max (log2 units): ln(2) * (m +
/// lg2(l)), -inf for an empty row.
Value rowLogSumExp(KernelBuilder &kb, Value max, const RowNormalizer &row);

/// The 16-byte chunks of a tile of `rows` rows of `rowChunks` chunks each,
/// spread over `threads` threads: chunk c = tid + threads i (i = 0, 1, ...)
/// is row c / rowChunks, chunk c % rowChunks of its row, so a warp's copy
/// covers whole rows. For each of the thread's chunks, `inside(row, chunk)`
/// builds what the copy needs and returns whether the chunk is copied (rows
/// past the tensor's end are not); in a last, partial round chunks past the
/// tile are not copied either; then `copy()` is built under that condition.
void forEachRowChunk(KernelBuilder &kb, Value tid, int64_t threads,
                     int64_t rows, int64_t rowChunks,
                     llvm::function_ref<Value(Value row, Value chunk)> inside,
                     llvm::function_ref<void()> copy);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_EPILOGUE_H
