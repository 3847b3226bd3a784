//===- AttentionUtils.h - scalar pieces of the attention math ---*- C++ -*-===//
//
// The per-element semantics of fa.attention (score modifiers, GQA head
// mapping, fully-masked-row handling), written once and shared by every
// lowering so that the reference and the tiled forms cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef FA_DIALECT_ATTENTION_UTILS_ATTENTIONUTILS_H
#define FA_DIALECT_ATTENTION_UTILS_ATTENTIONUTILS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::fa {
class AttentionOp;

/// Runtime sizes of one fa.attention, as index values.
struct AttentionShape {
  Value queryHeads;   // Hq
  Value kvHeads;      // Hkv
  Value headRatio;    // Hq / Hkv
  Value queryLength;  // Nq
  Value keyLength;    // Nk
  Value diagonal;     // the key column of query row 0's diagonal: the
                      // diagonal(...) operand, else Nk - Nq
};

/// Materializes the sizes of `op` at the builder's insertion point.
AttentionShape getAttentionShape(OpBuilder &b, Location loc, AttentionOp op);

/// The K/V head that query head `queryHead` reads: queryHead / (Hq / Hkv).
Value getKVHead(OpBuilder &b, Location loc, Value queryHead,
                const AttentionShape &shape);

/// The f32 factor applied to Q K^T: scale (times q_descale * k_descale for
/// fp8), times log2(e) when `log2e` is set (for exp2-based softmax).
Value getScoreScale(OpBuilder &b, Location loc, AttentionOp op, bool log2e);

/// True when the log2(e) factor can be folded into the score scale: nothing
/// non-linear or additive sits between the scaling and the exponent.
bool canFoldLog2eIntoScale(AttentionOp op);

/// Extends a float to f32 (no-op on f32).
Value extendToF32(OpBuilder &b, Location loc, Value v);
/// Truncates an f32 to `type` (no-op on f32).
Value truncateFromF32(OpBuilder &b, Location loc, Value v, Type type);

/// The score of (row, col) after the op's modifiers, in this order: times
/// `scoreScale`, softcap, additive or boolean `maskElt` (may be null),
/// positional (causal/window) masking with `shape.diagonal`, then times
/// `postScale` (may be null; log2(e) when the softmax uses exp2 and it could
/// not be folded into `scoreScale`). Masked scores become -inf. `row` and
/// `col` are absolute index values.
Value applyScoreModifiers(OpBuilder &b, Location loc, AttentionOp op, Value s,
                          Value scoreScale, Value maskElt, Value row, Value col,
                          const AttentionShape &shape, Value postScale = {});

/// Whether key `col` is inside the causal/window band of query `row`; null
/// when the op has no positional mask.
Value isInsideWindow(OpBuilder &b, Location loc, AttentionOp op, Value row,
                     Value col, const AttentionShape &shape);

/// Indexing map from loops (b, h, i, j) (the first four of `numLoops`) to the
/// mask operand, with size-1 leading dims broadcast.
AffineMap getMaskBroadcastMap(AttentionOp op, unsigned numLoops);

/// The running row max to subtract in exp(s - m): m, or 0 when m = -inf (a row
/// with nothing visible yet), so that exp(-inf - m) is 0 and never NaN.
Value safeRowMax(OpBuilder &b, Location loc, Value rowMax);

/// The normalized output acc / l, times v_descale for fp8; 0 for a fully
/// masked row (l = 0).
Value normalizeOutput(OpBuilder &b, Location loc, AttentionOp op, Value acc,
                      Value rowSum);

/// log-sum-exp from the subtracted max and the row sum: max + log(sum), which
/// is -inf for a fully masked row (sum = 0, max replaced by 0).
Value logSumExp(OpBuilder &b, Location loc, Value safeMax, Value rowSum);

} // namespace mlir::fa

#endif // FA_DIALECT_ATTENTION_UTILS_ATTENTIONUTILS_H
