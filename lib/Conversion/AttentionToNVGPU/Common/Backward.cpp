//===- Backward.cpp - chip-independent pieces of the backward kernels -----===//
#include "fa/Conversion/AttentionToNVGPU/Common/Backward.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;

void mlir::fa::kernel::tokenMajorGradParams(std::vector<KernelParam> &params) {
  for (KernelParam &p : params) {
    if (!p.tensor || p.tensor->name == "dq_accum" ||
        StringRef(p.tensor->name).starts_with("cu_seqlens") ||
        isScoreModifierTensor(p.tensor->name))
      continue;
    SmallVector<SizeExpr, 4> &shape = p.tensor->shape;
    bool keys = p.tensor->name == "k" || p.tensor->name == "v" ||
                p.tensor->name == "dk" || p.tensor->name == "dv";
    std::string rows = keys ? "[Nk, Hkv" : "[Nq, Hq";
    std::string text = shape.size() == 4 ? rows + ", D]" : "[Hq, Nq]";
    shape = tokenMajorShape(shape);
    size_t at = p.meaning.find("[1, ");
    size_t end = at == std::string::npos ? at : p.meaning.find(']', at);
    if (end != std::string::npos)
      p.meaning.replace(at, end + 1 - at, text + " (token-major)");
  }
}

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
    params.push_back(
        KernelParam::pointer(name, type, dtype, shape, align, meaning));
  };
  // 16 bytes: cp.async; 4: scalar f32 loads and atomics, f16x2 stores.
  // With tensor maps (sm_90a) q, k, v, do and dq_accum are passed as
  // pointers to their CUtensorMaps (device memory, 64-byte aligned): the
  // inputs' as !llvm.ptr, which the kernel casts to TMA descriptors;
  // dq_accum's as a memref whose address the reduce-adds' inline PTX takes.
  auto asTensorMap = [&](StringRef tensorName) {
    if (!cfg.tensorMaps)
      return;
    if (tensorName != "dq_accum")
      params.back().type = LLVM::LLVMPointerType::get(ctx);
    params.back().name = (tensorName + "_map").str();
    params.back().kind = ParamKind::TensorMap;
    params.back().meaning = "pointer to the CUtensorMap of " +
                            tensorName.str() + ": " + params.back().meaning;
  };
  tensor("q", gTy, elt, qShape, 16, "query [B, Hq, Nq, D], contiguous, " + elt);
  asTensorMap("q");
  tensor("k", gTy, elt, kvShape, 16, "key [B, Hkv, Nk, D], contiguous, " + elt);
  asTensorMap("k");
  tensor("v", gTy, elt, kvShape, 16,
         "value [B, Hkv, Nk, D], contiguous, " + elt);
  asTensorMap("v");
  tensor("do", gTy, elt, qShape, 16,
         "gradient of the output [B, Hq, Nq, D], contiguous, " + elt);
  asTensorMap("do");
  tensor("lse", fTy, "f32", rowShape, 4,
         "the forward's log-sum-exp [B, Hq, Nq], f32 (ln; -inf on rows that "
         "see no key)");
  tensor("delta", fTy, "f32", rowShape, 4,
         "rowsum(do * out) over D [B, Hq, Nq], f32, computed before the "
         "launch");
  // 16: a tensor map's global address (sm_90a), a float4-aligned buffer.
  tensor("dq_accum", fTy, "f32", qShape, 16,
         cfg.tensorMaps
             ? "[B, Hq, Nq, D] f32, zero-filled before the launch; receives "
               "dq (scale applied) by TMA reduce-adds; dq = dq_accum in q's "
               "dtype"
             : "[B, Hq, Nq, D] f32, zero-filled before the launch; receives "
               "dq (scale applied) by atomic adds; dq = dq_accum in q's dtype");
  asTensorMap("dq_accum");
  tensor("dk", gTy, elt, kvShape, 4,
         "gradient of k [B, Hkv, Nk, D], contiguous, " + elt + ", written");
  tensor("dv", gTy, elt, kvShape, 4,
         "gradient of v [B, Hkv, Nk, D], contiguous, " + elt + ", written");
  if (cfg.deterministic)
    tensor("dq_semaphore",
           MemRefType::get({kGlobalExtent}, IntegerType::get(ctx, 32)), "i32",
           {S::B, S::Hq, SizeExpr::ceilDiv(S::Nq, cfg.blockQ)}, 4,
           "[B, Hq, ceil(Nq / block-q)] i32, zero-filled before the launch: "
           "how many key blocks have added into each query block's dq rows "
           "(the deterministic order)");
  appendLaunchSizeParams(params, IntegerType::get(ctx, 32));
  insertScoreModifierParams(params, cfg.modifiers);
  if (cfg.varlen) {
    insertVarlenParams(
        params, MemRefType::get({kGlobalExtent}, IntegerType::get(ctx, 32)),
        IntegerType::get(ctx, 32), /*tokenMajor=*/false, S::MaxSeqlenK);
    if (cfg.varlenTokenMajor)
      tokenMajorGradParams(params);
  }
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
                                                const BackwardConfig &cfg,
                                                gpu::GPUFuncOp kernel) {
  auto a = kernel.getArguments();
  BackwardArgs args{a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                    a[7], a[8], {},   {},   {},   {},   {}};
  size_t next = 9;
  if (cfg.deterministic)
    args.dqSemaphore = a[next++];
  // The mask operand's parameter (if any), then the captured tensors.
  size_t modifierParams = cfg.modifiers.numParams();
  args.modifierParams.assign(a.begin() + next,
                             a.begin() + next + modifierParams);
  next += modifierParams;
  if (cfg.varlen) {
    args.cuSeqlensQ = a[next++];
    args.cuSeqlensK = a[next++];
  }
  args.sizes = {kb.asIndex(a[next]), kb.asIndex(a[next + 1]),
                kb.asIndex(a[next + 2]), kb.asIndex(a[next + 3]),
                kb.asIndex(a[next + 4])};
  return args;
}

BackwardCTA mlir::fa::kernel::getBackwardCTA(KernelBuilder &kb,
                                             const BackwardConfig &cfg,
                                             const BackwardArgs &args,
                                             bool opaque) {
  const ProblemSizes &sz = args.sizes;
  BackwardCTA c;
  auto blockId = [&](gpu::Dimension d, StringRef reg) -> Value {
    if (opaque)
      return opaqueSpecialRegister(kb, reg);
    return gpu::BlockIdOp::create(kb.b, kb.loc, d);
  };
  Value kvBlock = blockId(gpu::Dimension::x, "%ctaid.x");
  // Deterministic with turns from the last key block down: the grid runs
  // the key blocks backwards, so no CTA waits for one launched after it.
  if (cfg.descendingTurns())
    kvBlock = kb.sub(
        kb.sub(opaque ? opaqueSpecialRegister(kb, "%nctaid.x")
                      : gpu::GridDimOp::create(kb.b, kb.loc, gpu::Dimension::x),
               kb.idx(1)),
        kvBlock);
  c.kvHead = blockId(gpu::Dimension::y, "%ctaid.y");
  c.batch = blockId(gpu::Dimension::z, "%ctaid.z");
  c.groupSize = arith::DivUIOp::create(kb.b, kb.loc, sz.queryHeads, sz.kvHeads);
  c.kv0 = kb.mul(kvBlock, kb.idx(cfg.blockKV));
  if (cfg.varlen) {
    std::tie(c.qRow0, c.queryLength) =
        kb.packedSequence(args.cuSeqlensQ, c.batch, sz.queryLength);
    std::tie(c.kvRow0, c.keyLength) =
        kb.packedSequence(args.cuSeqlensK, c.batch, sz.keyLength);
  } else {
    c.queryLength = sz.queryLength;
    c.keyLength = sz.keyLength;
  }
  c.kRowBase = c.packedKeyRow(kb, kb.mul(c.keyPlane(kb, sz), sz.keyLength));
  c.diag = kb.sub(c.keyLength, c.queryLength);
  return c;
}

Value BackwardCTA::queryPlane(KernelBuilder &kb, const ProblemSizes &sizes,
                              Value head) const {
  return qRow0 ? head : kb.add(kb.mul(batch, sizes.queryHeads), head);
}

Value BackwardCTA::keyPlane(KernelBuilder &kb,
                            const ProblemSizes &sizes) const {
  return kvRow0 ? kvHead : kb.add(kb.mul(batch, sizes.kvHeads), kvHead);
}

Value BackwardCTA::packedQueryRow(KernelBuilder &kb, Value row) const {
  return qRow0 ? kb.add(row, qRow0) : row;
}

Value BackwardCTA::packedKeyRow(KernelBuilder &kb, Value row) const {
  return kvRow0 ? kb.add(row, kvRow0) : row;
}

Value BackwardCTA::hasKeys(KernelBuilder &kb) const {
  return kvRow0 ? kb.cmp(arith::CmpIPredicate::slt, kv0, keyLength) : Value();
}

/// The query rows [lo, hi) that see some key of the key block at `kv0`
/// (hi may be below lo: none): query i sees key j iff -left <= j - (i +
/// diag) <= right.
static std::pair<Value, Value> queryRowsSeeing(KernelBuilder &kb,
                                               const BackwardConfig &cfg,
                                               const BackwardCTA &cta,
                                               Value kv0) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value nq = cta.queryLength, diag = cta.diag;
  Value lastKey =
      kb.sub(arith::MinSIOp::create(b, loc, kb.add(kv0, kb.idx(cfg.blockKV)),
                                    cta.keyLength),
             kb.idx(1));
  Value lo = kb.idx(0), hi = nq; // [lo, hi) of query rows
  if (cfg.windowRight >= 0)
    lo = arith::MaxSIOp::create(
        b, loc, lo, kb.sub(kb.sub(kv0, diag), kb.idx(cfg.windowRight)));
  if (cfg.windowLeft >= 0)
    hi = arith::MinSIOp::create(
        b, loc, hi,
        kb.add(kb.sub(lastKey, diag), kb.idx(cfg.windowLeft + 1)));
  return {lo, hi};
}

/// One past the last query block holding a row of [lo, hi).
static Value queryBlockEnd(KernelBuilder &kb, const BackwardConfig &cfg,
                           Value lo, Value hi) {
  return kb.div(kb.add(arith::MaxSIOp::create(kb.b, kb.loc, hi, lo),
                       kb.idx(cfg.blockQ - 1)),
                cfg.blockQ);
}

std::pair<Value, Value> mlir::fa::kernel::queryBlockRange(
    KernelBuilder &kb, const BackwardConfig &cfg, const BackwardArgs &args,
    const BackwardCTA &cta) {
  auto [lo, hi] = queryRowsSeeing(kb, cfg, cta, cta.kv0);
  Value begin = kb.div(
      arith::MinSIOp::create(kb.b, kb.loc, lo, cta.queryLength), cfg.blockQ);
  Value end = queryBlockEnd(kb, cfg, lo, hi);
  return {begin, kb.sub(end, begin)};
}

std::pair<Value, Value> mlir::fa::kernel::narrowQueryBlocks(
    KernelBuilder &kb, const BackwardConfig &cfg, const BackwardArgs &args,
    const BackwardCTA &cta, std::pair<Value, Value> range) {
  auto [begin, count] = range;
  const ScoreModifierSpec &spec = cfg.modifiers;
  if (!spec.maskMod ||
      spec.maskModBound == ScoreModifierSpec::MaskModBound::None ||
      !spec.maskMod->front().getArgument(1).use_empty() || cfg.deterministic)
    return {begin, count};
  // mask_mod alone: a mask operand is read per score (the CTA's head here is
  // the K/V head, not a query head of the mask's plane), its parameter
  // dropped with it.
  ScoreModifierSpec maskModOnly = spec;
  maskModOnly.mask.reset();
  maskModOnly.captureGrads.clear();
  maskModOnly.captureGradTerms.clear();
  KernelScoreModifiers mods(kb, maskModOnly,
                            ArrayRef<Value>(args.modifierParams)
                                .slice(spec.mask ? 1 : 0, spec.captures.size()),
                            cta.sequenceSizes(args.sizes), cta.batch,
                            cta.kvHead);
  Value lastKey = kb.sub(
      arith::MinSIOp::create(kb.b, kb.loc, kb.add(cta.kv0, kb.idx(cfg.blockKV)),
                             cta.keyLength),
      kb.idx(1));
  auto [first, end] = mods.narrowQueryBlockRange(
      begin, kb.add(begin, count), cta.kv0, lastKey, cfg.blockQ);
  return {first, kb.sub(end, first)};
}

Value mlir::fa::kernel::blockFullyVisible(KernelBuilder &kb,
                                          const BackwardConfig &cfg,
                                          const BackwardArgs &args,
                                          const BackwardCTA &cta, Value q0) {
  Value full = kb.cmp(arith::CmpIPredicate::sle,
                      kb.add(cta.kv0, kb.idx(cfg.blockKV)), cta.keyLength);
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
  // In 32 bits (a step count fits): a 64-bit division is a long instruction
  // sequence, and the kernels divide once or twice per step.
  auto index = [&](Value v) {
    return arith::IndexCastUIOp::create(kb.b, kb.loc, kb.b.getIndexType(), v);
  };
  Value tc32 = kb.toI32(tc), blocks32 = kb.toI32(blocks);
  BackwardStep s;
  s.head = kb.add(kb.mul(cta.kvHead, cta.groupSize),
                  index(arith::DivUIOp::create(kb.b, kb.loc, tc32, blocks32)));
  s.q0 = kb.mul(kb.add(qbBegin, index(arith::RemUIOp::create(kb.b, kb.loc, tc32,
                                                             blocks32))),
                kb.idx(cfg.blockQ));
  s.qRowBase =
      cta.packedQueryRow(kb, kb.mul(cta.queryPlane(kb, args.sizes, s.head),
                                    args.sizes.queryLength));
  s.stage = stage;
  return s;
}

Value BackwardSchedule::firstRow(Value t, const BackwardStep &s) const {
  Value valid = kb.cmp(arith::CmpIPredicate::slt, t, steps);
  return arith::SelectOp::create(kb.b, kb.loc, valid, s.q0, cta.queryLength);
}

Value BackwardSchedule::loadRowStat(Value t) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  BackwardStep s = at(t, kb.idx(0));
  Value nq = cta.queryLength;
  Value isLse = kb.cmp(arith::CmpIPredicate::ult, tid, kb.idx(cfg.blockQ));
  Value qrow = kb.add(firstRow(t, s), kb.rem(tid, cfg.blockQ));
  Value inRows = kb.cmp(arith::CmpIPredicate::slt, qrow, nq);
  Value at = kb.add(s.qRowBase,
                    arith::SelectOp::create(b, loc, inRows, qrow, kb.idx(0)));
  // varlen: a sequence without query rows may start at Tq, one past the
  // plane (past the whole tensor at the last head): read element 0 instead.
  if (cfg.varlen)
    at = arith::SelectOp::create(b, loc, inRows, at, kb.idx(0));
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

SmallVector<Value> BackwardSchedule::statPairs(Value stats, Value stage,
                                               int64_t which, Value quadLane,
                                               int64_t count) const {
  SmallVector<Value> pairs;
  for (int64_t n = 0; n < std::min(count, cfg.blockQ / 8); ++n)
    pairs.push_back(statPair(stats, stage, which, quadLane, n));
  return pairs;
}

SmallVector<Value>
BackwardSchedule::probabilityTile(StatPairAt lse2At, Value quadLane, Value head,
                                  Value q0, ArrayRef<Value> keys, bool masked,
                                  TileElement score, int64_t nTiles) const {
  if (nTiles == 0)
    nTiles = cfg.blockQ / 8;
  Value colBase = kb.add(q0, kb.mul(quadLane, kb.idx(2)));
  KeyBand band[2];
  if (masked)
    for (int r = 0; r < 2; ++r)
      band[r] = keyBand(kb, cfg, args, cta, keys[r], colBase);
  // The regions see (batch, query head, query row, key) of each score.
  std::optional<KernelScoreModifiers> mods;
  if (cfg.modifiers.hasRegions() || cfg.modifiers.mask)
    mods.emplace(kb, cfg.modifiers, args.modifierParams,
                 cta.sequenceSizes(args.sizes), cta.batch, head);
  SmallVector<Value> out[2], dfac[2];
  for (int64_t n = 0; n < nTiles; ++n) {
    Value lse2 = lse2At(n);
    for (int r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value v = score(n, r, c);
        Value l =
            vector::ExtractOp::create(kb.b, kb.loc, lse2, ArrayRef<int64_t>{c});
        const KeyBand *bandOf = masked ? &band[r] : nullptr;
        auto [p, d] =
            mods ? gradProbability(
                       kb,
                       mods->applyWithDerivative(
                           v, cfg.scale,
                           mods->row(kb.add(colBase, kb.idx(8 * n + c))),
                           keys[r]),
                       l, bandOf, n * 8 + c)
                 : gradProbability(kb, cfg, v, l, bandOf, n * 8 + c);
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

SmallVector<Value> BackwardSchedule::gradScoreTile(StatPairAt deltaAt,
                                                   ValueRange p, TileElement dp,
                                                   int64_t nTiles) const {
  if (nTiles == 0)
    nTiles = cfg.blockQ / 8;
  int64_t perRow = 2 * nTiles;
  SmallVector<Value> ds[2];
  for (int64_t n = 0; n < nTiles; ++n) {
    Value delta = deltaAt(n);
    for (int r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value v = dp(n, r, c);
        Value d =
            vector::ExtractOp::create(kb.b, kb.loc, delta, ArrayRef<int64_t>{c});
        int64_t i = r * perRow + 2 * n + c;
        Value g = gradScore(
            kb, p[i], v, d,
            cfg.hasScoreDerivative() ? p[2 * perRow + i] : Value());
        // score_mod's derivative at a hidden score may be inf or NaN (it is
        // evaluated there all the same): dS is 0 wherever P is.
        if (cfg.modifiers.scoreModGrad)
          g = arith::SelectOp::create(
              kb.b, kb.loc,
              arith::CmpFOp::create(kb.b, kb.loc, arith::CmpFPredicate::OEQ,
                                    p[i], kb.f32(0.0)),
              kb.f32(0.0), g);
        ds[r].push_back(g);
      }
  }
  ds[0].append(ds[1]);
  return ds[0];
}

bool BackwardConfig::gradScoreIsGradT() const {
  if (softcap)
    return false;
  if (!modifiers.scoreModGrad)
    return true;
  Operation *yield = modifiers.scoreModGrad->front().getTerminator();
  return matchPattern(yield->getOperand(1), m_OneFloat());
}

SmallVector<Value>
BackwardSchedule::gradModifiedScoreTile(StatPairAt deltaAt, ValueRange p,
                                        TileElement dp, int64_t nTiles) const {
  if (nTiles == 0)
    nTiles = cfg.blockQ / 8;
  int64_t perRow = 2 * nTiles;
  SmallVector<Value> out(2 * perRow);
  for (int64_t n = 0; n < nTiles; ++n) {
    Value delta = deltaAt(n);
    for (int r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value d = vector::ExtractOp::create(kb.b, kb.loc, delta,
                                            ArrayRef<int64_t>{c});
        int64_t i = r * perRow + 2 * n + c;
        out[i] = gradScore(kb, p[i], dp(n, r, c), d, Value());
      }
  }
  return out;
}

void BackwardSchedule::addCaptureGrads(ValueRange dsT, Value quadLane,
                                       Value head, Value q0,
                                       ArrayRef<Value> keys,
                                       int64_t nTiles) const {
  if (!cfg.hasCaptureGrads())
    return;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  if (nTiles == 0)
    nTiles = cfg.blockQ / 8;
  int64_t perRow = 2 * nTiles;
  KernelScoreModifiers mods(kb, cfg.modifiers, args.modifierParams,
                            cta.sequenceSizes(args.sizes), cta.batch, head);
  Value colBase = kb.add(q0, kb.mul(quadLane, kb.idx(2)));
  // Tile-uniform terms: the thread's sum and the term (its buffer and
  // offset, the same at every score).
  SmallVector<Value> sums;
  SmallVector<KernelScoreModifiers::CaptureGradTerm> uniform;
  auto add = [&](Value buffer, Value offset, Value v) {
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, v, buffer,
                                ValueRange{offset});
  };
  for (int64_t n = 0; n < nTiles; ++n)
    for (int r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value g = dsT[r * perRow + 2 * n + c];
        Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, g,
                                           kb.f32(0.0));
        SmallVector<KernelScoreModifiers::CaptureGradTerm> terms =
            mods.captureGradTerms(mods.row(kb.add(colBase, kb.idx(8 * n + c))),
                                  keys[r]);
        size_t u = 0;
        for (const KernelScoreModifiers::CaptureGradTerm &t : terms) {
          Value v = arith::MulFOp::create(b, loc, g, t.coefficient);
          if (!t.tileUniform) {
            // Only visible scores: a hidden one's indices may be anything.
            kb.ifThen(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                            g, kb.f32(0.0)),
                      [&] { add(t.buffer, t.offset, v); });
            continue;
          }
          v = arith::SelectOp::create(b, loc, zero, kb.f32(0.0), v);
          if (u == sums.size()) {
            sums.push_back(v);
            uniform.push_back(t);
          } else {
            sums[u] = arith::AddFOp::create(b, loc, sums[u], v);
          }
          ++u;
        }
      }
  if (sums.empty())
    return;
  Value first = kb.cmp(arith::CmpIPredicate::eq, kb.rem(tid, 32), kb.idx(0));
  for (auto [sum, t] : llvm::zip_equal(sums, uniform)) {
    Value v = sum;
    for (int32_t off : {16, 8, 4, 2, 1})
      v = arith::AddFOp::create(
          b, loc, v,
          gpu::ShuffleOp::create(b, loc, v, off, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult());
    kb.ifThen(first, [&] { add(t.buffer, t.offset, v); });
  }
}

Value BackwardSchedule::gradQuerySemaphore(const BackwardStep &s) const {
  Value blocks = kb.div(
      kb.add(args.sizes.queryLength, kb.idx(cfg.blockQ - 1)), cfg.blockQ);
  Value plane = kb.add(kb.mul(cta.batch, args.sizes.queryHeads), s.head);
  Value at = kb.add(kb.mul(plane, blocks), kb.div(s.q0, cfg.blockQ));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      kb.b, kb.loc, args.dqSemaphore);
  return kb.toI64(kb.add(base, kb.mul(at, kb.idx(4))));
}

/// The first key block in [lo, hi) where `pred` (false, then true as the
/// key block grows) holds, or hi: a binary search.
static Value firstKeyBlockWhere(KernelBuilder &kb, Value lo, Value hi,
                                llvm::function_ref<Value(Value)> pred) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type idx = b.getIndexType();
  auto search = scf::WhileOp::create(
      b, loc, TypeRange{idx, idx}, ValueRange{lo, hi},
      [&](OpBuilder &, Location, ValueRange lh) {
        scf::ConditionOp::create(
            b, loc, kb.cmp(arith::CmpIPredicate::slt, lh[0], lh[1]), lh);
      },
      [&](OpBuilder &, Location, ValueRange lh) {
        Value mid = kb.div(kb.add(lh[0], lh[1]), 2);
        Value holds = pred(mid);
        scf::YieldOp::create(
            b, loc,
            ValueRange{arith::SelectOp::create(b, loc, holds, lh[0],
                                               kb.add(mid, kb.idx(1))),
                       arith::SelectOp::create(b, loc, holds, mid, lh[1])});
      });
  return search.getResult(0);
}

Value BackwardSchedule::gradQueryTurn(Value qb) const {
  // The key blocks that see query block qb are consecutive: queryBlockRange's
  // begin and end both grow with the key block.
  Value own = kb.div(cta.kv0, cfg.blockKV);
  auto rows = [&](Value keyBlock) {
    return queryRowsSeeing(kb, cfg, cta, kb.mul(keyBlock, kb.idx(cfg.blockKV)));
  };
  if (cfg.descendingTurns()) {
    // Turns from the last key block that sees qb down: the one past it is
    // the first whose range begins after qb.
    Value numBlocks = kb.div(
        kb.add(args.sizes.keyLength, kb.idx(cfg.blockKV - 1)), cfg.blockKV);
    Value past = firstKeyBlockWhere(kb, own, numBlocks, [&](Value k) {
      auto [lo, hi] = rows(k);
      Value begin = kb.div(arith::MinSIOp::create(kb.b, kb.loc, lo,
                                                  args.sizes.queryLength),
                           cfg.blockQ);
      return kb.cmp(arith::CmpIPredicate::sgt, begin, qb);
    });
    return kb.sub(kb.sub(past, kb.idx(1)), own);
  }
  // Turns from the first key block that sees qb up: every block sees it
  // without a left edge; else the first whose range ends past qb.
  if (cfg.windowLeft < 0)
    return own;
  Value first = firstKeyBlockWhere(kb, kb.idx(0), own, [&](Value k) {
    auto [lo, hi] = rows(k);
    return kb.cmp(arith::CmpIPredicate::sgt, queryBlockEnd(kb, cfg, lo, hi),
                  qb);
  });
  return kb.sub(own, first);
}

void BackwardSchedule::spinUntilGradQueryTurn(const BackwardStep &s) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value turn = kb.toI32(gradQueryTurn(kb.div(s.q0, cfg.blockQ)));
  Value addr = gradQuerySemaphore(s);
  // Spin on an acquire load: what the previous key block added is visible
  // once its increment is.
  scf::WhileOp::create(
      b, loc, TypeRange{}, ValueRange{},
      [&](OpBuilder &, Location, ValueRange) {
        Value count =
            emitInlinePTX(kb, b.getI32Type(), ValueRange{addr},
                          "{\n.reg .u64 g;\ncvta.to.global.u64 g, $1;\n"
                          "ld.acquire.gpu.global.u32 $0, [g];\n}",
                          "=r,l");
        scf::ConditionOp::create(b, loc,
                                 arith::CmpIOp::create(b, loc,
                                                       arith::CmpIPredicate::ne,
                                                       count, turn),
                                 ValueRange{});
      },
      [&](OpBuilder &, Location, ValueRange) { scf::YieldOp::create(b, loc); });
}

void BackwardSchedule::incrementGradQueryTurn(const BackwardStep &s) const {
  Value addr = gradQuerySemaphore(s);
  emitInlinePTXEffect(kb, ValueRange{addr},
                      "{\n.reg .u64 g;\ncvta.to.global.u64 g, $0;\n"
                      "red.release.gpu.global.add.u32 [g], 1;\n}",
                      "l");
}

void BackwardSchedule::waitForGradQueryTurn(const BackwardStep &s) const {
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0)),
            [&] { spinUntilGradQueryTurn(s); });
  gpu::BarrierOp::create(kb.b, kb.loc);
}

void BackwardSchedule::passGradQueryTurn(const BackwardStep &s,
                                         bool bulkAdds) const {
  // Each thread's adds complete and ordered before the CTA's barrier; then
  // one release increment publishes them all.
  emitInlinePTXEffect(kb, ValueRange{},
                      bulkAdds ? "cp.async.bulk.wait_group 0;\n"
                                 "fence.proxy.async.global;\n"
                                 "fence.acq_rel.gpu;"
                               : "fence.acq_rel.gpu;",
                      "");
  gpu::BarrierOp::create(kb.b, kb.loc);
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0)),
            [&] { incrementGradQueryTurn(s); });
}

KeyBand mlir::fa::kernel::keyBand(KernelBuilder &kb, const BackwardConfig &cfg,
                                  const BackwardArgs &args,
                                  const BackwardCTA &cta, Value key,
                                  Value colBase) {
  // -left <= key - (i + diag) <= right, key < Nk (rows past Nq need no
  // mask: their lse is staged as +inf, so their P is 0).
  KeyBand band;
  Value jd = kb.sub(key, cta.diag);
  Value inKeys = kb.cmp(arith::CmpIPredicate::slt, key, cta.keyLength);
  band.lo = cfg.windowRight >= 0
                ? kb.sub(kb.sub(jd, kb.idx(cfg.windowRight)), colBase)
                : kb.idx(-1);
  band.lo = arith::SelectOp::create(kb.b, kb.loc, inKeys, band.lo,
                                    kb.idx(cfg.blockQ));
  if (cfg.windowLeft >= 0)
    band.hi = kb.sub(kb.add(jd, kb.idx(cfg.windowLeft)), colBase);
  return band;
}

/// Whether column offset `o` lies in `band`.
static Value insideBand(KernelBuilder &kb, const KeyBand &band, int64_t o) {
  Value in = kb.cmp(arith::CmpIPredicate::sle, band.lo, kb.idx(o));
  if (band.hi)
    in = arith::AndIOp::create(
        kb.b, kb.loc, in,
        kb.cmp(arith::CmpIPredicate::sge, band.hi, kb.idx(o)));
  return in;
}

std::pair<Value, Value>
mlir::fa::kernel::gradProbability(KernelBuilder &kb, const BackwardConfig &cfg,
                                  Value s, Value lse2, const KeyBand *band,
                                  int64_t o) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  double log2e = M_LOG2E;
  // The exponent as one fma, x c - lse2 (lse2 = +inf: -inf, P = 0).
  Value negLse2 = arith::NegFOp::create(b, loc, lse2);
  Value x, dfac;
  if (cfg.softcap) {
    // s' = c tanh(scale s / c); ds'/d(scale s) = 1 - tanh^2.
    Value t = kb.tanhApprox(
        arith::MulFOp::create(b, loc, s, kb.f32(cfg.scale / *cfg.softcap)));
    x = math::FmaOp::create(b, loc, t, kb.f32(*cfg.softcap * log2e), negLse2);
    dfac = arith::SubFOp::create(b, loc, kb.f32(1.0),
                                 arith::MulFOp::create(b, loc, t, t));
  } else {
    x = math::FmaOp::create(b, loc, s, kb.f32(cfg.scale * log2e), negLse2);
  }
  if (band) {
    Value in = insideBand(kb, *band, o);
    x = arith::SelectOp::create(
        b, loc, in, x, kb.f32(-std::numeric_limits<double>::infinity()));
  }
  return {kb.exp2(x), dfac};
}

std::pair<Value, Value> mlir::fa::kernel::gradProbability(
    KernelBuilder &kb, const KernelScoreModifiers::ScoreWithDerivative &score,
    Value lse2, const KeyBand *band, int64_t o) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value x = math::FmaOp::create(b, loc, score.score, kb.f32(M_LOG2E),
                                arith::NegFOp::create(b, loc, lse2));
  Value in = score.keep;
  if (band) {
    Value inBand = insideBand(kb, *band, o);
    in = in ? arith::AndIOp::create(b, loc, in, inBand).getResult() : inBand;
  }
  if (in)
    x = arith::SelectOp::create(
        b, loc, in, x, kb.f32(-std::numeric_limits<double>::infinity()));
  return {kb.exp2(x), score.derivative};
}

Value mlir::fa::kernel::gradScore(KernelBuilder &kb, Value p, Value dp,
                                  Value delta, Value dfac) {
  Value g = arith::MulFOp::create(kb.b, kb.loc, p,
                                  arith::SubFOp::create(kb.b, kb.loc, dp, delta));
  if (dfac)
    g = arith::MulFOp::create(kb.b, kb.loc, g, dfac);
  return g;
}
