//===- Transforms.h - reusable rewrites of fa ops ---------------*- C++ -*-===//
//
// The logic of the fa passes, as free functions and pattern sets that
// pipelines, transform ops and other compilers can call directly.
//
//===----------------------------------------------------------------------===//
#ifndef FA_DIALECT_ATTENTION_TRANSFORMS_TRANSFORMS_H
#define FA_DIALECT_ATTENTION_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace func {
class CallOp;
} // namespace func
namespace scf {
class ForallOp;
} // namespace scf
} // namespace mlir

namespace mlir::fa {

/// Applies `rewrite` to every op of type `OpT` under `root`, all of them
/// (collected first, so `rewrite` may replace or erase each), with one
/// rewriter; fails if any application fails (each reports its own diagnostic).
/// The body of the passes that rewrite each op on its own.
template <typename OpT, typename RewriteFn>
LogicalResult rewriteEach(Operation *root, RewriteFn &&rewrite) {
  SmallVector<OpT> ops;
  root->walk([&](OpT op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext());
  bool failed = false;
  for (OpT op : ops)
    failed |= mlir::failed(rewrite(rewriter, op));
  return mlir::failure(failed);
}
class AttentionOp;
class AttentionGradOp;
class OnlineAttentionOp;

/// Replaces `op` by linalg/tensor ops that materialize the score matrix (the
/// reference lowering). Returns the replacement values (out, and lse when the
/// op has it).
FailureOr<SmallVector<Value>> decomposeAttention(RewriterBase &rewriter,
                                                 AttentionOp op);

/// Adds the pattern that applies `decomposeAttention` to every fa.attention.
void populateDecomposeAttentionPatterns(RewritePatternSet &patterns);

/// Builds the score_mod_grad region of `op` from its score_mod by
/// forward-mode differentiation with respect to the score %s (its tangent 1,
/// that of every other value 0): each op is cloned and, when it depends on %s,
/// followed by the ops of its tangent. Does nothing when `op` has no score_mod
/// or already has a score_mod_grad (a custom derivative). An op it cannot
/// differentiate gets a diagnostic, `op` is left unchanged and failure is
/// returned.
LogicalResult buildScoreModGrad(RewriterBase &rewriter, AttentionGradOp op);

/// Replaces `op` by linalg/tensor ops that materialize the scores,
/// probabilities and their gradients (the reference lowering of the
/// backward); varlen through lowerVarlenAttentionGrad.
LogicalResult decomposeAttentionGrad(RewriterBase &rewriter,
                                     AttentionGradOp op);

/// Replaces `op` by the tiled form of the backward (FlashAttention-2): per
/// (batch, K/V head, key block of `blockKV` keys), a loop over the group's
/// query heads and the query blocks of `blockQ` rows that see the key block,
/// S and P recomputed per tile; varlen through lowerVarlenAttentionGrad.
LogicalResult tileAttentionGrad(RewriterBase &rewriter, AttentionGradOp op,
                                int64_t blockQ, int64_t blockKV);

/// Replaces a varlen `op` by an scf.for over its sequences, each an
/// fa.attention_grad without varlen on the slices of the packed tensors
/// (rows and keys of no sequence get zero gradients), then lowers each of
/// those with `lowerEach`.
LogicalResult lowerVarlenAttentionGrad(
    RewriterBase &rewriter, AttentionGradOp op,
    function_ref<LogicalResult(RewriterBase &, AttentionGradOp)> lowerEach);

/// Block sizes of the FlashAttention tiling.
struct AttentionTileSizes {
  int64_t blockQ = 64;
  int64_t blockKV = 64;
  /// Block sparsity from a mask_mod region: each step is guarded by the
  /// block's classifyMaskModBlock (scf.if: skipped when no key is visible,
  /// without mask_mod when all are). Off: every step applies the mask_mod.
  bool maskModSparsity = false;
};

/// Replaces `op` by the tiled FlashAttention form: an scf.forall over (batch,
/// query head, query block) around scf.for loops over the visible key/value
/// blocks, each step one fa.online_attention. Returns the replacement values.
FailureOr<SmallVector<Value>> tileAttention(RewriterBase &rewriter,
                                            AttentionOp op,
                                            const AttentionTileSizes &sizes);

/// Adds the pattern that applies `tileAttention` to every fa.attention.
void populateTileAttentionPatterns(RewritePatternSet &patterns,
                                   const AttentionTileSizes &sizes);

/// Replaces `op` by linalg ops on its tiles. Returns (max, sum, acc).
FailureOr<SmallVector<Value>> decomposeOnlineAttention(RewriterBase &rewriter,
                                                       OnlineAttentionOp op);

/// Adds the patterns that lower fa.online_attention to linalg and
/// fa.kv_block_range to index arithmetic.
void populateDecomposeOnlineAttentionPatterns(RewritePatternSet &patterns);

/// Adds the pattern of fa-raise-attention: a linalg contraction that computes
/// softmax(scale * Q K^T [+ mask]) V becomes fa.attention
/// (fa::raise::raiseAttention, RaiseAttention.h).
void populateRaiseAttentionPatterns(RewritePatternSet &patterns);

/// Adds the pattern that expands arith.extf from f8E4M3FN into integer ops.
void populateExpandF8E4M3FNExtFPatterns(RewritePatternSet &patterns);

/// Adds the pattern that expands arith.truncf to f8E4M3FN into integer ops
/// (round to nearest even, saturating to +-448, NaN to NaN).
void populateExpandF8E4M3FNTruncFPatterns(RewritePatternSet &patterns);

/// Options of fa-quantize-fp8.
struct QuantizeFP8Options {
  enum class Granularity { Tensor, Head, Block };
  Granularity granularity = Granularity::Tensor;
  int64_t blockQ = 128;
  int64_t blockKV = 128;
  /// Q and K multiplied along D by H * diag(signs) / sqrt(D) (a fast
  /// Walsh-Hadamard transform) before quantization.
  bool incoherent = false;
  uint64_t seed = 0;
};

/// Replaces an f16/bf16/f32 `op` by the two-pass FP8 form: amax of Q, K, V per
/// granularity, delta = max(amax, 2^-117) / 448, x / delta rounded to
/// f8E4M3FN (clamped to +-448 first), and an fa.attention on the fp8 tensors
/// with the deltas as descales. Fails with a diagnostic for an incoherent
/// transform of a head dim that is not a power of two; returns failure
/// without one for ops that are fp8 already.
FailureOr<SmallVector<Value>> quantizeAttentionFP8(RewriterBase &rewriter,
                                                   AttentionOp op,
                                                   const QuantizeFP8Options &options);

/// x[..., :] multiplied by H_D * diag(signs) / sqrt(D) along its last dim D (a
/// power of two), as a fast Walsh-Hadamard transform: the signs and 1/sqrt(D)
/// in one elementwise op, then log2(D) butterfly stages. f32 result.
Value buildRandomizedHadamard(OpBuilder &b, Location loc, Value x,
                              ArrayRef<float> signs);

/// D random signs (+-1) from `seed` (splitmix64), the same on every host.
SmallVector<float> randomSigns(int64_t d, uint64_t seed);

/// Emits an error on each fa op (fa.attention, fa.attention_grad,
/// fa.online_attention, fa.kv_block_range) under `module` that is not inside a func.func whose
/// parent is `module`: the pipelines lower only those. `who` (the pass or
/// pipeline) starts each message. Fails if there was one.
LogicalResult checkAttentionPlacement(ModuleOp module, StringRef who);


/// The decoding rewrite (fa-split-kv): `op`'s query head groups packed into
/// rows, its keys cut into `splits` chunks run as more heads, their (out,
/// lse) merged by lse. Returns the values replacing op's results; fails when
/// the rewrite would change the result (a mask, modifier, window or diagonal;
/// causal with more than one row), shapes are dynamic or splits does not
/// divide the key length.
FailureOr<SmallVector<Value>> splitKVAttention(RewriterBase &rewriter,
                                               AttentionOp op, int64_t splits);

/// Moves the tiled attention `forall` (an scf.forall holding
/// fa.online_attention) into a new private func.func `name`, inserted before
/// the function holding it: its arguments are the values the loop reads
/// (tensors, scalars) in first-use order; the index arithmetic and the
/// tensor.empty it is built from are recomputed inside; it returns the loop's
/// results. The loop is replaced by a func.call. The caller makes `name`
/// unique.
FailureOr<func::CallOp> outlineTiledAttention(RewriterBase &rewriter,
                                              scf::ForallOp forall,
                                              StringRef name);

} // namespace mlir::fa

#endif // FA_DIALECT_ATTENTION_TRANSFORMS_TRANSFORMS_H
