//===- Epilogue.h - normalization, lse and stores of sm_80 ------*- C++ -*-===//
//
// After the loop: each of a thread's rows normalized by 1 / l
// (Common/Epilogue), rounded into the first block-q rows of shared memory
// and stored from there as whole rows (16 bytes per thread), its
// log-sum-exp by the row's lane 0.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_EPILOGUE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_EPILOGUE_H

#include "fa/Conversion/AttentionToNVGPU/SM80/KernelState.h"

namespace mlir::fa::sm80 {

/// `results` as buildMainloop returns them; `rows` the thread's rows per
/// m-tile; `smem` the kernel's [rows x (D + 8)] buffer, whose loads must
/// have landed.
void buildEpilogue(KernelBuilder &kb, const KernelConfig &cfg,
                   const SharedMemoryPlan &plan, const KernelArgs &args,
                   const ThreadTile &tile, Value smem, ValueRange results,
                   ArrayRef<std::array<Value, 2>> rows);

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_EPILOGUE_H
