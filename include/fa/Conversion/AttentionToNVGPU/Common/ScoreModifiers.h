//===- ScoreModifiers.h - softcap, masks and modifier regions ---*- C++ -*-===//
//
// What a kernel applies to each score beyond the scale, the fp8 descales and
// the positional window, in fa.attention's order (docs/Attention.md):
// softcap, the additive mask operand, the score_mod region, then the boolean
// mask operand and the mask_mod region (-inf where a key is hidden). The
// sm_80 and sm_90a softmax steps call KernelScoreModifiers::apply on each score
// fragment with its row and column; the regions are cloned into the kernel
// (captured tensors become kernel parameters, tensor.extract a global load).
// Chip-independent.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_SCOREMODIFIERS_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_SCOREMODIFIERS_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"
#include "fa/Conversion/AttentionToNVGPU/Common/TileScheduler.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Region.h"

#include <optional>
#include <vector>

namespace mlir::fa {

/// The modifiers of one attention as the tiled form states them (read by
/// matchTiledAttention). Plain data: the regions are the tiled form's, alive
/// while the kernel is built.
struct ScoreModifierSpec {
  /// softcap * tanh(s / softcap).
  std::optional<double> softcap;
  /// The mask operand [Bm, Hm, Nm, Nk] (Bm = B or 1, Hm = Hq or 1, Nm = Nq
  /// or 1): added (f16, bf16, f32) or keeping a key where true (i1, one byte
  /// per element in memory).
  struct Mask {
    unsigned arg = 0; ///< function argument number
    Type elementType;
    bool batchBroadcast = false, headBroadcast = false;
    /// One row that every query row reads (a per-key mask: key padding).
    bool rowBroadcast = false;
  };
  std::optional<Mask> mask;
  /// The regions (fa.attention's score_mod / mask_mod, as the steps hold
  /// them), null when absent.
  Region *scoreMod = nullptr, *maskMod = nullptr;
  /// The backward's score_mod: fa.attention_grad's score_mod_grad, which
  /// yields the modified score and its derivative (fa-differentiate-score-mod).
  Region *scoreModGrad = nullptr;
  /// The tensors the regions read: function arguments of static shape, in
  /// kernel parameter order (named arg<N> after the argument number N).
  struct Capture {
    unsigned arg = 0;
    RankedTensorType type;
  };
  SmallVector<Capture> captures;
  /// The backward's grad_captures: the captured arguments whose gradients
  /// the kernel adds into (f32, the capture's shape; kernel parameters
  /// grad_arg<N> after the captures), and score_mod_grad's capture_grad_terms
  /// entries: each term's position in captureGrads and whether its indices
  /// read neither i nor j (the same element all over a tile).
  SmallVector<Capture> captureGrads;
  struct CaptureGradTerm {
    int64_t grad = 0;
    bool tileUniform = false;
  };
  SmallVector<CaptureGradTerm> captureGradTerms;
  /// The kernel parameters insertScoreModifierParams adds: the mask's, the
  /// captures', the capture gradients'.
  size_t numParams() const {
    return (mask ? 1 : 0) + captures.size() + captureGrads.size();
  }

  /// How mask_mod can be bounded over a block of rows x keys by interval
  /// arithmetic (boundMaskMod): not at all; with arithmetic alone; or reading
  /// captured 1-D integer tensors too (the range of the tensor over an index
  /// interval is a scan of it). Bounded, blocks with no visible key are never
  /// visited and blocks whose every key is visible skip the per-key test.
  enum class MaskModBound { None, Arithmetic, TensorReads };
  MaskModBound maskModBound = MaskModBound::None;

  bool empty() const {
    return !softcap && !mask && !scoreMod && !maskMod && !scoreModGrad;
  }
  /// Whether a region is present (the kernels then evaluate it per score).
  bool hasRegions() const { return scoreMod || maskMod || scoreModGrad; }
  /// Whether a key may be hidden per element (not only by position).
  bool hidesKeys() const {
    return maskMod || (mask && mask->elementType.isInteger(1));
  }
  /// Whether mask_mod reads captured tensors (document ids) and is bounded
  /// with them (its block classification scans the tensors).
  bool maskModReadsTensors() const {
    return maskMod && maskModBound == MaskModBound::TensorReads;
  }
  /// Whether the mask operand is a per-key boolean mask (one row that every
  /// query row reads: key padding), classified per key block by a scan of
  /// its bytes as a bounded mask_mod is: blocks it hides are never visited,
  /// blocks it shows wholly skip its per-key test.
  bool classifiesMaskOperand() const {
    return mask && mask->rowBroadcast && mask->elementType.isInteger(1);
  }
  /// Whether key blocks are classified (a bounded mask_mod, a per-key
  /// boolean mask), and whether that reads tensors (worth a scan at tile
  /// start shared by the CTA's warps).
  bool classifiesBlocks() const {
    return (maskMod && maskModBound != MaskModBound::None) ||
           classifiesMaskOperand();
  }
  bool classifyingReadsTensors() const {
    return maskModReadsTensors() || classifiesMaskOperand();
  }
  /// Softcap is the only modifier (no mask operand, no region).
  bool softcapOnly() const { return softcap && !mask && !hasRegions(); }
  /// Whether score_mod is present and takes the score through arithmetic
  /// alone (ALiBi, relative biases): no math-dialect op (tanh, exp: MUFU
  /// work per score) takes a value computed from the score; one that only
  /// sees positions or heads (a per-head slope's exp2) may.
  bool scoreModIsArithmetic() const;
  /// Whether score_mod yields the score plus a term computed without it:
  /// s + g, g + s, s - g or fma(x, y, s), with g, x and y computed from
  /// positions, heads and captured values alone (ALiBi, relative-position
  /// biases). A kernel may then evaluate that term apart from the score
  /// (KernelScoreModifiers::splitsBias).
  bool scoreModAddsBias() const;
  /// Whether the added bias can be split (scoreModAddsBias, and nothing
  /// modifies the score before it: no softcap, no mask operand).
  bool addsSplittableBias() const {
    return scoreMod && !softcap && !mask && scoreModAddsBias();
  }
  /// Whether a kernel that can (KernelScoreModifiers' `splitBias`) splits
  /// the score_mod's bias (splitsBias): addsSplittableBias and a positive
  /// scale (the scores stay raw until the exponent).
  bool splitsBias(double scale) const {
    return scale > 0 && addsSplittableBias();
  }
};

/// Checks that the kernels can evaluate `region` (a score_mod or mask_mod):
/// one block of arith / math ops, tensor.extract and tensor.dim of captured
/// tensors; values from above are constants or function arguments of `func`
/// (ranked tensors of static shape with f16 / bf16 / f32 / integer
/// elements). Appends the captured tensor arguments to `captures` (once
/// each). Emits a diagnostic on `anchor` naming what does not fit.
LogicalResult
checkModifierRegionForKernel(Operation *anchor, Region &region,
                             Operation *func,
                             SmallVectorImpl<ScoreModifierSpec::Capture> &captures);

/// How far interval arithmetic bounds `maskMod` soundly: integer constants,
/// add / sub, multiplication and division by constants, signed min / max /
/// compares, index casts, i1 and / or / xor, select (Arithmetic), and
/// tensor.extract of a captured 1-D integer tensor (TensorReads).
ScoreModifierSpec::MaskModBound boundMaskMod(Region &maskMod);

/// The kernel parameters of `spec` (mask, then the captures), inserted into
/// `params` before its first i32 size parameter.
void insertScoreModifierParams(std::vector<KernelParam> &params,
                               const ScoreModifierSpec &spec);

/// Whether `v` is computed from `arg` (a block argument of the region that
/// defines `v`), through the operands of the ops that define it there.
bool dependsOnRegionArgument(Value v, BlockArgument arg);

} // namespace mlir::fa

namespace mlir::fa::kernel {

/// Static extent of the 1-D memrefs that stand for a kernel's bare pointers.
constexpr int64_t kModifierGlobalExtent = int64_t(1) << 40;

/// The modifiers inside a kernel: built once per tile (batch and head known),
/// applied per score.
class KernelScoreModifiers {
public:
  /// `params` are the kernel's arguments matching insertScoreModifierParams
  /// (mask first, then the captures).
  /// `splitBias`: the caller's softmax takes a per-row bias (Row::bias,
  /// exponentBias) and builds its rows with biasedRow where splitsBias.
  KernelScoreModifiers(KernelBuilder &kb, const ScoreModifierSpec &spec,
                       ValueRange params, const ProblemSizes &sizes,
                       Value batch, Value head, bool splitBias = false);

  bool empty() const { return spec.empty(); }

  /// Whether apply() scales the score before modifying it: softcap,
  /// score_mod and an additive mask act on the scaled score; a mask_mod
  /// alone commutes with a positive scale, so the score stays unscaled and
  /// the softmax scales it in its exponent as without modifiers (one
  /// multiply per score less). The softmax's scale is then scale * log2(e),
  /// else log2(e). (A boolean mask operand would commute too; its kernels
  /// spill more unscaled, and it is a per-score load anyway.)
  bool scalesFirst(double scale) const {
    bool maskModOnly = spec.maskMod && !spec.softcap && !spec.scoreMod &&
                       !spec.mask;
    return !empty() && (!maskModOnly || !(scale > 0)) && !splitsBias(scale);
  }

  /// Whether a score_mod that adds a bias to the score (scoreModAddsBias:
  /// ALiBi, relative positions) has that bias split in two: the part of the
  /// row, block and lane, bias(i, colBase) with colBase the thread's first
  /// column, computed once per row and step (Row::bias) and added by the
  /// softmax to the thread's max (before the max across the row's lanes)
  /// and exponent, and
  /// the part that moves with the column, bias(i, colBase + n) - bias(i,
  /// colBase) = step * n when the region makes it affine in the column (one
  /// fma per raw score, apply()). The scores stay unscaled (the softmax
  /// scales in its exponent, as without modifiers): one fma per score
  /// instead of two. Needs the constructor's `splitBias` and
  /// ScoreModifierSpec::splitsBias.
  bool splitsBias(double scale) const { return splitBias && scale > 0; }

  /// The factor the softmax's exponent multiplies apply()'s scores by (to
  /// log2 units): scale * log2(e) for raw scores, log2(e) for scaled ones.
  /// (softcap's factor left to the exponent's FFMA, tanh's result used as
  /// it is, measured 3-7% slower without causal, 2-4% faster with it on the
  /// H200: not done.)
  double exponentScale(double scale) const {
    return scalesFirst(scale) ? M_LOG2E : scale * M_LOG2E;
  }

  /// Per-row values: the query position clamped into [0, Nq) (a tail row's
  /// scores are computed but never stored), the mask row's offset.
  struct Row {
    Value i, maskRow;
    /// splitsBias (biasedRow, with the block's first column `colBase`):
    /// the score_mod's bias at (i, colBase) in natural units (null: the
    /// bias is evaluated per score, it does not move affinely with the
    /// column), and its change per column in raw-score units (bias step /
    /// scale; null: constant along the row).
    Value colBase, bias, rawStep;
  };
  Row row(Value rowQ) const;
  /// The row with its bias split off (splitsBias(scale)): `colBase` is the
  /// block's first column of this thread's fragment, the columns apply() is
  /// then called with are colBase plus constants.
  Row biasedRow(Value rowQ, Value colBase, double scale) const;
  /// The row's bias in the softmax's log2 units (bias * log2(e)), null
  /// without one: the softmax adds it to the row's step max and subtracts
  /// it from the max its exponent uses.
  Value exponentBias(const Row &row) const;

  /// The score `s` (Q K^T, not yet scaled) of `row` and key column `col`
  /// (may be past Nk in a tail block: the caller masks it; the modifiers
  /// read a clamped column) scaled by `scale` (when scalesFirst) and
  /// modified (natural units): -inf where the mask or mask_mod hides the
  /// key.
  /// With `maskModApplied` false the classified hides are left out: a
  /// bounded mask_mod and a per-key boolean mask (a block blockVisibility
  /// found fully visible).
  Value apply(Value s, double scale, const Row &row, Value col,
              bool maskModApplied = true) const;

  /// The backward's view of the same score (a spec with softcap, the mask
  /// operand, score_mod_grad and mask_mod): the modified score (natural
  /// units, an additive mask added, not masked), its derivative with respect
  /// to scale * s (softcap's times score_mod's; null when it is 1) and
  /// whether a boolean mask and mask_mod keep the key (i1; null without
  /// either).
  struct ScoreWithDerivative {
    Value score, derivative, keep;
  };

  /// The backward's capture-gradient terms (spec.captureGradTerms) at the
  /// score of `row` and key column `col`: each term's gradient buffer
  /// (f32 memref), the element offset its indices name (clamped into the
  /// capture), its coefficient d t / d(element) and the spec's tileUniform.
  /// The coefficients must not depend on the score (the GPU lowering
  /// checks).
  struct CaptureGradTerm {
    Value buffer, offset, coefficient;
    bool tileUniform = false;
  };
  SmallVector<CaptureGradTerm> captureGradTerms(const Row &row,
                                                Value col) const;
  ScoreWithDerivative applyWithDerivative(Value s, double scale,
                                          const Row &row, Value col) const;

  /// Whether the tile's key range is narrowed to the blocks that a bounded
  /// mask_mod and a per-key boolean mask may show (narrowBlockRange), and
  /// whether each visited block is classified (blockVisibility per step:
  /// full blocks skip the per-key test); ScoreModifierSpec::classifiesBlocks.
  bool narrowsBlocks() const { return spec.classifiesBlocks(); }
  bool classifiesBlocks() const { return narrowsBlocks(); }
  /// Whether classifying a block reads tensors (document ids, the mask's
  /// bytes): worth recording at tile start (FullBlocks) rather than per
  /// step, where position arithmetic alone is cheaper than a private-memory
  /// lookup.
  bool classifyingReadsTensors() const {
    return spec.classifyingReadsTensors();
  }
  /// mask_mod and a per-key boolean mask over rows [iLo, iHi] x keys [jLo,
  /// jHi] (inclusive): `some` key may be visible, `all` are visible (i1
  /// values; classifiesBlocks).
  struct BlockVisibility {
    Value some, all;
  };
  /// `warpUniform`: every lane of the warp asks for the same block (a
  /// softmax step), so captured tensors are scanned by the warp together.
  /// `maxSpan` (a multiple of 32, at most kMaxScanSpan): a captured tensor
  /// is scanned over at most that many indices; a wider interval is
  /// unbounded (the block then counts as partly visible: always correct).
  /// The lanes whose interval a lane-varying scan reads: first, first +
  /// step, ... (the others' results are undefined); all without one.
  struct LaneSubset {
    Value first;
    int64_t step;
  };
  BlockVisibility blockVisibility(Value iLo, Value iHi, Value jLo, Value jHi,
                                  bool warpUniform = false,
                                  int64_t maxSpan = kMaxScanSpan,
                                  const LaneSubset *lanes = nullptr) const;
  static constexpr int64_t kMaxScanSpan = 256;
  /// The per-key boolean mask alone (classifiesMaskOperand) over keys [jLo,
  /// jHi] of the tile's (b, h) plane: a scan of its bytes (`warpUniform`,
  /// `maxSpan`, `lanes` as for blockVisibility; a wider interval is some and
  /// not all).
  BlockVisibility
  maskOperandVisibility(Value jLo, Value jHi, bool warpUniform = true,
                        int64_t maxSpan = kMaxScanSpan,
                        const LaneSubset *lanes = nullptr) const;
  /// The last row of the tile from `q0`: min(q0 + blockQ, Nq) - 1.
  Value lastRow(Value q0, int64_t blockQ) const;
  /// The last key of block `j`: min((j + 1) * blockKV, Nk) - 1.
  Value blockKeyHi(Value j, int64_t blockKV) const;
  /// The blocks that mask_mod shows wholly to the tile's rows, recorded by
  /// narrowBlockRange's scan: bit b of word w of `words` (private memory,
  /// kFullBlockWords words) is block `begin` + 32 w + b. A block past them
  /// reads as not full (the per-key test then runs: always correct).
  struct FullBlocks {
    Value words, begin;
    /// Words per chunk: the OR of `groups` words kFullBlockWords apart (the
    /// warps that shared a chunk's scan each wrote their lanes' bits).
    int64_t groups = 1;
  };
  static constexpr int64_t kFullBlockWords = 64;
  /// [begin, end) narrowed to the blocks where mask_mod may show a key to
  /// rows [iLo, iHi]: from the first to one past the last such block, [end,
  /// end) when none (a scan over the blocks; classifiesBlocks). With `full`,
  /// the same scan records which blocks are wholly visible.
  ///
  /// With `share`, the CTA's warps scan it together: each warp a share of the
  /// chunks of 32 blocks, their ranges and ballots meet in shared memory
  /// after a CTA barrier (every thread of the CTA must be here), and `full`'s
  /// words are that shared memory. Without, every warp scans all of it.
  /// A chunk of 32 blocks is scanned by kScanWarpsPerChunk warps together
  /// (each every third lane's block) when the CTA's warps divide by it.
  struct WarpShare {
    Value warp;     ///< the calling thread's warp in the CTA
    int64_t warps;  ///< the CTA's warps
    Value scratch;  ///< shared memory, scanScratchWords(warps) x i32
  };
  static constexpr int64_t kScanWarpsPerChunk = 3;
  static int64_t scanWarpsPerChunk(int64_t warps) {
    return warps % kScanWarpsPerChunk == 0 ? kScanWarpsPerChunk : 1;
  }
  static int64_t scanScratchWords(int64_t warps) {
    return scanWarpsPerChunk(warps) * kFullBlockWords + 2 * warps;
  }
  std::pair<Value, Value> narrowBlockRange(Value begin, Value end, Value iLo,
                                           Value iHi, int64_t blockKV,
                                           FullBlocks *full = nullptr,
                                           const WarpShare *share =
                                               nullptr) const;
  /// The same over query blocks for keys [jLo, jHi] (the backward: a CTA
  /// per key block): [begin, end) narrowed to the query blocks of block-q
  /// rows where mask_mod may show one of those keys.
  std::pair<Value, Value> narrowQueryBlockRange(Value begin, Value end,
                                                Value jLo, Value jHi,
                                                int64_t blockQ) const;
  /// Whether block `j` is wholly visible per `full` (i1): a lookup instead
  /// of blockVisibility's scan of the block's keys at every step.
  Value isFullBlock(const FullBlocks &full, Value j) const;
  /// Scans, here and once, the captured tensors that mask_mod reads at the
  /// row (`t[i]`) over the tile's rows [iLo, iHi] (by the warp together:
  /// every lane must be here); blockVisibility and narrowBlockRange with
  /// this `iLo` use those ranges instead of scanning them again at each
  /// block (document masking: the rows' ids were read per step).
  void hoistRowRanges(Value iLo, Value iHi);

private:
  /// narrowBlockRange's scan over blocks [begin, end), `classify` giving a
  /// block's visibility (for the lanes of its LaneSubset when given one).
  std::pair<Value, Value> narrowBlocks(
      Value begin, Value end,
      llvm::function_ref<BlockVisibility(Value, const LaneSubset *)> classify,
      FullBlocks *full, const WarpShare *share = nullptr) const;

public:
  /// A vector of integers the block classification scans: a captured 1-D
  /// tensor (its static size) or the per-key mask's row (Nk bytes from
  /// `base`).
  struct ScanSource {
    Value data; ///< memref
    Value base; ///< element offset of element 0, null for 0
    Type elementType;
    Value size; ///< element count, null: staticSize
    int64_t staticSize = 0;
    Value sizeValue(KernelBuilder &kb) const;
    Value lastIndex(KernelBuilder &kb) const;
    /// Element `index` (< 2^31 elements).
    Value load(KernelBuilder &kb, Value index) const;
  };

private:
  /// The captured tensor `extract` reads, as a scan source.
  ScanSource captured(tensor::ExtractOp extract) const;
  /// The per-key mask's row of the tile's (b, h) (classifiesMaskOperand).
  ScanSource maskRowSource() const;
  /// The range [min, max] (index values) of `src` over indices [lo, hi] (a
  /// loop over at most 256 elements; a wider or empty interval is
  /// unbounded).
  std::pair<Value, Value> tensorRange(const ScanSource &src, Value lo,
                                      Value hi) const;
  /// The same with [lo, hi] the same in every lane of the warp: each lane
  /// reads maxSpan / 32 elements, a butterfly of shuffles combines them
  /// (elements of at most 32 bits; wider ones go to tensorRange); an
  /// interval wider than maxSpan is unbounded.
  std::pair<Value, Value> tensorRangeWarp(const ScanSource &src, Value lo,
                                          Value hi,
                                          int64_t maxSpan = kMaxScanSpan) const;
  /// The same with [lo, hi] different in each lane (narrowBlockRange's
  /// lane-per-block scan): the warp scans the 32 intervals one after the
  /// other (every lane must be here).
  std::pair<Value, Value> tensorRangeLanes(const ScanSource &src, Value lo,
                                           Value hi, int64_t maxSpan,
                                           const LaneSubset *lanes) const;
  /// Clones `region`'s body with its block arguments bound to `args` and
  /// returns the yielded values. With `fuseFloats` (the forward's) a float
  /// that moves with the key column stays base + k * offset through
  /// row-constant arithmetic, and the float ops may be contracted into fmas
  /// (docs/Attention.md); without it (the backward's: not measured with
  /// them yet) only the int-to-float conversion of a column-affine value is
  /// folded, the float ops cloned as they are.
  SmallVector<Value> inlineRegion(Region &region, ArrayRef<Value> args,
                                  bool fuseFloats = false) const;
  /// splitsBias: the score_mod's bias at row `r` and column `col` (the
  /// region inlined with the score -0.0, a row constant): its value, and
  /// when it moves affinely with `col` = colBase + constant also its form
  /// base + k * offset (`k` null for 1; `base` null when not affine).
  struct InlinedBias {
    Value value, base, k;
    int64_t offset = 0;
  };
  InlinedBias inlineBias(const Row &r, Value col) const;
  /// inlineRegion, or with `yieldBias` inlineBias's region (its yield, in
  /// affine form too when it has one; returns nothing then).
  SmallVector<Value> inlineRegionImpl(Region &region, ArrayRef<Value> args,
                                      bool fuseFloats,
                                      InlinedBias *yieldBias) const;
  /// The column read by the modifiers: `col`, clamped into [0, Nk) where
  /// the mask, or a captured tensor at an index computed from the column, is
  /// read (capturedAtColumn).
  Value readColumn(Value col) const;
  /// The mask operand at row `r` and read column `j`: an additive one is
  /// added to `s`; a boolean one gives whether it keeps the key (null for
  /// an additive one).
  Value applyMaskOperand(Value &s, const Row &r, Value j) const;

  KernelBuilder &kb;
  const ScoreModifierSpec &spec;
  /// The constructor's `splitBias` where the spec adds a splittable bias.
  bool splitBias = false;
  /// splitBias: whether the bias reads the key position at all (else it is
  /// a row constant).
  bool biasReadsColumn = false;
  /// Whether a region reads a captured tensor at an index computed from the
  /// key position (docs[j], table[j - i + N - 1]; not slopes[h]).
  bool capturedAtColumn = false;
  Value mask;                         ///< [Bm * Hm * Nm * Nk] memref
  DenseMap<unsigned, Value> captures; ///< argument number -> memref
  SmallVector<Value> captureGradBuffers; ///< per captureGrads: f32 memref
  Value batch, head, nq, nk;
  Value maskPlane; ///< element offset of the tile's [Nm, Nk] mask plane
  /// hoistRowRanges: the rows' first index and, per row-indexed extract of
  /// mask_mod, the [min, max] of what it reads over the tile's rows.
  Value hoistedRowLo;
  DenseMap<Operation *, std::pair<Value, Value>> hoistedRowRanges;
};

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_SCOREMODIFIERS_H
