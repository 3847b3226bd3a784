//===- Mainloop.h - the consumers' key/value loop of sm_90a -----*- C++ -*-===//
//
// A consumer warpgroup's loop over the tile's key blocks: S = Q K^T by wgmma
// (both operands in shared memory), the online softmax of S in registers
// (Common/OnlineSoftmax), O += P V by wgmma with P from registers (or
// through swizzled shared memory). Two schedules: one block per step with
// each GEMM waited at once, or FlashAttention-3's software pipeline (S_j
// issued with P_{j-1} V_{j-1}, the softmax of S_j under P V, the two
// consumer warpgroups taking turns issuing GEMMs: ping-pong).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_MAINLOOP_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_MAINLOOP_H

#include "fa/Conversion/AttentionToNVGPU/Common/OnlineSoftmax.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/LoadPipeline.h"

namespace mlir::fa::sm90 {

/// A consumer thread's per-tile values: its rows, descriptor bases and
/// shared-memory indices, the named barriers it uses.
struct ConsumerFrame {
  ThreadIds thread;
  Value qDescBase, pDescBase; ///< this warpgroup's Q / P tiles (addr >> 4)
  Value rowInWG[2];  ///< the thread's two accumulator rows in the warpgroup
  Value wgRow0;      ///< the warpgroup's first query row
  Value rowQ[2];     ///< the rows' query positions
  Value rowDiag[2];  ///< the rows' diagonal keys
  Value pFlat; ///< element index of this warpgroup's P tile
  Value oFlat; ///< element index of this warpgroup's staged O (16-bit)
  Value colPair;     ///< 2 * (lane % 4): the thread's first column
  Value warpgroupBarrierId; ///< named barrier of this warpgroup (i32)
  /// `qBuffer`: the tile's Q tile (persistent q-buffers; null: tile 0).
  static ConsumerFrame of(KernelBuilder &kb, const KernelConfig &cfg,
                          const ThreadIds &thread, const SharedMemory &smem,
                          const TileState &tile, const KVRange &range,
                          Value qBuffer = Value());
  /// bar.sync of this warpgroup's 128 threads.
  void syncWarpgroup(KernelBuilder &kb) const;
  /// Element index of (row, col) in a swizzled [64 x cols] tile at `base`,
  /// for a row of this thread (row % 8 = lane / 4).
  Value swizzledIndex(KernelBuilder &kb, Value base, Value row,
                      int64_t col) const;
};

/// The running state the loop carries and ends with.
struct MainloopResult {
  Value max[2], sum[2]; ///< per row (sum: this thread's part)
  Value acc;            ///< O, the wgmma accumulator struct
};

class ConsumerMainloop {
public:
  ConsumerMainloop(KernelBuilder &kb, const KernelConfig &cfg,
                   const TMALoadPipeline &loads, const SharedMemory &smem,
                   const ConsumerFrame &frame, const KVRange &range,
                   Value keyLength, const TileState &tile, Value isIssuer,
                   const kernel::KernelScoreModifiers &modifiers,
                   const FP8Descales *descales = nullptr);

  /// The loop over [range.begin, range.end) in the configured schedule.
  MainloopResult build();

private:
  struct SoftmaxStep {
    Value newMax[2], newSum[2], alpha[2];
    /// The factor of O: alpha, times vUnit(j-1) / vUnit(j) with per-block
    /// fp8 v descales.
    Value accAlpha[2];
    SmallVector<Value> p[2];
    /// With conditional rescaling: whether any row of the warp moved its
    /// max (i1, the same in every lane); alpha is 1 where it is false.
    Value rescaled;
  };
  MainloopResult buildSerial(ArrayRef<Value> init);
  MainloopResult buildPipelined(ArrayRef<Value> init);
  /// One pipelined step for block j > begin (the scf.for body).
  void buildPipelinedStep(scf::ForOp loop);

  Value issueS(Value stageDesc) const;
  Value issuePVShared(Value acc, Value stageDesc) const;
  Value issuePVRegisters(Value acc, ArrayRef<Value> p, Value stageDesc) const;
  SoftmaxStep softmax(Value s, Value j, Value max[2], Value sum[2]) const;
  /// `biasedRows`: the rows of a score_mod's split bias
  /// (KernelScoreModifiers::splitsBias), built once per step.
  SmallVector<Value>
  maskedScores(Value s, Value colBase, bool masked,
               const kernel::OnlineSoftmaxConfig &c,
               const kernel::KernelScoreModifiers::Row *biasedRows) const;
  void writeP(const SoftmaxStep &step) const;
  SmallVector<Value> packP(const SoftmaxStep &step) const;
  SmallVector<Value> packPFP8(const SoftmaxStep &step) const;
  /// b32 registers of P per block (the A operands of the P V wgmmas).
  int64_t numPRegisters() const;
  Value rescale(Value acc, const Value alpha[2]) const;
  /// The step's softmax with conditional rescaling (SoftmaxStep::rescaled).
  /// `bias`: the rows' split biases (log2 units), null without.
  void conditionalRescale(SoftmaxStep &o, Value max[2], Value sum[2],
                          const kernel::OnlineSoftmaxConfig &stepCfg,
                          const Value bias[2]) const;
  /// O *= the step's accAlpha, skipped where no row of the warp rescaled.
  Value rescaleStep(Value acc, const SoftmaxStep &o) const;
  /// kv_lens / pages: zeroes the rows of V block `block` (in ring `stage`)
  /// at or past the sequence's key count before the warpgroup's P V.
  void zeroValueRowsPastLength(Value stage, Value block) const;
  /// What a pipelined step hands to the next (loop-carried values).
  SmallVector<Value> carry(const SoftmaxStep &step, Value acc) const;
  void commitAndWait(int64_t pending) const;
  void turnSync() const;
  void turnPass(Value j) const;
  Value stageDesc(Value stage) const { return loads.stageDescBase(smem, stage); }

  KernelBuilder &kb;
  const KernelConfig &cfg;
  const TMALoadPipeline &loads;
  const SharedMemory &smem;
  const ConsumerFrame &frame;
  const KVRange &range;
  Value nk;
  /// Without warp specialization thread `isIssuer` refills the ring.
  const TileState &tile;
  Value isIssuer;
  kernel::OnlineSoftmaxConfig softmaxCfg;
  /// softcap, masks, score_mod / mask_mod: applied to every block's scores.
  const kernel::KernelScoreModifiers &modifiers;
  const FP8Descales *descales;
  Value negInf, scaleLog2e;
  Value turnThreads, myTurn, otherTurn;
  LLVM::LLVMStructType sType, oType;
  Value oInit, sUndef;
};

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_MAINLOOP_H
