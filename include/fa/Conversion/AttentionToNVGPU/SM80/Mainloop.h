//===- Mainloop.h - the key/value loop of the sm_80 kernel ------*- C++ -*-===//
//
// FlashAttention-2's loop over a tile's key blocks: S = Q K^T with
// ldmatrix + mma.sync m16n8k16 (f32 accumulators), the online softmax of S
// in registers (Common/OnlineSoftmax; per-score masks only on the blocks
// that need them), P repacked from the S fragments as the A operand of
// O += P V (V read with transposed ldmatrix).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM80_MAINLOOP_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM80_MAINLOOP_H

#include "fa/Conversion/AttentionToNVGPU/Common/OnlineSoftmax.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/LoadPipeline.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

namespace mlir::fa::sm80 {

/// Lane addresses of ldmatrix x4 as 32-bit shared byte addresses: A
/// fragments of Q (at the warp's first row), K (two 8-key n-tiles x two
/// 8-wide k halves) and transposed V (two 8-key k halves x two 8-wide
/// n-tiles), at their tiles' first rows. Each fragment is an immediate
/// offset from these (`offset`).
struct LaneAddresses {
  Value q, k, v;
  int64_t rowBytes = 0; ///< the buffer's row pitch

  /// Bytes from a lane's address to the fragment `rows` rows and `cols`
  /// 16-bit columns further.
  int64_t offset(int64_t rows, int64_t cols) const {
    return rows * rowBytes + cols * 2;
  }
};

/// c += a * b, m16n8k16, f32 accumulators (nvgpu.mma.sync; for bf16, which
/// convert-nvgpu-to-nvvm cannot type, nvvm.mma.sync on the same fragments).
Value mmaSync(KernelBuilder &kb, Type elementType, Value a, Value b, Value c);

/// The A fragment of query rows [warpRow + 16 mt, +16) x columns
/// [16 kk, +16) of the Q tile.
Value loadQFragment(KernelBuilder &kb, Type elementType,
                    const LaneAddresses &lanes, int64_t mt, int64_t kk);

/// The A operands of mma m16n8k16 (one per 16 columns, `chunks` of them) of
/// a 16-row matrix held as m16n8 f32 accumulators: `row0[2 n + c]` and
/// `row1[2 n + c]` are element c of n-tile n in rows g and g + 8, rounded to
/// `elementType` (FlashAttention-2's P, repacked with no shuffle).
SmallVector<Value> packAccumulatorsAsA(KernelBuilder &kb, Type elementType,
                                       ArrayRef<Value> row0,
                                       ArrayRef<Value> row1, int64_t chunks);

/// Everything the loop reads.
struct MainloopInputs {
  const KernelArgs &args;
  const ThreadTile &tile;
  Value smem;                         ///< the [rows x stride] buffer
  const LaneAddresses &lanes;
  ArrayRef<SmallVector<Value>> qFragments; ///< per m-tile (Q in registers)
  Value qToken;                       ///< a group token to wait on
  const KVBlockRange &range;
  Value diag;
  /// Rows of this thread's accumulators (g and g + 8 of each m-tile) and,
  /// unless KernelConfig::masksFromThreadId, their diagonal keys.
  ArrayRef<std::array<Value, 2>> rows, rowDiag;
};

/// The loop's results: max of m-tile mt, row half r at 2 mt + r; sum at
/// 2 mTiles + 2 mt + r; accumulators at 4 mTiles + mt * (D / 8) + n.
ValueRange buildMainloop(KernelBuilder &kb, const KernelConfig &cfg,
                         const SharedMemoryPlan &plan,
                         const AsyncCopyPipeline &loads,
                         const MainloopInputs &in);

} // namespace mlir::fa::sm80

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM80_MAINLOOP_H
