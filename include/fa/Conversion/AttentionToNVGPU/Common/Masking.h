//===- Masking.h - positional masks of score fragments ----------*- C++ -*-===//
//
// The window band (causal = [-1, 0]) in a thread's column frame and which
// key blocks need per-score masks: chip-independent, shared by the sm_80 and
// sm_90a builders. The block range itself is AttentionUtils'
// computeKVBlockRange (the tiled form's fa.kv_block_range).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_MASKING_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_MASKING_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

namespace mlir::fa::kernel {

/// The band of one score row in a thread's column frame: column colBase + o
/// of the row whose diagonal key is `rowDiag` is visible iff lo <= o <= lim,
/// with lim = min(Nk - 1, rowDiag + right) - colBase and
/// lo = rowDiag - left - colBase (null without a left edge; right < 0 is no
/// right edge): one compare per score and edge. All of one integer type,
/// index or i32 (the sm_80 kernel's, a register each).
struct RowBand {
  Value lim, lo;
};
RowBand rowBand(KernelBuilder &kb, Value rowDiag, Value colBase, Value nk,
                int64_t left, int64_t right);

/// Whether column offset `o` lies in `band`.
Value inBand(KernelBuilder &kb, const RowBand &band, int64_t o);

/// Whether key block `j` (keys [kv0, kvNext)) needs per-score masks: it
/// crosses Nk, or lies outside [fullBegin, fullEnd) (the blocks the window's
/// edges cross). Without a left edge fullBegin is the first block, without a
/// right edge fullEnd the end: those compares are left out.
Value blockNeedsMask(KernelBuilder &kb, Value j, Value kvNext, Value nk,
                     Value fullBegin, Value fullEnd, int64_t left,
                     int64_t right);

/// Whether key block `j` lies outside [fullBegin, fullEnd), both compared.
Value blockOutsideFullRange(KernelBuilder &kb, Value j, Value fullBegin,
                            Value fullEnd);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_MASKING_H
