//===- RaiseAttention.h - matchers of attention written in linalg -*- C++ -*-===//
//
// The pieces of fa-raise-attention, reusable on their own: a symbolic
// evaluator that reads one element of a tensor computed by a chain of
// elementwise linalg ops as a scalar expression, and matchers built on it
// (contractions, a last-dim softmax, the scale and masks of the scores, grouped
// K/V heads). docs/Embedding.md, "From what frontends emit", lists what they
// accept.
//
//===----------------------------------------------------------------------===//
#ifndef FA_DIALECT_ATTENTION_TRANSFORMS_RAISEATTENTION_H
#define FA_DIALECT_ATTENTION_TRANSFORMS_RAISEATTENTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <optional>
#include <vector>

namespace mlir::fa::raise {

/// One element of a tensor as a tree over scalars: what a chain of elementwise
/// linalg ops computes at a point of an index space (for the scores: the
/// dims (batch..., i, j)).
struct ScalarExpr {
  enum class Kind {
    /// An element of a tensor the evaluator stops at, read at `map` (index
    /// space -> its indices), or a scalar SSA value (`map` empty).
    Leaf,
    /// A scalar constant (`constant`: FloatAttr or IntegerAttr).
    Constant,
    /// linalg.index: the position `index`, an affine expression of the index
    /// space.
    Index,
    /// An arith or math op (`op`) applied to `operands`.
    Op,
  };
  Kind kind = Kind::Leaf;
  Value tensor;
  AffineMap map;
  TypedAttr constant;
  AffineExpr index;
  Operation *op = nullptr;
  SmallVector<const ScalarExpr *, 3> operands;
};

/// Builds ScalarExprs over one index space of `rank` dims. It looks through
/// elementwise linalg ops (generic, map, broadcast, transpose, fill and the
/// named elementwise ops: all loops parallel, output maps permutations),
/// tensor.cast, and expand/collapse_shape that only add or drop unit dims;
/// everything else is a leaf. Expressions are memoized per (value, map) and
/// their number and the depth of the ops looked through are bounded, so a
/// large or adversarial input fails instead of blowing up.
/// The expressions (and the ScoresMatch built from them) live as long as the
/// builder: keep values and maps, not ScalarExpr pointers, beyond it.
class ScalarExprBuilder {
public:
  /// `shape`: the sizes of the index space (dynamic ones as ShapedType's).
  ScalarExprBuilder(MLIRContext *context, ArrayRef<int64_t> shape)
      : context(context), rank(shape.size()), shape(shape) {}

  unsigned getRank() const { return rank; }
  ArrayRef<int64_t> getShape() const { return shape; }
  /// True for a map that reads a tensor holding the index space with some
  /// static unit batch dims dropped: the same element, in the same order.
  bool isIdentityUpToUnitDims(AffineMap map) const;
  AffineMap identity() const {
    return AffineMap::getMultiDimIdentityMap(rank, context);
  }
  /// The element of `tensor` at `access` (index space -> tensor indices), or
  /// null when the expression grows past the bound or holds an op the
  /// evaluator does not model.
  const ScalarExpr *evaluate(Value tensor, AffineMap access);
  /// The value yielded as result `resultIndex` by the body of `op`, whose loops
  /// are `loops` (index space -> loop indices). Block arguments of `skip` stay
  /// leaves (the reduction accumulator).
  const ScalarExpr *evaluateBody(linalg::LinalgOp op, Value bodyValue,
                                 AffineMap loops, Value skip = {});

private:
  const ScalarExpr *make(ScalarExpr expr);
  const ScalarExpr *leaf(Value tensor, AffineMap access);

  MLIRContext *context;
  unsigned rank;
  SmallVector<int64_t> shape;
  std::deque<ScalarExpr> nodes;
  DenseMap<std::pair<Value, AffineMap>, const ScalarExpr *> memo;
  unsigned depth = 0;
  static constexpr size_t kMaxNodes = 4096;
  static constexpr unsigned kMaxDepth = 256;
};

/// `e` without arith.extf / arith.truncf around it.
const ScalarExpr *stripCasts(const ScalarExpr *e);
/// True when `a` and `b` compute the same value up to float casts (false, too,
/// past 2^16 compared pairs: equal DAGs can be exponentially larger trees).
bool sameUpToCasts(const ScalarExpr *a, const ScalarExpr *b);
/// The value of a float (or integer) constant expression.
std::optional<double> getConstantValue(const ScalarExpr *e);

/// A contraction C[batch..., m, n] = sum_k A[.., m, .., k] * B[.., n, .., k]
/// with a zero-filled accumulator: linalg.matmul, batch_matmul (with or
/// without indexing_maps), or a generic with a multiply-add body (operands
/// possibly extended). `mSide` is the operand holding m, its dims read in the
/// canonical order (batch..., m, k) through `mPerm` (canonical dim -> operand
/// dim); `nSide` likewise in the order (batch..., n, k).
struct ContractionView {
  linalg::LinalgOp op;
  Value mSide, nSide;
  SmallVector<int64_t> mPerm, nPerm;
  unsigned batchRank = 0;
};
std::optional<ContractionView> matchContraction(linalg::LinalgOp op);

/// `v` through tensor.cast and expand/collapse_shape that only merge or split
/// the leading (batch, head) dims and keep the last two as they are.
Value peelBatchReshapes(Value v);
/// True when `v` is, through such reshapes, the result of a contraction.
bool isContractionResult(Value v);

/// The scores `s` (an expression of the index space of `probs`) when `probs`
/// is softmax(s) over its last dim: linalg.softmax, or exp(s - max) / sum
/// (or times the reciprocal of the sum) with max and sum reductions over the
/// last dim (linalg.reduce or generic; the max by maximumf, maxnumf or
/// select(cmpf ogt), its init -inf or <= -1e30; keepdim or not). Float
/// casts anywhere are accepted. Null otherwise (a missing max subtraction
/// included).
const ScalarExpr *matchLastDimSoftmax(ScalarExprBuilder &builder, Value probs);

/// A condition of a mask_mod: visible where `cond` (i1) is true, where it is
/// false (`hidesWhereTrue`), or where the float `cond` is 0 (`zero`: the
/// other values -inf).
struct MaskCondition {
  const ScalarExpr *cond = nullptr;
  bool hidesWhereTrue = false;
  bool zero = false;
};

/// `e` as a mask_mod condition when it is select(c, 0, -inf) (visible where
/// c) or select(c, -inf, 0) (hidden where c) with a real -inf and c of i1.
std::optional<MaskCondition> matchAdditiveCondition(const ScalarExpr *e);

/// The parts of the scores, in fa.attention's order: s = scale * qk, capped
/// (softcap * tanh(s / softcap)), an additive mask added, then a boolean mask
/// and positional conditions hiding keys.
struct ScoresMatch {
  /// The leaf read at the identity: the Q K^T tensor.
  Value qk;
  double scale = 1.0;
  /// The cap of softcap * tanh(x / softcap) around the scaled scores (0: none).
  double softcap = 0.0;
  /// An additive mask: a leaf (casts stripped) and its map.
  const ScalarExpr *mask = nullptr;
  /// A boolean mask: an i1 leaf and its map; a key is hidden where it is
  /// false (where it is true when `boolMaskHides`).
  const ScalarExpr *boolMask = nullptr;
  bool boolMaskHides = false;
  /// Conditions on (i, j) only; a key is visible when every `keepIf` is true,
  /// every `dropIf` false and every `zeroIf` is 0 (its other values must be
  /// -inf-like).
  SmallVector<const ScalarExpr *> keepIf, dropIf, zeroIf;
  /// Conditions that also read batch or head positions or tensors (document
  /// ids, a second boolean tensor): a key is visible when every one holds.
  /// They become a mask_mod region.
  SmallVector<MaskCondition> maskModIf;
  /// A finite large negative (<= -1e30) stands for -inf somewhere.
  bool finiteNegInf = false;
  /// What the scores are before the masks when they are not `softcap * tanh(
  /// scale * qk / softcap)` or `scale * qk`: an expression of the `qk` leaf,
  /// positions, constants and tensors defined above (ALiBi: scale * qk +
  /// slope[h] * (j - i)). It becomes a score_mod region whose score argument
  /// stands for `scaledScores` (`scale` times the qk leaf, or the leaf itself
  /// with scale 1). Null otherwise.
  const ScalarExpr *scoreMod = nullptr;
  const ScalarExpr *scaledScores = nullptr;
};
std::optional<ScoresMatch> matchScores(const ScalarExprBuilder &builder,
                                       const ScalarExpr *scores);

/// The band that the positional conditions of `scores` state: row i sees the
/// keys j with i + lower <= j <= i + upper, a missing bound leaving that side
/// open (causal: `upper` alone; a sliding window: both).
struct KeyBand {
  std::optional<int64_t> lower, upper;
  /// Some row sees no key.
  bool emptyRows = false;
  /// A finite large negative (<= -1e30) stands for -inf somewhere.
  bool finiteNegInf = false;
  /// Every key of every row visible: no positional mask at all.
  bool unmasked() const { return !lower && !upper; }
};
/// The band of `scores` on a static nq x nk grid, checked at every point;
/// std::nullopt when the conditions state something else (keys that are not
/// one interval around the diagonal, a function of batch or head, nothing
/// visible at all) or the grid is larger than 2^22 points, or its points times
/// the conditions' size as trees more than 2^27.
/// `alsoVisible`, when given, is a further condition on (i, j) (a constant
/// mask tensor) that the band must state too.
std::optional<KeyBand> inferKeyBand(
    const ScoresMatch &scores, unsigned rank, int64_t nq, int64_t nk,
    function_ref<std::optional<bool>(int64_t, int64_t)> alsoVisible = nullptr);

/// A mask that is a constant tensor read at (i, j) (broadcast over the batch
/// dims): which keys it leaves visible. What TOSA / ONNX exports with static
/// shapes carry as their causal mask.
struct ConstantMask {
  SmallVector<int64_t> shape;
  int64_t rowDim = -1, colDim = -1;
  std::vector<bool> visible; // row-major over `shape`
  /// Whether key j is visible to row i (std::nullopt outside the tensor).
  std::optional<bool> at(int64_t i, int64_t j) const;
};
/// The constant mask that `leaf` reads: an i1 tensor (hiding where false, or
/// where true with `hidesWhereTrue`) or a float tensor of 0 and -inf only,
/// read at positions only; std::nullopt otherwise.
std::optional<ConstantMask>
matchConstantMask(const ScalarExpr *leaf, unsigned rank, bool hidesWhereTrue);
/// The band of `scores` for any nq and nk (dynamic sizes): every condition
/// must be a comparison of j - i with a constant, computed in index or 64-bit
/// integers from the positions (exact for every tensor size), combined by
/// and/not/select, and of at most 2^16 nodes as trees; std::nullopt otherwise.
std::optional<KeyBand> deriveKeyBand(const ScoresMatch &scores, unsigned rank);

/// How the scores' index space (batch..., i, j) is computed from the region
/// arguments (b, h, i, j) of the raised fa.attention.
struct RegionIndexing {
  enum class Batch {
    BH,   // (b, h, i, j): the scores are [B, H, Nq, Nk]
    Flat, // (b * heads + h, i, j): [B*H, Nq, Nk] with fa's [B, H, ...]
    Unit, // (b, i, j): [B*H, Nq, Nk] raised as [B*H, 1, ...]
  };
  Batch batch = Batch::BH;
  int64_t heads = 1;
};

/// Fills the empty `region` with a score_mod body (f32, index x 4): `scores`
/// computed from the score argument, which stands for `scaledScores` (any
/// read of the `qk` tensor when that is the leaf itself), plus `additive` (a
/// mask leaf, may be null). Tensors the expressions read are extracted at
/// their maps; `isAvailable` says whether a value may be used there (defined
/// above the op). Fails, leaving the region to the caller, on anything it
/// cannot express.
LogicalResult buildScoreModRegion(OpBuilder &b, Location loc, Region &region,
                                  const RegionIndexing &indexing,
                                  const ScalarExpr *scores,
                                  const ScalarExpr *scaledScores, Value qk,
                                  const ScalarExpr *additive,
                                  function_ref<bool(Value)> isAvailable);
/// Fills the empty `region` with a mask_mod body (index x 4): the
/// conjunction of `conditions`.
LogicalResult buildMaskModRegion(OpBuilder &b, Location loc, Region &region,
                                 const RegionIndexing &indexing,
                                 ArrayRef<MaskCondition> conditions,
                                 function_ref<bool(Value)> isAvailable);

/// Replaces the P V contraction `pv` of a softmax(scale Q K^T [+ mask]) V
/// written in linalg by fa.attention (and reshapes back to the type of its
/// result). Fails, changing nothing, when any part does not match.
LogicalResult raiseAttention(RewriterBase &rewriter, linalg::LinalgOp pv);

} // namespace mlir::fa::raise

#endif // FA_DIALECT_ATTENTION_TRANSFORMS_RAISEATTENTION_H
