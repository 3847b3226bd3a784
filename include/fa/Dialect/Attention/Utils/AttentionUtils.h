//===- AttentionUtils.h - scalar pieces of the attention math ---*- C++ -*-===//
//
// The per-element semantics of fa.attention (score modifiers, GQA head
// mapping, fully-masked-row handling), written once and shared by every
// lowering so that the reference and the tiled forms cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef FA_DIALECT_ATTENTION_UTILS_ATTENTIONUTILS_H
#define FA_DIALECT_ATTENTION_UTILS_ATTENTIONUTILS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"

#include <functional>
#include <optional>

namespace mlir::fa {

/// The iterator types of the linalg.generic ops the lowerings build.
constexpr utils::IteratorType kPar = utils::IteratorType::parallel;
constexpr utils::IteratorType kRed = utils::IteratorType::reduction;
class AttentionOp;
class OnlineAttentionOp;
class AttentionGradOp;

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

/// One sequence of a varlen op's packed rows (query rows or keys): from the
/// cumulative offsets `offsets` ([B + 1] x i32) and the packed length `total`
/// (Tq or Tk), start = clamp(offsets[seq], 0, total) and length =
/// clamp(offsets[seq + 1], start, total) - start, so that any offsets give a
/// range inside the tensor (docs/Attention.md).
struct PackedSequence {
  Value start, length; // index
};
PackedSequence getPackedSequence(OpBuilder &b, Location loc, Value offsets,
                                 Value seq, Value total);

/// The number of packed sequences B of [B + 1] `offsets`: max(dim - 1, 0).
Value getPackedSequenceCount(OpBuilder &b, Location loc, Value offsets);

/// Clones each non-empty region of `from` into the empty region of `to` at
/// the same position, its batch argument (`batchArgs`, per region: the %b of
/// score_mod and mask_mod) shifted by `seq`: the modifier regions of an op
/// over one packed sequence of a varlen op, whose %b is the sequence.
void cloneModifiersForSequence(OpBuilder &b, Location loc,
                               MutableArrayRef<Region> from,
                               MutableArrayRef<Region> to,
                               ArrayRef<unsigned> batchArgs, Value seq);

/// A new f32 tensor of `sizes` filled with `value` (tensor.empty + linalg.fill).
Value createFilledF32Tensor(OpBuilder &b, Location loc,
                            ArrayRef<OpFoldResult> sizes, float value);

/// The projection (d0, ..., d{numDims-1}) -> (d{dims[0]}, d{dims[1]}, ...).
AffineMap getProjectionMap(MLIRContext *ctx, unsigned numDims,
                           ArrayRef<unsigned> dims);

/// Emits `cf.assert`s for the rules of fa.attention that the verifier could
/// not check because a dim is dynamic: matching batch sizes, key/value heads
/// and lengths, Hq a multiple of Hkv, mask and result dims. A lowering calls it
/// once, right after getAttentionShape, so bad runtime shapes stop with a
/// message instead of reading out of bounds.
void emitDynamicShapeChecks(OpBuilder &b, Location loc, AttentionOp op,
                            const AttentionShape &shape);

/// The same for fa.attention_grad: q, k, v as above; out, lse and do against
/// q's batch, heads and rows; dq, dk, dv against q, k, v; the mask. Both CPU
/// lowerings call it before anything reads a size (varlen ops too: on the
/// packed tensors, before the loop over their sequences).
void emitDynamicShapeChecks(OpBuilder &b, Location loc, AttentionGradOp op);

/// emitDynamicShapeChecks of `op` right before it (the insertion point is
/// restored).
void emitGradShapeChecks(OpBuilder &b, AttentionGradOp op);

/// The K/V head that query head `queryHead` reads: queryHead / (Hq / Hkv).
Value getKVHead(OpBuilder &b, Location loc, Value queryHead,
                const AttentionShape &shape);

/// The f32 factor applied to Q K^T: scale (times q_descale * k_descale for
/// fp8), times log2(e) when `log2e` is set (for exp2-based softmax).
Value getScoreScale(OpBuilder &b, Location loc, AttentionOp op, bool log2e);

/// The granularity of an fa.attention's descales: 0 (f32 scalars, or none),
/// 2 (per (batch, head)) or 3 (per block of rows).
int64_t getDescaleRank(AttentionOp op);

/// The f32 descale that applies at (batch, head, row): `descale` itself when
/// it is a scalar, descale[batch, head] at rank 2, and
/// descale[batch, head, row / block] at rank 3. `head` is the head of the
/// descaled tensor (the K/V head for k and v).
Value extractDescale(OpBuilder &b, Location loc, Value descale, Value batch,
                     Value head, Value row, int64_t block);

/// True when the log2(e) factor can be folded into the score scale: nothing
/// non-linear or additive sits between the scaling and the exponent.
bool canFoldLog2eIntoScale(AttentionOp op);

/// Extends a float to f32 (no-op on f32).
Value extendToF32(OpBuilder &b, Location loc, Value v);
/// Truncates an f32 to `type` (no-op on f32).
Value truncateFromF32(OpBuilder &b, Location loc, Value v, Type type);

/// The largest window bound the lowerings compute with; clampWindowBound maps
/// a larger one to it. The clamp changes nothing: a key is inside the window
/// iff -left <= col - (row + diagonal) <= right, and that distance is at most
/// 2^62 in magnitude for any attention with |row|, |col|, |diagonal| < 2^61
/// (real ones are far smaller: the GPU kernels take i32 sizes, the tiled
/// diagonal is Nk - Nq + row). It keeps the band arithmetic in int64:
/// row + diagonal - left and row + diagonal + right + 1 cannot wrap around
/// for |row + diagonal| < 2^62 (a bound near INT64_MAX did, and hid every
/// key).
constexpr int64_t kMaxWindowBound = int64_t(1) << 62;
/// min(bound, kMaxWindowBound); -1 (unbounded) stays -1.
inline int64_t clampWindowBound(int64_t bound) {
  return bound > kMaxWindowBound ? kMaxWindowBound : bound;
}

/// The per-score modifiers of an attention: softcap and the positional
/// window (causal is right = 0), read off fa.attention or fa.online_attention,
/// window bounds clamped by clampWindowBound.
struct ScoreModifiers {
  std::optional<double> softcap;
  int64_t left = -1, right = -1; // -1: unbounded
  bool hasWindow() const { return left >= 0 || right >= 0; }
  static ScoreModifiers get(AttentionOp op);
  static ScoreModifiers get(OnlineAttentionOp op);
  static ScoreModifiers get(AttentionGradOp op);
};

/// Evaluates a score_mod region (of fa.attention or fa.online_attention) at
/// the builder's insertion point by cloning its body with the block arguments
/// (s, b, h, i, j) replaced by the given values; `captures` maps values defined
/// above the region to their replacements where the body is inlined somewhere
/// they are not visible (empty for inlining next to the op). Returns the
/// yielded f32.
Value inlineScoreMod(OpBuilder &b, Location loc, Region &scoreMod, Value s,
                     Value batch, Value head, Value row, Value col,
                     IRMapping &captures);
/// The same for the score_mod_grad region of fa.attention_grad: returns the
/// yielded (t, dt/ds).
std::pair<Value, Value> inlineScoreModGrad(OpBuilder &b, Location loc,
                                           Region &scoreModGrad, Value s,
                                           Value batch, Value head, Value row,
                                           Value col, IRMapping &captures);
/// The same for a mask_mod region (b, h, i, j): returns the yielded i1.
Value inlineMaskMod(OpBuilder &b, Location loc, Region &maskMod, Value batch,
                    Value head, Value row, Value col, IRMapping &captures);

/// Copies the score_mod and mask_mod regions of `from` into the (empty) ones
/// of `to`; both are fa.attention or fa.online_attention, `to` built with
/// as many regions as `from` (none, or score_mod and mask_mod).
void cloneModifierRegions(OpBuilder &b, Operation *from, Operation *to);

/// What a mask_mod hides of a block of rows [rowBegin, rowEnd) x keys
/// [colBegin, colEnd) (absolute, non-empty) of (batch, head), as i1 values:
/// `someVisible` is false only if no key of the block is visible to any of
/// its rows (the block can be skipped), `allVisible` true only if every key is
/// visible to every row (the block needs no mask_mod). Both are conservative
/// (a partial block may be reported neither empty nor full by the bounds).
struct MaskModBlockVisibility {
  Value someVisible, allVisible;
};
/// By interval evaluation of the region at the insertion point: b and h are
/// points, i and j the block's ranges, and constants, addi, subi, minsi,
/// maxsi, muli by a constant, divsi / floordivsi / ceildivsi by a positive
/// constant, cmpi (signed predicates, eq, ne), andi / ori / xori of i1 and
/// select are bounded (no index overflow assumed); index and i1 values
/// captured from above the region are single values (they must dominate the
/// insertion point). Failure, with nothing
/// emitted, when the region uses anything else (a tensor.extract, an
/// unsigned comparison, ...).
/// `hooks` let a caller bound what the bounder cannot see through: the GPU
/// kernels, whose values from above the region live outside the kernel.
struct MaskModBoundHooks {
  /// A value captured from above the region, as the value to use at the
  /// insertion point (null: not bounded). Default: the value itself.
  std::function<Value(Value)> captured;
  /// [min, max] of what `tensor.extract` (1-D, integer elements) reads at
  /// indices [lo, hi] (index values), emitted at the insertion point; null:
  /// tensor reads are not bounded (the default).
  std::function<std::pair<Value, Value>(tensor::ExtractOp, Value lo,
                                        Value hi)>
      extract;
};
FailureOr<MaskModBlockVisibility>
boundMaskModOverBlock(OpBuilder &b, Location loc, Region &maskMod, Value batch,
                      Value head, Value rowBegin, Value rowEnd,
                      Value colBegin, Value colEnd,
                      const MaskModBoundHooks &hooks = {});
/// Exactly, by evaluating the region at every (row, key) of the block (two
/// scf.for loops): the run-time block mask of regions that cannot be bounded.
MaskModBlockVisibility
evaluateMaskModOverBlock(OpBuilder &b, Location loc, Region &maskMod,
                         Value batch, Value head, Value rowBegin, Value rowEnd,
                         Value colBegin, Value colEnd);
/// boundMaskModOverBlock when it succeeds, else evaluateMaskModOverBlock.
MaskModBlockVisibility
classifyMaskModBlock(OpBuilder &b, Location loc, Region &maskMod, Value batch,
                     Value head, Value rowBegin, Value rowEnd, Value colBegin,
                     Value colEnd);

/// The modifier regions of one score and where it is: the absolute batch,
/// query head, query row and key of the fa.attention. Regions are null when
/// absent. The backward's (get(AttentionGradOp)) has scoreModGrad, whose t
/// stands for score_mod's, and no scoreMod.
struct ModifierRegions {
  Region *scoreMod = nullptr, *maskMod = nullptr, *scoreModGrad = nullptr;
  Value batch, head, row, col;
  static ModifierRegions get(AttentionOp op);
  static ModifierRegions get(OnlineAttentionOp op);
  static ModifierRegions get(AttentionGradOp op);
  bool empty() const { return !scoreMod && !maskMod && !scoreModGrad; }
};

/// The signed distance of key `col` from the diagonal of query `row`:
/// col - (row + diagonal).
Value getDiagonalDistance(OpBuilder &b, Location loc, Value row, Value col,
                          Value diagonal);

/// `s` times `scoreScale`, then softcap: the score that score_mod sees (the
/// first steps of applyScoreModifiers).
Value scaleAndSoftcap(OpBuilder &b, Location loc, const ScoreModifiers &mods,
                      Value s, Value scoreScale);

/// The score after the modifiers, in this order: times `scoreScale`, softcap,
/// additive `maskElt`, the score_mod of `regions`, then -inf where a boolean
/// `maskElt`, the mask_mod of `regions` or the positional mask (when
/// `distance`, from getDiagonalDistance, is given) hides the key, then times
/// `postScale` (may be null; log2(e) when the softmax uses exp2 and it could
/// not be folded into `scoreScale`). `maskElt` may be null; `regions` at their
/// positions are set by the caller when the op has modifier regions. With
/// `regions.scoreModGrad` (the backward), its t is the modified score.
Value applyScoreModifiers(OpBuilder &b, Location loc,
                          const ScoreModifiers &mods, Value s,
                          Value scoreScale, Value maskElt, Value distance,
                          Value postScale = {},
                          const ModifierRegions &regions = {});

/// What score_mod sees of the raw score `s`: scaleAndSoftcap, plus
/// `maskElt` when that is an additive mask element (null or i1: nothing).
Value scoreModInput(OpBuilder &b, Location loc, const ScoreModifiers &mods,
                    Value s, Value scoreScale, Value maskElt);

/// The backward's gradient with respect to the softcapped score u (what
/// score_mod sees) from `dsT`, that with respect to score_mod's t: dsT * dt,
/// where (t, dt) = score_mod_grad(scoreModInput(s, maskElt), b, h, i, j) at
/// the positions of `regions`; 0 where `p` (the probability) is 0, so that
/// an invisible score's dt (maybe inf or NaN there) is never multiplied in.
/// `dsT` itself without `regions.scoreModGrad`.
Value applyScoreModGrad(OpBuilder &b, Location loc, const ScoreModifiers &mods,
                        Value dsT, Value p, Value s, Value scoreScale,
                        Value maskElt, const ModifierRegions &regions);

/// Whether `op` forms capture gradients: grad_captures and at least one
/// capture_grad_terms entry (without one they stay zero).
bool hasCaptureGradTerms(AttentionGradOp op);

/// The capture gradients of `op` (one f32 tensor per grad_captures operand,
/// `grads`) with the terms of score (batch, head, row, col) added: for each
/// capture_grad_terms entry of score_mod_grad(u, batch, head, row, col),
/// `dS_t * coefficient` into its capture's gradient at the yielded indices
/// (clamped into the tensor, as memory safety: at a visible score they are
/// the indices score_mod read), dS_t = p (dp - delta). Nothing where `p` is
/// 0 (an invisible score, whose indices may be anything). `u` is
/// scoreModInput's.
SmallVector<Value> accumulateCaptureGrads(OpBuilder &b, Location loc,
                                          AttentionGradOp op, ValueRange grads,
                                          Value p, Value dp, Value delta,
                                          Value u, Value batch, Value head,
                                          Value row, Value col);

/// Zero-filled f32 tensors, one per grad_captures operand of `op` (their
/// gradients' types).
SmallVector<Value> zeroCaptureGrads(OpBuilder &b, Location loc,
                                    AttentionGradOp op);

/// The diagnostic of a lowering of fa.attention_grad that gets a score_mod
/// without its score_mod_grad (the lowerings read only the latter).
LogicalResult checkScoreModGradPresent(AttentionGradOp op);

/// The batch, head and sequence sizes of an fa.attention_grad for its CPU
/// lowerings: attributes where static (or where a tensor.dim folds to a
/// constant, so that a tensor built from them is static in that dim),
/// tensor.dim values otherwise; `ratio` is Hq / Hkv, an attribute or a
/// divui built at the builder's insertion point. Head dims are static (the
/// verifier).
struct GradSizes {
  OpFoldResult batch, heads, kvHeads, seqQ, seqK, ratio;
  static GradSizes get(OpBuilder &b, AttentionGradOp op);
};

/// Whether a key at `distance` from the diagonal is inside the window; null
/// when there is no window.
Value isInsideWindow(OpBuilder &b, Location loc, const ScoreModifiers &mods,
                     Value distance);

/// Indexing map from loops (b, h, i, j) (the first four of `numLoops`) to the
/// mask operand, with size-1 leading dims broadcast.
AffineMap getMaskBroadcastMap(AttentionOp op, unsigned numLoops);

/// mask[b', h', i', j] of a [Bm, Hm, Nm, Nk] mask operand: a dim of static
/// size 1 is read at 0 (it broadcasts), the others at (b, h, i); for a
/// generic's body where a map cannot say it (fa.attention_grad's lowerings).
Value extractMaskElement(OpBuilder &b, Location loc, Value mask, Value batch,
                         Value head, Value row, Value col);

/// The running row max to subtract in exp(s - m): m, or 0 when m = -inf (a row
/// with nothing visible yet), so that exp(-inf - m) is 0 and never NaN.
Value safeRowMax(OpBuilder &b, Location loc, Value rowMax);

/// The normalized output acc / l, times `vDescale` (may be null; fp8); 0 for
/// a fully masked row (l = 0).
Value normalizeOutput(OpBuilder &b, Location loc, Value acc, Value rowSum,
                      Value vDescale);

/// log-sum-exp from the subtracted max and the row sum: max + log(sum), which
/// is -inf for a fully masked row (sum = 0, max replaced by 0).
Value logSumExp(OpBuilder &b, Location loc, Value safeMax, Value rowSum);

/// The same from a max in log2 units (the online form):
/// ln(2) * (max + log2(sum)).
Value logSumExpFromLog2(OpBuilder &b, Location loc, Value safeMax,
                        Value rowSum);

/// 1 / rowSum, or 0 for a fully masked row (rowSum = 0): normalizeOutput's
/// semantics (without a descale) as the one factor a GPU epilogue multiplies
/// every accumulator of the row by, so a row costs one division.
Value reciprocalRowSum(OpBuilder &b, Location loc, Value rowSum);

/// logSumExpFromLog2 with log2(sum) already computed (GPU kernels use
/// lg2.approx): ln(2) * (max + log2Sum).
Value logSumExpFromLog2Sum(OpBuilder &b, Location loc, Value safeMax,
                           Value log2Sum);

/// The index constant/values of a key/value block range (see
/// fa.kv_block_range), computed with index arithmetic; `left` and `right` are
/// clamped by clampWindowBound.
struct KVBlockRange {
  Value begin, fullBegin, fullEnd, end;
};
KVBlockRange computeKVBlockRange(OpBuilder &b, Location loc, Value rowBegin,
                                 Value rowEnd, Value keyLength, Value diagonal,
                                 int64_t blockKV, int64_t left, int64_t right);

} // namespace mlir::fa

#endif // FA_DIALECT_ATTENTION_UTILS_ATTENTIONUTILS_H
