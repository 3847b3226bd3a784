//===- OnlineSoftmax.h - fragment-level online softmax ----------*- C++ -*-===//
//
// One online-softmax step of one score row, on the scores a thread holds in
// registers (an mma.sync or wgmma accumulator fragment): the row max across
// the 4 lanes of the row, the rescale factor alpha = exp2(m_old - m_new), the
// probabilities exp2(s * scale * log2(e) - m_new) and this thread's part of
// the new row sum. The fully-masked-row rule is AttentionUtils' safeRowMax,
// the same the CPU lowerings use. Chip-independent: sm_80 and sm_90a share it.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_ONLINESOFTMAX_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_ONLINESOFTMAX_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

namespace mlir::fa::kernel {

struct OnlineSoftmaxConfig {
  /// scale * log2(e): the softmax runs in log2 units (exp2).
  double scaleLog2e = 1.0;
  /// When set, an f32 value used instead of the constant scaleLog2e (fp8:
  /// scale * log2(e) * q_descale * k_descale, read at run time).
  Value scaleLog2eValue;
  /// Scores stay unscaled until the exponent, exp2(s * c - m) as one FMA,
  /// and the row max is scaled once (needs c > 0, so that the max commutes
  /// with the scaling). Otherwise scores are scaled first (scaleScore).
  bool scaleInExponent = true;
  /// How the thread's scores of a row are reduced to its max.
  enum class MaxReduction {
    Tree,        ///< a tree of max.f32 (short dependency chain)
    Chain,       ///< a chain of max.f32
    SelectChain, ///< a chain of compare + select
  } maxReduction = MaxReduction::Chain;
  /// Every n-th exponent (n > 0) by exp2Poly on the FMA pipes instead of
  /// the MUFU; 0 = all on the MUFU.
  int64_t exp2PolyEvery = 0;
};

/// What one row's step produces.
struct OnlineRowUpdate {
  Value newMax; ///< running max (log2 units), -inf while nothing is visible
  Value newSum; ///< this thread's part of the running sum (quad-reduced last)
  Value alpha;  ///< exp2(m_old - m_new): the factor for O and the old sum
};

/// A score as it enters the softmax: multiplied by the scale unless it
/// stays unscaled until the exponent.
Value scaleScore(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg, Value s);

/// The step for one row: `scores` (this thread's scores of the row, masked
/// ones -inf) are replaced by their probabilities; `max` and `sum` are the
/// running values before the step. `bias` (log2 units, optional): a term
/// every score this thread holds of the row has beyond `scores` (a
/// score_mod's bias split off per row and lane,
/// KernelScoreModifiers::splitsBias), added to the step's max and
/// subtracted from the max the exponents use.
OnlineRowUpdate updateOnlineSoftmaxRow(KernelBuilder &kb,
                                       const OnlineSoftmaxConfig &cfg,
                                       MutableArrayRef<Value> scores, Value max,
                                       Value sum, Value bias = Value());

/// This step's max of a row (log2 units, across the row's 4 lanes): the
/// thread's `scores` reduced, scaled when they are raw, plus the thread's
/// `bias` (log2 units; it may differ between the row's lanes) when given.
Value stepRowMax(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
                 ArrayRef<Value> scores, Value bias = Value());

/// The max exponentiateRow subtracts from `scores` that lack the row's
/// `bias` (log2 units): maxUsed - bias (maxUsed without one).
Value exponentMax(KernelBuilder &kb, Value maxUsed, Value bias);

/// max(max, stepMax) as the config's reduction takes it.
Value runningMax(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg, Value max,
                 Value stepMax);

/// Replaces `scores` by exp2(s * scale * log2(e) - maxUsed) and returns
/// their sum (this thread's part of the row's). `maxUsed` is finite
/// (safeRowMax).
Value exponentiateRow(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
                      MutableArrayRef<Value> scores, Value maxUsed);

// Conditional rescaling (FlashAttention-4's): a row keeps its running max,
// and O and the sum are not rescaled, until a step's max exceeds it by more
// than a threshold (log2 units). The probabilities are then at most
// 2^threshold instead of 1; O and the sum, both relative to the same stale
// max, still give O / l exactly, and lse = max + log2(l) as before. A step
// where no row of the warp asks skips the multiplications of O.

/// The threshold value that means "rescale every step".
constexpr int64_t kRescaleEveryStep = -1;
/// The measured default threshold where conditional rescaling is on
/// (FlashAttention-4's): P <= 256 keeps f16 / bf16 P far from overflow.
constexpr int64_t kDefaultRescaleThreshold = 8;
/// The largest threshold an option may set: 2^14 under f16's 65504.
constexpr int64_t kMaxRescaleThreshold = 14;
/// ... and with fp8 probabilities: 2^8 under e4m3's 448.
constexpr int64_t kMaxFP8RescaleThreshold = 8;

/// The vote of a step with conditional rescaling: stepMax[i] = stepRowMax of
/// rows[i], and whether any row of the warp asks (stepMax[i] > maxes[i] +
/// threshold: a row's first visible scores always ask, a row with none never
/// does), one vote.sync.any over the warp: the same i1 in every lane, so a
/// branch on it does not diverge.
/// `biases`: the rows' biases (stepRowMax), empty or null without.
Value voteRescale(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
                  ArrayRef<SmallVector<Value>> rows, ArrayRef<Value> maxes,
                  int64_t threshold, SmallVectorImpl<Value> &stepMax,
                  ArrayRef<Value> biases = {});

/// Where the vote asked: the row's new max, alpha = exp2(m_old - m_new) and
/// the sum rescaled by it (newSum = alpha * sum, before this step's part).
OnlineRowUpdate rescaleRow(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
                           Value max, Value stepMax, Value sum);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_ONLINESOFTMAX_H
