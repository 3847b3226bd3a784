//===- LoadPipeline.h - cp.async tiles of the sm_80 kernel ------*- C++ -*-===//
//
// Q, K and V tiles into shared memory with 16-byte cp.async: rows past the
// sequence are zero-filled and their source clamped in bounds; one async
// group per tile. A thread's copies of a tile share one 32-bit shared
// address and differ by immediates (Common/InlinePTX cpAsync16): addresses
// per copy were hoisted out of the key loop as 64-bit registers. The mainloop
// double-buffers across the two halves of a step: K_{j+1} is issued under
// the softmax and P V of block j, V_{j+1} under the next Q K^T.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_LOADPIPELINE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_LOADPIPELINE_H

#include "fa/Conversion/AttentionToNVGPU/SM80/KernelState.h"

namespace mlir::fa::sm80 {

class AsyncCopyPipeline {
public:
  AsyncCopyPipeline(KernelBuilder &kb, const KernelConfig &cfg, Value tid)
      : AsyncCopyPipeline(kb, cfg.headDim, cfg.threads(), tid) {}
  /// Tiles of `headDim` columns copied by `threads` threads.
  AsyncCopyPipeline(KernelBuilder &kb, int64_t headDim, int64_t threads,
                    Value tid)
      : kb(kb), headDim(headDim), threads(threads), tid(tid) {}
  /// Rows [rowStart, rowStart + numRows) x [0, D) of the [*, D] matrix at
  /// element offset `base` of `gmem` into rows [smemRow, +numRows) of
  /// `smem`; rows at or past `nRows` zero-filled. Returns the group token.
  Value loadTile(Value smem, int64_t smemRow, Value gmem, Value base,
                 Value rowStart, Value nRows, int64_t numRows) const;
  /// As above, into rows [smemRow, +numRows) with `smemRow` a value (a
  /// buffer chosen at run time).
  Value loadTile(Value smem, Value smemRow, Value gmem, Value base,
                 Value rowStart, Value nRows, int64_t numRows) const;
  /// Keys [rowStart, rowStart + numRows) of a sequence into rows
  /// [smemRow, +numRows) of `smem`, rows at or past `nRows` zero-filled:
  /// contiguous keys as loadTile from `base`, paged ones through the page
  /// table (Common/KVCache).
  Value loadKeyTile(Value smem, Value smemRow, Value gmem,
                    const kernel::SequenceKeys &keys, Value base,
                    Value rowStart, Value nRows, int64_t numRows) const;
  /// Waits until at most `pendingGroups` groups are in flight.
  void wait(Value token, int32_t pendingGroups) const;

private:
  /// The element offset in gmem of (row, col) of the source rows, for the
  /// thread's copy number `copy`.
  using SourceOf = std::function<Value(Value srcRow, Value col, int64_t copy)>;
  Value loadTileAt(Value smem, Value smemRow, Value gmem, SourceOf srcOf,
                   Value rowStart, Value nRows, int64_t numRows) const;
  /// Rows of D elements from element `base` on.
  SourceOf contiguousRows(Value base) const;

  KernelBuilder &kb;
  int64_t headDim, threads;
  Value tid;
};

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_LOADPIPELINE_H
