//===- Backward.cpp - chip-independent pieces of the backward kernels -----===//
#include "fa/Conversion/AttentionToNVGPU/Common/Backward.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;

std::vector<KernelParam>
mlir::fa::kernel::getBackwardKernelParams(MLIRContext *ctx,
                                          const BackwardConfig &cfg) {
  using S = SizeSymbol;
  std::string elt = cfg.elementType.isF16() ? "f16" : "bf16";
  Type gTy = MemRefType::get({kGlobalExtent}, cfg.elementType);
  Type fTy = MemRefType::get({kGlobalExtent}, Float32Type::get(ctx));
  SmallVector<SizeExpr, 4> qShape = {S::B, S::Hq, S::Nq, S::D};
  SmallVector<SizeExpr, 4> kvShape = {S::B, S::Hkv, S::Nk, S::D};
  SmallVector<SizeExpr, 4> rowShape = {S::B, S::Hq, S::Nq};
  std::vector<KernelParam> params;
  auto tensor = [&](StringRef name, Type type, StringRef dtype,
                    ArrayRef<SizeExpr> shape, int64_t align,
                    const Twine &meaning) {
    params.push_back(KernelParam{
        name.str(), ParamKind::Pointer, type, meaning.str(),
        TensorContract{name.str(), dtype.str(),
                       SmallVector<SizeExpr, 4>(shape), align}});
  };
  // 16 bytes: cp.async; 4: scalar f32 loads and atomics, f16x2 stores.
  tensor("q", gTy, elt, qShape, 16, "query [B, Hq, Nq, D], contiguous, " + elt);
  tensor("k", gTy, elt, kvShape, 16, "key [B, Hkv, Nk, D], contiguous, " + elt);
  tensor("v", gTy, elt, kvShape, 16,
         "value [B, Hkv, Nk, D], contiguous, " + elt);
  tensor("do", gTy, elt, qShape, 16,
         "gradient of the output [B, Hq, Nq, D], contiguous, " + elt);
  tensor("lse", fTy, "f32", rowShape, 4,
         "the forward's log-sum-exp [B, Hq, Nq], f32 (ln; -inf on rows that "
         "see no key)");
  tensor("delta", fTy, "f32", rowShape, 4,
         "rowsum(do * out) over D [B, Hq, Nq], f32, computed before the "
         "launch");
  // 16: sm_90a's bulk reduce-adds start at rows of D f32.
  tensor("dq_accum", fTy, "f32", qShape, 16,
         "[B, Hq, Nq, D] f32, zero-filled before the launch; receives dq "
         "(scale applied) by atomic or bulk reduce-adds; dq = dq_accum in q's "
         "dtype");
  tensor("dk", gTy, elt, kvShape, 4,
         "gradient of k [B, Hkv, Nk, D], contiguous, " + elt + ", written");
  tensor("dv", gTy, elt, kvShape, 4,
         "gradient of v [B, Hkv, Nk, D], contiguous, " + elt + ", written");
  appendLaunchSizeParams(params, IntegerType::get(ctx, 32));
  return params;
}

gpu::GPUFuncOp mlir::fa::kernel::createBackwardKernel(
    OpBuilder &b, Location loc, const BackwardConfig &cfg,
    ArrayRef<KernelParam> params, int64_t threads) {
  auto gpuMod = gpu::GPUModuleOp::create(b, loc, cfg.moduleName);
  b.setInsertionPointToStart(&gpuMod.getBodyRegion().front());
  auto kfn = gpu::GPUFuncOp::create(
      b, loc, cfg.kernelName,
      b.getFunctionType(getKernelArgumentTypes(params), {}));
  kfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kfn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  b.setInsertionPointToStart(&kfn.getBody().front());
  return kfn;
}

BackwardArgs mlir::fa::kernel::readBackwardArgs(KernelBuilder &kb,
                                                gpu::GPUFuncOp kernel) {
  auto a = kernel.getArguments();
  BackwardArgs args{a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], {}};
  args.sizes = {kb.asIndex(a[9]), kb.asIndex(a[10]), kb.asIndex(a[11]),
                kb.asIndex(a[12]), kb.asIndex(a[13])};
  return args;
}

BackwardCTA mlir::fa::kernel::getBackwardCTA(KernelBuilder &kb,
                                             const BackwardConfig &cfg,
                                             const BackwardArgs &args) {
  const ProblemSizes &sz = args.sizes;
  BackwardCTA c;
  Value kvBlock = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  c.kvHead = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::y);
  c.batch = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::z);
  c.groupSize = arith::DivUIOp::create(kb.b, kb.loc, sz.queryHeads, sz.kvHeads);
  c.kv0 = kb.mul(kvBlock, kb.idx(cfg.blockKV));
  c.kRowBase =
      kb.mul(kb.add(kb.mul(c.batch, sz.kvHeads), c.kvHead), sz.keyLength);
  c.diag = kb.sub(sz.keyLength, sz.queryLength);
  return c;
}

std::pair<Value, Value> mlir::fa::kernel::queryBlockRange(
    KernelBuilder &kb, const BackwardConfig &cfg, const BackwardArgs &args,
    const BackwardCTA &cta) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value nq = args.sizes.queryLength;
  Value lastKey = kb.sub(arith::MinSIOp::create(
                             b, loc, kb.add(cta.kv0, kb.idx(cfg.blockKV)),
                             args.sizes.keyLength),
                         kb.idx(1));
  Value lo = kb.idx(0), hi = nq; // [lo, hi) of query rows
  if (cfg.windowRight >= 0)
    lo = arith::MaxSIOp::create(
        b, loc, lo, kb.sub(kb.sub(cta.kv0, cta.diag), kb.idx(cfg.windowRight)));
  if (cfg.windowLeft >= 0)
    hi = arith::MinSIOp::create(
        b, loc, hi,
        kb.add(kb.sub(lastKey, cta.diag), kb.idx(cfg.windowLeft + 1)));
  Value begin = kb.div(arith::MinSIOp::create(b, loc, lo, nq), cfg.blockQ);
  Value end = kb.div(kb.add(arith::MaxSIOp::create(b, loc, hi, lo),
                            kb.idx(cfg.blockQ - 1)),
                     cfg.blockQ);
  return {begin, kb.sub(end, begin)};
}

Value mlir::fa::kernel::blockFullyVisible(KernelBuilder &kb,
                                          const BackwardConfig &cfg,
                                          const BackwardArgs &args,
                                          const BackwardCTA &cta, Value q0) {
  Value full = kb.cmp(arith::CmpIPredicate::sle,
                      kb.add(cta.kv0, kb.idx(cfg.blockKV)),
                      args.sizes.keyLength);
  if (cfg.windowRight >= 0) {
    // max key - min query - diag <= right
    Value d = kb.sub(kb.sub(kb.add(cta.kv0, kb.idx(cfg.blockKV - 1)), q0),
                     cta.diag);
    full = arith::AndIOp::create(
        kb.b, kb.loc, full,
        kb.cmp(arith::CmpIPredicate::sle, d, kb.idx(cfg.windowRight)));
  }
  if (cfg.windowLeft >= 0) {
    // min key - max query - diag >= -left
    Value d = kb.sub(kb.sub(cta.kv0, kb.add(q0, kb.idx(cfg.blockQ - 1))),
                     cta.diag);
    full = arith::AndIOp::create(
        kb.b, kb.loc, full,
        kb.cmp(arith::CmpIPredicate::sge, d, kb.idx(-cfg.windowLeft)));
  }
  return full;
}

BackwardStep BackwardSchedule::at(Value t, Value stage) const {
  Value blocks = arith::MaxSIOp::create(kb.b, kb.loc, numQBlocks, kb.idx(1));
  Value last = arith::MaxSIOp::create(kb.b, kb.loc, kb.sub(steps, kb.idx(1)),
                                      kb.idx(0));
  Value tc = arith::MinSIOp::create(kb.b, kb.loc, t, last);
  BackwardStep s;
  s.head = kb.add(kb.mul(cta.kvHead, cta.groupSize),
                  arith::DivUIOp::create(kb.b, kb.loc, tc, blocks));
  s.q0 = kb.mul(kb.add(qbBegin, arith::RemUIOp::create(kb.b, kb.loc, tc, blocks)),
                kb.idx(cfg.blockQ));
  s.qRowBase = kb.mul(kb.add(kb.mul(cta.batch, args.sizes.queryHeads), s.head),
                      args.sizes.queryLength);
  s.stage = stage;
  return s;
}

Value BackwardSchedule::firstRow(Value t, const BackwardStep &s) const {
  Value valid = kb.cmp(arith::CmpIPredicate::slt, t, steps);
  return arith::SelectOp::create(kb.b, kb.loc, valid, s.q0,
                                 args.sizes.queryLength);
}

Value BackwardSchedule::loadRowStat(Value t) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  BackwardStep s = at(t, kb.idx(0));
  Value nq = args.sizes.queryLength;
  Value isLse = kb.cmp(arith::CmpIPredicate::ult, tid, kb.idx(cfg.blockQ));
  Value qrow = kb.add(firstRow(t, s), kb.rem(tid, cfg.blockQ));
  Value inRows = kb.cmp(arith::CmpIPredicate::slt, qrow, nq);
  Value at = kb.add(s.qRowBase,
                    arith::SelectOp::create(b, loc, inRows, qrow, kb.idx(0)));
  // Warp-uniform: block-q is a multiple of 32. Threads past 2 block-q
  // load delta too (and store nothing).
  auto load = scf::IfOp::create(b, loc, b.getF32Type(), isLse,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&load.getThenRegion().front());
    scf::YieldOp::create(
        b, loc,
        memref::LoadOp::create(b, loc, args.lse, ValueRange{at}).getResult());
    b.setInsertionPointToStart(&load.getElseRegion().front());
    scf::YieldOp::create(
        b, loc,
        memref::LoadOp::create(b, loc, args.delta, ValueRange{at}).getResult());
  }
  Value x = load.getResult(0);
  double inf = std::numeric_limits<double>::infinity();
  Value seesNoKey = arith::OrIOp::create(
      b, loc,
      arith::XOrIOp::create(
          b, loc, inRows,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true))),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                            kb.f32(-inf)));
  Value lse2 = arith::SelectOp::create(
      b, loc, seesNoKey, kb.f32(inf),
      arith::MulFOp::create(b, loc, x, kb.f32(M_LOG2E)));
  Value delta = arith::SelectOp::create(b, loc, inRows, x, kb.f32(0.0));
  return arith::SelectOp::create(b, loc, isLse, lse2, delta);
}

void BackwardSchedule::storeRowStat(Value value, Value stage,
                                    Value stats) const {
  // stats[(2 stage + which) block-q + r], which = tid / block-q.
  Value slot = kb.add(
      kb.mul(kb.add(kb.mul(stage, kb.idx(2)), kb.div(tid, cfg.blockQ)),
             kb.idx(cfg.blockQ)),
      kb.rem(tid, cfg.blockQ));
  kb.ifThen(kb.cmp(arith::CmpIPredicate::ult, tid, kb.idx(2 * cfg.blockQ)),
            [&] {
              memref::StoreOp::create(kb.b, kb.loc, value, stats,
                                      ValueRange{slot});
            });
}

Value BackwardSchedule::statPair(Value stats, Value stage, int64_t which,
                                 Value quadLane, int64_t n) const {
  // stats[(2 stage + which) * block-q + 8 n + 2 quad]
  Value off = kb.add(
      kb.mul(kb.add(kb.mul(stage, kb.idx(2)), kb.idx(which)),
             kb.idx(cfg.blockQ)),
      kb.add(kb.mul(quadLane, kb.idx(2)), kb.idx(8 * n)));
  return vector::LoadOp::create(kb.b, kb.loc,
                                VectorType::get({2}, kb.b.getF32Type()),
                                stats, ValueRange{off});
}

SmallVector<Value> BackwardSchedule::probabilityTile(
    Value stats, Value stage, Value quadLane, Value q0, ArrayRef<Value> keys,
    bool masked, TileElement score) const {
  Value colBase = kb.add(q0, kb.mul(quadLane, kb.idx(2)));
  KeyBand band[2];
  if (masked)
    for (int r = 0; r < 2; ++r)
      band[r] = keyBand(kb, cfg, args, cta, keys[r], colBase);
  SmallVector<Value> out[2], dfac[2];
  for (int64_t n = 0; n < cfg.blockQ / 8; ++n) {
    Value lse2 = statPair(stats, stage, 0, quadLane, n);
    for (int r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value v = score(n, r, c);
        Value l =
            vector::ExtractOp::create(kb.b, kb.loc, lse2, ArrayRef<int64_t>{c});
        auto [p, d] = gradProbability(kb, cfg, v, l,
                                      masked ? &band[r] : nullptr, n * 8 + c);
        out[r].push_back(p);
        if (d)
          dfac[r].push_back(d);
      }
  }
  SmallVector<Value> flat(out[0]);
  flat.append(out[1]);
  flat.append(dfac[0]);
  flat.append(dfac[1]);
  return flat;
}

SmallVector<Value> BackwardSchedule::gradScoreTile(Value stats, Value stage,
                                                   Value quadLane, ValueRange p,
                                                   TileElement dp) const {
  int64_t perRow = cfg.blockQ / 4;
  SmallVector<Value> ds[2];
  for (int64_t n = 0; n < cfg.blockQ / 8; ++n) {
    Value delta = statPair(stats, stage, 1, quadLane, n);
    for (int r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value v = dp(n, r, c);
        Value d =
            vector::ExtractOp::create(kb.b, kb.loc, delta, ArrayRef<int64_t>{c});
        int64_t i = r * perRow + 2 * n + c;
        ds[r].push_back(gradScore(kb, p[i], v, d,
                                  cfg.softcap ? p[2 * perRow + i] : Value()));
      }
  }
  ds[0].append(ds[1]);
  return ds[0];
}

KeyBand mlir::fa::kernel::keyBand(KernelBuilder &kb, const BackwardConfig &cfg,
                                  const BackwardArgs &args,
                                  const BackwardCTA &cta, Value key,
                                  Value colBase) {
  // -left <= key - (i + diag) <= right, key < Nk (rows past Nq need no
  // mask: their lse is staged as +inf, so their P is 0).
  KeyBand band;
  Value jd = kb.sub(key, cta.diag);
  Value inKeys = kb.cmp(arith::CmpIPredicate::slt, key, args.sizes.keyLength);
  band.lo = cfg.windowRight >= 0
                ? kb.sub(kb.sub(jd, kb.idx(cfg.windowRight)), colBase)
                : kb.idx(-1);
  band.lo = arith::SelectOp::create(kb.b, kb.loc, inKeys, band.lo,
                                    kb.idx(cfg.blockQ));
  if (cfg.windowLeft >= 0)
    band.hi = kb.sub(kb.add(jd, kb.idx(cfg.windowLeft)), colBase);
  return band;
}

std::pair<Value, Value>
mlir::fa::kernel::gradProbability(KernelBuilder &kb, const BackwardConfig &cfg,
                                  Value s, Value lse2, const KeyBand *band,
                                  int64_t o) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  double log2e = M_LOG2E;
  Value x, dfac;
  if (cfg.softcap) {
    // s' = c tanh(scale s / c); ds'/d(scale s) = 1 - tanh^2.
    Value t = kb.tanhApprox(
        arith::MulFOp::create(b, loc, s, kb.f32(cfg.scale / *cfg.softcap)));
    x = arith::MulFOp::create(b, loc, t, kb.f32(*cfg.softcap * log2e));
    dfac = arith::SubFOp::create(b, loc, kb.f32(1.0),
                                 arith::MulFOp::create(b, loc, t, t));
  } else {
    x = arith::MulFOp::create(b, loc, s, kb.f32(cfg.scale * log2e));
  }
  x = arith::SubFOp::create(b, loc, x, lse2);
  if (band) {
    Value in = kb.cmp(arith::CmpIPredicate::sle, band->lo, kb.idx(o));
    if (band->hi)
      in = arith::AndIOp::create(
          b, loc, in, kb.cmp(arith::CmpIPredicate::sge, band->hi, kb.idx(o)));
    x = arith::SelectOp::create(
        b, loc, in, x, kb.f32(-std::numeric_limits<double>::infinity()));
  }
  return {kb.exp2(x), dfac};
}

Value mlir::fa::kernel::gradScore(KernelBuilder &kb, Value p, Value dp,
                                  Value delta, Value dfac) {
  Value g = arith::MulFOp::create(kb.b, kb.loc, p,
                                  arith::SubFOp::create(kb.b, kb.loc, dp, delta));
  if (dfac)
    g = arith::MulFOp::create(kb.b, kb.loc, g, dfac);
  return g;
}
