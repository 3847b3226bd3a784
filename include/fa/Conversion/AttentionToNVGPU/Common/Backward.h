//===- Backward.h - chip-independent pieces of the backward kernels -*- C++ -*-===//
//
// What the backward kernels of both chips (SM80/BackwardKernel: mma.sync,
// SM90/BackwardKernel: wgmma) share: the configuration and launch
// parameters, the CTA's keys (a CTA per key block, K/V head and batch), the
// steps over (query head of the group, query block that sees the keys), the
// row statistics staged per step (lse as log2, delta), and the per-score
// math of P and of softcap's derivative with the band's mask. See
// docs/Backward.md.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_BACKWARD_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_BACKWARD_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/Common/TileScheduler.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::fa::kernel {

/// What a backward builder needs to know about one fa.attention_grad.
struct BackwardConfig {
  std::string kernelName, moduleName;
  Type elementType; ///< f16 or bf16
  int64_t headDim;  ///< 64 or 128
  /// Keys per CTA and query rows per step.
  int64_t blockKV = 64, blockQ = 64;
  int64_t windowLeft = -1, windowRight = -1; ///< causal: -1, 0
  double scale = 1.0;
  std::optional<double> softcap;
  /// The op's regions (score_mod_grad, mask_mod) and the tensors they read,
  /// with softcap again; empty without regions (the kernels then take the
  /// plain path, whose PTX does not change).
  ScoreModifierSpec modifiers;
  /// dQ added in a fixed order (key block by key block, through the
  /// dq_semaphore parameter), so dq is the same bits on every run.
  bool deterministic = false;
  /// sm_90a: q, k, v, do and dq_accum are reached through tensor maps
  /// (parameters q_map, k_map, v_map, do_map, dq_accum_map): the tiles
  /// loaded by TMA, dQ tiles added by TMA reduce-adds.
  bool tensorMaps = false;
  /// sm_90a: the Q / dO buffers of the TMA ring (2 or 3; fa.grad.stages).
  int64_t stages = 2;
  /// Packed variable-length sequences (the op's varlen clause, sm_90a): q,
  /// k, v, do, lse, delta, dq_accum, dk, dv are the batch-1 tensors
  /// [1, H, T, ...]; the grid's z runs over the sequences (cu_seqlens_q,
  /// cu_seqlens_k) and its x over the key blocks of the longest
  /// (max_seqlen_k); each CTA's masks, causal diagonal and query blocks are
  /// its sequence's.
  bool varlen = false;
  /// varlen: q, k, v, do, dq, dk, dv token-major [T, H, D] (FlashAttention's
  /// varlen layout, fa-to-ptx{varlen-layout=thd}) and lse, delta [Hq, T];
  /// else the batch-1 planes. dq_accum stays [1, Hq, T, D] either way (the
  /// kernel's own buffer, added into by tile).
  bool varlenTokenMajor = false;
  /// Deterministic turns from the last key block that sees a query block
  /// down to the first, with the grid running the key blocks backwards.
  /// With a right window edge (causal) a key block's query blocks start
  /// later the later the block: CTA j reaches its first query blocks first,
  /// and only blocks after it have added there before; ascending turns would
  /// make it wait until CTA 0 had come that far.
  bool descendingTurns() const { return deterministic && windowRight >= 0; }

  /// Whether dS is multiplied by a derivative of the modified score
  /// (softcap's, score_mod's): probabilityTile then returns it too.
  bool hasScoreDerivative() const {
    return softcap || modifiers.scoreModGrad;
  }
  /// Whether the backward forms capture gradients (grad_captures).
  bool hasCaptureGrads() const { return !modifiers.captureGradTerms.empty(); }
  /// Whether dS is dS_t itself: no softcap, and score_mod_grad's dt/ds the
  /// constant 1 (score_mod adds a bias).
  bool gradScoreIsGradT() const;
  /// The values probabilityTile returns for a tile of block-q queries.
  int64_t probabilityTileValues() const {
    return 2 * (blockQ / 4) * (hasScoreDerivative() ? 2 : 1);
  }

  /// sm_80: a warp per 16 keys.
  int64_t warps() const { return blockKV / 16; }
  int64_t threads() const { return 32 * warps(); }
};

/// The kernel's parameters in launch order: q, k, v, do, lse, delta,
/// dq_accum (q_map, k_map, v_map, do_map, dq_accum_map with tensorMaps), dk,
/// dv, dq_semaphore
/// (deterministic), the tensors the regions read (arg<N>), cu_seqlens_q and
/// cu_seqlens_k (varlen), then B, Hq, Hkv, Nq, Nk (and max_seqlen_k).
std::vector<KernelParam> getBackwardKernelParams(MLIRContext *ctx,
                                                 const BackwardConfig &cfg);
/// varlen-layout=thd: the contracts of q, k, v, do, out, dq, dk, dv ([1, H,
/// N, D] -> [N, H, D]) and of lse, delta ([1, Hq, Nq] -> [Hq, Nq]) of a
/// backward kernel's or row kernel's parameters; dq_accum's stay planes.
void tokenMajorGradParams(std::vector<KernelParam> &params);

/// Creates, at the builder's insertion point (inside a module), the
/// gpu.module and the kernel of `cfg` with `params`' signature and
/// `threads` threads, and moves the insertion point into its body.
gpu::GPUFuncOp createBackwardKernel(OpBuilder &b, Location loc,
                                    const BackwardConfig &cfg,
                                    ArrayRef<KernelParam> params,
                                    int64_t threads);

/// The gpu.func's arguments (bare-pointer memrefs), sizes as index values.
struct BackwardArgs {
  Value q, k, v, gradOut, lse, delta, dqAccum, dk, dv;
  Value dqSemaphore;                 ///< deterministic only
  SmallVector<Value> modifierParams; ///< the captured tensors
  Value cuSeqlensQ, cuSeqlensK;      ///< varlen only
  /// varlen: B counts sequences, Nq and Nk are the packed lengths.
  ProblemSizes sizes;
};
BackwardArgs readBackwardArgs(KernelBuilder &kb, const BackwardConfig &cfg,
                              gpu::GPUFuncOp kernel);

/// The CTA's key block: grid (key block, K/V head, batch).
struct BackwardCTA {
  Value batch, kvHead, groupSize; ///< groupSize = Hq / Hkv
  Value kv0;      ///< first key of the CTA (within its sequence)
  Value kRowBase; ///< (batch * Hkv + kvHead) * Nk (+ the sequence's first key)
  Value diag;     ///< Nk - Nq: the bottom-right diagonal
  /// The lengths the CTA's masks and ranges see: Nq and Nk, or with varlen
  /// its sequence's (then `batch` is the sequence).
  Value queryLength, keyLength;
  /// varlen: the sequence's first query row and key in the packed planes
  /// (null without varlen).
  Value qRow0, kvRow0;
  /// The plane of query head `head` (batch * Hq + head; varlen: head) and
  /// of the CTA's K/V head (batch * Hkv + kvHead; varlen: kvHead).
  Value queryPlane(KernelBuilder &kb, const ProblemSizes &sizes,
                   Value head) const;
  Value keyPlane(KernelBuilder &kb, const ProblemSizes &sizes) const;
  /// `row` of the sequence as a row of the packed planes (+ qRow0 or
  /// kvRow0 with varlen; as it is otherwise).
  Value packedQueryRow(KernelBuilder &kb, Value row) const;
  Value packedKeyRow(KernelBuilder &kb, Value row) const;
  /// Whether the CTA has keys to differentiate (kv0 < keyLength; the grid
  /// covers the longest sequence). Without varlen always (null).
  Value hasKeys(KernelBuilder &kb) const;
  /// `sizes` with the CTA's query and key lengths: what the modifier
  /// regions see (with varlen, its sequence's: positions and the clamps of
  /// captured-tensor reads count within the sequence).
  ProblemSizes sequenceSizes(const ProblemSizes &sizes) const {
    ProblemSizes s = sizes;
    s.queryLength = queryLength;
    s.keyLength = keyLength;
    return s;
  }
};
/// `opaque`: the block ids read through inline PTX, so what derives from
/// them is recomputed here rather than kept live from an earlier read.
BackwardCTA getBackwardCTA(KernelBuilder &kb, const BackwardConfig &cfg,
                           const BackwardArgs &args, bool opaque = false);

/// The query blocks [begin, begin + count) that see some key of the CTA:
/// query i sees key j iff -left <= j - (i + diag) <= right.
std::pair<Value, Value> queryBlockRange(KernelBuilder &kb,
                                        const BackwardConfig &cfg,
                                        const BackwardArgs &args,
                                        const BackwardCTA &cta);

/// queryBlockRange's [begin, begin + count) narrowed to the query blocks
/// where mask_mod may show one of the CTA's keys (from the first to the last
/// such block; a document-masked or window-like mask_mod then visits only
/// those), when interval arithmetic bounds mask_mod, it reads no head (one
/// range serves every head of the group) and dQ is not deterministic (its
/// turns count the CTAs queryBlockRange gives); else as it is.
std::pair<Value, Value> narrowQueryBlocks(KernelBuilder &kb,
                                          const BackwardConfig &cfg,
                                          const BackwardArgs &args,
                                          const BackwardCTA &cta,
                                          std::pair<Value, Value> range);

/// Whether every (key, query) pair of the CTA's keys and the query block at
/// `q0` is visible: inside Nk and inside the window's band for all rows.
Value blockFullyVisible(KernelBuilder &kb, const BackwardConfig &cfg,
                        const BackwardArgs &args, const BackwardCTA &cta,
                        Value q0);

/// The query block of a step.
struct BackwardStep {
  Value head;     ///< query head
  Value q0;       ///< first query row
  Value qRowBase; ///< (batch * Hq + head) * Nq
  Value stage;    ///< 0 or 1: the buffers holding its lse, delta (sm_80: and
                  ///< Q, dO; sm_90a: Q, dO in a ring of its own)
};

/// The steps of a CTA: for each query head of the group, each query block
/// of [qbBegin, qbBegin + numQBlocks); and the row statistics of a step,
/// staged in shared memory `stats` ([2 stages x (lse, delta) x block-q] f32)
/// by threads [0, 2 block-q).
struct BackwardSchedule {
  KernelBuilder &kb;
  const BackwardConfig &cfg;
  const BackwardArgs &args;
  const BackwardCTA &cta;
  Value tid, qbBegin, numQBlocks, steps;

  /// Step t (clamped into [0, steps)).
  BackwardStep at(Value t, Value stage) const;
  /// The step's first query row (Nq past the last step: its loads read
  /// nothing, every row zero-filled).
  Value firstRow(Value t, const BackwardStep &s) const;
  /// This thread's row statistic of step t: threads [0, block-q) lse (as
  /// log2; +inf on rows past Nq or that see no key, so their P is 0),
  /// [block-q, 2 block-q) delta (0 past Nq). Loaded a step ahead and stored
  /// at its end, so the load's latency hides under the step's math.
  Value loadRowStat(Value t) const;
  void storeRowStat(Value value, Value stage, Value stats) const;
  /// The stage's lse (which = 0) or delta (1) of the step's query columns
  /// 8 n + 2 quadLane and the next (vector<2xf32>): an m16n8 (or wgmma)
  /// accumulator's columns.
  Value statPair(Value stats, Value stage, int64_t which, Value quadLane,
                 int64_t n) const;
  /// statPair of the first `count` n-tiles of a step, loaded at once:
  /// issued before a wgmma wait, their latency hides under the products
  /// (loaded where they are used, the first use stalled the warps the wait
  /// had just released).
  SmallVector<Value> statPairs(Value stats, Value stage, int64_t which,
                               Value quadLane, int64_t count) const;
  /// The statPair of n-tile n (loaded where the tile needs it, or taken
  /// from statPairs).
  using StatPairAt = llvm::function_ref<Value(int64_t n)>;

  /// The score of n-tile n, row half r (key keys[r]), column c (query
  /// q0 + 8 n + 2 quadLane + c) of a thread's accumulator tile.
  using TileElement = llvm::function_ref<Value(int64_t n, int r, int64_t c)>;
  /// P^T of a step's tile of scores of query head `head` (gradProbability;
  /// the band's mask when `masked`, mask_mod always): row 0's values (by
  /// 2 n + c), row 1's, then with hasScoreDerivative the derivatives in the
  /// same order. The tile has `nTiles` n-tiles (0: block-q / 8), its
  /// columns start at query q0.
  SmallVector<Value> probabilityTile(StatPairAt lse2, Value quadLane,
                                     Value head, Value q0, ArrayRef<Value> keys,
                                     bool masked, TileElement score,
                                     int64_t nTiles = 0) const;
  /// dS^T of the tile (gradScore): row 0's, then row 1's; `p` is
  /// probabilityTile's result (of the same nTiles), `dp` dP^T's elements.
  SmallVector<Value> gradScoreTile(StatPairAt delta, ValueRange p,
                                   TileElement dp, int64_t nTiles = 0) const;
  /// dS_t = P (dP - delta) of the tile, gradScoreTile's without score_mod's
  /// and softcap's derivative (the gradient with respect to score_mod's t,
  /// what the capture gradients take), in its order. gradScoreTile's own
  /// values where that derivative is the constant 1 (gradScoreIsGradT).
  SmallVector<Value> gradModifiedScoreTile(StatPairAt delta, ValueRange p,
                                           TileElement dp,
                                           int64_t nTiles = 0) const;
  /// grad_captures: adds the tile's scores' capture-gradient terms (dS_t *
  /// coefficient, KernelScoreModifiers::captureGradTerms) into their
  /// gradient buffers: a term whose indices are the same all over the tile
  /// summed over the thread's scores and the warp's lanes first (one atomic
  /// add per warp), the others one atomic add per score (none where dS_t is
  /// 0: a hidden score's coefficient may be anything). `dsT`:
  /// gradModifiedScoreTile's; the positions as probabilityTile's; every lane
  /// of the warp calls it. Nothing without capture_grad_terms.
  void addCaptureGrads(ValueRange dsT, Value quadLane, Value head, Value q0,
                       ArrayRef<Value> keys, int64_t nTiles = 0) const;

  /// Deterministic dQ: the CTAs whose keys a query block sees (consecutive
  /// key blocks: queryBlockRange grows with the key block) add into its dq
  /// rows in key-block order (descendingTurns: from the last). Each (batch,
  /// query head, query block) has a counter in dq_semaphore (zero before the
  /// launch); a CTA waits until it equals its turn (gradQueryTurn), adds,
  /// then increments it. Every thread of the CTA calls both. No CTA waits
  /// for one launched after it (the grid's x runs the key blocks in turn
  /// order), so the waits end.
  void waitForGradQueryTurn(const BackwardStep &s) const;
  /// After this thread's adds: they are complete and visible (bulk
  /// reduce-adds with `bulkAdds`: waited for, then made visible to the
  /// generic proxy), then thread 0 passes the turn on.
  void passGradQueryTurn(const BackwardStep &s, bool bulkAdds) const;
  /// The two halves for one issuing thread, with no barrier: spin until the
  /// step's counter equals the CTA's turn; increment it (release: the
  /// thread's adds before it must be complete and fenced).
  void spinUntilGradQueryTurn(const BackwardStep &s) const;
  void incrementGradQueryTurn(const BackwardStep &s) const;

private:
  /// The global address (i64) of the step's counter in dq_semaphore.
  Value gradQuerySemaphore(const BackwardStep &s) const;
  /// The CTA's turn at query block `qb`: how many of the key blocks that see
  /// it add before the CTA's.
  Value gradQueryTurn(Value qb) const;
};

/// The band of key row `key` in the column frame of a thread: query column
/// colBase + o is visible iff lo <= o (and o <= hi with a left edge);
/// nothing is visible from a key at or past Nk.
struct KeyBand {
  Value lo, hi; ///< hi null without a left edge
};
KeyBand keyBand(KernelBuilder &kb, const BackwardConfig &cfg,
                const BackwardArgs &args, const BackwardCTA &cta, Value key,
                Value colBase);

/// P of one raw score s (Q K^T) of a row with lse2 = lse * log2(e):
/// exp2(score(scale s) log2(e) - lse2), 0 outside `band` (when given, at
/// column offset `o`). With softcap also 1 - tanh^2 (the derivative of the
/// softcap, which dS is multiplied by), else null.
std::pair<Value, Value> gradProbability(KernelBuilder &kb,
                                        const BackwardConfig &cfg, Value s,
                                        Value lse2, const KeyBand *band,
                                        int64_t o);
/// The same through the op's regions: `score` is the modifiers' view of the
/// score (applyWithDerivative); a key mask_mod hides gets P = 0.
std::pair<Value, Value>
gradProbability(KernelBuilder &kb,
                const KernelScoreModifiers::ScoreWithDerivative &score,
                Value lse2, const KeyBand *band, int64_t o);

/// dS of one score: p (dP - delta), times the softcap derivative `dfac`
/// when not null.
Value gradScore(KernelBuilder &kb, Value p, Value dp, Value delta,
                Value dfac);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_BACKWARD_H
