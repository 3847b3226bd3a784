//===- OnlineSoftmax.cpp - fragment-level online softmax ------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/OnlineSoftmax.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;

static Value scaleLog2e(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg) {
  return cfg.scaleLog2eValue ? cfg.scaleLog2eValue : kb.f32(cfg.scaleLog2e);
}

Value mlir::fa::kernel::scaleScore(KernelBuilder &kb,
                                   const OnlineSoftmaxConfig &cfg, Value s) {
  if (cfg.scaleInExponent)
    return s;
  return arith::MulFOp::create(kb.b, kb.loc, s, scaleLog2e(kb, cfg));
}

/// The thread's max of `scores`.
static Value threadRowMax(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
                          ArrayRef<Value> scores) {
  using MaxReduction = OnlineSoftmaxConfig::MaxReduction;
  if (cfg.maxReduction == MaxReduction::Tree) {
    SmallVector<Value> level(scores);
    while (level.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(kb.maxNum(level[i], level[i + 1]));
      if (level.size() % 2)
        next.push_back(level.back());
      level.swap(next);
    }
    return level[0];
  }
  bool select = cfg.maxReduction == MaxReduction::SelectChain;
  Value mx = scores[0];
  for (size_t i = 1; i < scores.size(); ++i)
    mx = select ? kb.maxSelect(mx, scores[i]) : kb.maxNum(mx, scores[i]);
  return mx;
}

/// The max of the row's 4 lanes.
static Value quadRowMax(KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
                        Value mx) {
  return kb.quadReduce(
      mx, cfg.maxReduction == OnlineSoftmaxConfig::MaxReduction::SelectChain
              ? QuadReduction::MaxSelect
              : QuadReduction::MaxNum);
}

Value mlir::fa::kernel::stepRowMax(KernelBuilder &kb,
                                   const OnlineSoftmaxConfig &cfg,
                                   ArrayRef<Value> scores, Value bias) {
  Value mx = threadRowMax(kb, cfg, scores);
  if (bias) {
    // The lanes' biases differ (each holds its own columns' part): added
    // before the max across them.
    mx = cfg.scaleInExponent
             ? LLVM::FMAOp::create(kb.b, kb.loc, mx, scaleLog2e(kb, cfg), bias)
                   .getResult()
             : arith::AddFOp::create(kb.b, kb.loc, mx, bias).getResult();
    return quadRowMax(kb, cfg, mx);
  }
  mx = quadRowMax(kb, cfg, mx);
  if (cfg.scaleInExponent)
    mx = arith::MulFOp::create(kb.b, kb.loc, mx, scaleLog2e(kb, cfg));
  return mx;
}

Value mlir::fa::kernel::exponentMax(KernelBuilder &kb, Value maxUsed,
                                    Value bias) {
  if (!bias)
    return maxUsed;
  return arith::SubFOp::create(kb.b, kb.loc, maxUsed, bias);
}

Value mlir::fa::kernel::runningMax(KernelBuilder &kb,
                                   const OnlineSoftmaxConfig &cfg, Value max,
                                   Value stepMax) {
  return cfg.maxReduction == OnlineSoftmaxConfig::MaxReduction::SelectChain
             ? kb.maxSelect(max, stepMax)
             : kb.maxNum(max, stepMax);
}

Value mlir::fa::kernel::exponentiateRow(KernelBuilder &kb,
                                        const OnlineSoftmaxConfig &cfg,
                                        MutableArrayRef<Value> scores,
                                        Value maxUsed) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value scaleC = scaleLog2e(kb, cfg);
  Value rowSum = kb.f32(0.0);
  Value negM = arith::NegFOp::create(b, loc, maxUsed);
  int64_t every = cfg.exp2PolyEvery;
  for (int64_t i = 0, e = scores.size(); i < e; ++i) {
    Value &v = scores[i];
    Value x = cfg.scaleInExponent
                  ? LLVM::FMAOp::create(b, loc, v, scaleC, negM).getResult()
                  : arith::SubFOp::create(b, loc, v, maxUsed).getResult();
    bool poly = every > 0 && i % every == every - 1;
    v = poly ? kb.exp2Poly(x) : kb.exp2(x);
    rowSum = arith::AddFOp::create(b, loc, rowSum, v);
  }
  return rowSum;
}

OnlineRowUpdate mlir::fa::kernel::updateOnlineSoftmaxRow(
    KernelBuilder &kb, const OnlineSoftmaxConfig &cfg,
    MutableArrayRef<Value> scores, Value max, Value sum, Value bias) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  OnlineRowUpdate u;
  u.newMax = runningMax(kb, cfg, max, stepRowMax(kb, cfg, scores, bias));
  // A row with no visible key so far keeps max = -inf: subtract 0 instead,
  // so that exp2 gives 0, never NaN.
  Value mUse = safeRowMax(b, loc, u.newMax);
  u.alpha = kb.exp2(arith::SubFOp::create(b, loc, max, mUse));
  Value rowSum = exponentiateRow(kb, cfg, scores, exponentMax(kb, mUse, bias));
  u.newSum = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, u.alpha, sum), rowSum);
  return u;
}

/// Whether a row asks for the rescale: stepMax > max + threshold.
static Value rescaleNeeded(KernelBuilder &kb, Value max, Value stepMax,
                           int64_t threshold) {
  // -inf + threshold stays -inf: a row's first visible scores always ask;
  // a row with nothing visible yet (both -inf) never does.
  Value bound = arith::AddFOp::create(kb.b, kb.loc, max,
                                      kb.f32(static_cast<double>(threshold)));
  return arith::CmpFOp::create(kb.b, kb.loc, arith::CmpFPredicate::OGT, stepMax,
                               bound);
}

/// `pred` of any lane of the warp (vote.sync.any over the full warp).
static Value warpAny(KernelBuilder &kb, Value pred) {
  return NVVM::VoteSyncOp::create(kb.b, kb.loc, kb.b.getI1Type(), kb.i32c(-1),
                                  pred, NVVM::VoteSyncKind::any);
}

Value mlir::fa::kernel::voteRescale(KernelBuilder &kb,
                                    const OnlineSoftmaxConfig &cfg,
                                    ArrayRef<SmallVector<Value>> rows,
                                    ArrayRef<Value> maxes, int64_t threshold,
                                    SmallVectorImpl<Value> &stepMax,
                                    ArrayRef<Value> biases) {
  Value ask;
  for (auto [k, row] : llvm::enumerate(rows)) {
    Value max = maxes[k];
    stepMax.push_back(
        stepRowMax(kb, cfg, row, biases.empty() ? Value() : biases[k]));
    Value asks = rescaleNeeded(kb, max, stepMax.back(), threshold);
    ask =
        ask ? arith::OrIOp::create(kb.b, kb.loc, ask, asks).getResult() : asks;
  }
  return warpAny(kb, ask);
}

OnlineRowUpdate mlir::fa::kernel::rescaleRow(KernelBuilder &kb,
                                             const OnlineSoftmaxConfig &cfg,
                                             Value max, Value stepMax,
                                             Value sum) {
  OnlineRowUpdate u;
  u.newMax = runningMax(kb, cfg, max, stepMax);
  u.alpha = kb.exp2(arith::SubFOp::create(kb.b, kb.loc, max,
                                          safeRowMax(kb.b, kb.loc, u.newMax)));
  u.newSum = arith::MulFOp::create(kb.b, kb.loc, u.alpha, sum);
  return u;
}
