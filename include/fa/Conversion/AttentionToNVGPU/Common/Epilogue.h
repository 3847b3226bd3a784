//===- Epilogue.h - deferred normalization and log-sum-exp ------*- C++ -*-===//
//
// After the key/value loop: a row's sum over its 4 lanes, the factor every
// accumulator of the row is multiplied by (1 / l, 0 for a fully masked row)
// and its log-sum-exp (natural log, -inf for a fully masked row), on
// AttentionUtils' definitions. The stores are the chip's (fragment layouts
// differ).
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

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_EPILOGUE_H
