//===- ScoreModifiers.cpp - softcap, masks and modifier regions -----------===//
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVectorExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;

//===----------------------------------------------------------------------===//
// What a kernel can evaluate
//===----------------------------------------------------------------------===//

/// Element types a captured tensor may have (read with one global load).
static bool isCapturableElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isInteger(1) ||
         t.isInteger(8) || t.isInteger(16) || t.isInteger(32) ||
         t.isInteger(64);
}

/// The manifest's dtype name of a captured / mask element type.
static std::string manifestDtype(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(1))
    return "bool";
  return "i" + std::to_string(t.getIntOrFloatBitWidth());
}

/// Bytes per element in device memory (i1: one byte, as torch.bool).
static int64_t storageBytes(Type t) {
  return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8;
}

/// The memref element type a captured / mask tensor is read as.
static Type storageType(Type t) {
  return t.isInteger(1) ? IntegerType::get(t.getContext(), 8) : t;
}

bool ScoreModifierSpec::scoreModIsArithmetic() const {
  if (!scoreMod || scoreMod->empty() ||
      scoreMod->front().getNumArguments() == 0)
    return false;
  llvm::SmallPtrSet<Value, 16> fromScore{scoreMod->front().getArgument(0)};
  WalkResult w = scoreMod->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (llvm::none_of(op->getOperands(),
                      [&](Value v) { return fromScore.contains(v); }))
      return WalkResult::advance();
    if (isa_and_nonnull<math::MathDialect>(op->getDialect()))
      return WalkResult::interrupt();
    fromScore.insert(op->result_begin(), op->result_end());
    return WalkResult::advance();
  });
  return !w.wasInterrupted();
}

bool mlir::fa::dependsOnRegionArgument(Value v, BlockArgument arg) {
  Region *region = arg.getParentRegion();
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (x == arg)
      return true;
    if (!seen.insert(x).second)
      continue;
    if (Operation *def = x.getDefiningOp();
        def && region->isAncestor(def->getParentRegion()))
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// The operands of score_mod's last op that make up the term added to the
/// score (scoreModAddsBias), empty when the yield is not s + term.
static SmallVector<Value> addedTerms(Region &scoreMod) {
  if (!scoreMod.hasOneBlock() || scoreMod.front().getNumArguments() == 0)
    return {};
  Block &body = scoreMod.front();
  BlockArgument s = body.getArgument(0);
  Operation *term = body.getTerminator();
  if (term->getNumOperands() != 1)
    return {};
  Operation *def = term->getOperand(0).getDefiningOp();
  if (!def || def->getBlock() != &body)
    return {};
  SmallVector<Value> terms;
  if (auto add = dyn_cast<arith::AddFOp>(def)) {
    if (add.getLhs() == s)
      terms.push_back(add.getRhs());
    else if (add.getRhs() == s)
      terms.push_back(add.getLhs());
  } else if (auto sub = dyn_cast<arith::SubFOp>(def);
             sub && sub.getLhs() == s) {
    terms.push_back(sub.getRhs());
  } else if (auto fma = dyn_cast<math::FmaOp>(def); fma && fma.getC() == s) {
    terms.append({fma.getA(), fma.getB()});
  }
  if (llvm::any_of(terms,
                   [&](Value t) { return dependsOnRegionArgument(t, s); }))
    return {};
  return terms;
}

bool ScoreModifierSpec::scoreModAddsBias() const {
  return scoreMod && !addedTerms(*scoreMod).empty();
}

LogicalResult mlir::fa::checkModifierRegionForKernel(
    Operation *anchor, Region &region, Operation *func,
    SmallVectorImpl<ScoreModifierSpec::Capture> &captures) {
  auto fail = [&](const Twine &msg) {
    return anchor->emitOpError("convert-fa-to-nvgpu: ") << msg;
  };
  if (!region.hasOneBlock())
    return fail("a modifier region must have one block for the kernel");
  Region *funcBody = &cast<FunctionOpInterface>(func).getFunctionBody();
  for (Operation &op : region.front()) {
    if (op.getNumRegions())
      return fail("the kernel cannot evaluate '")
             << op.getName() << "' (an op with regions) in a modifier region";
    Dialect *dialect = op.getDialect();
    StringRef ns = dialect ? dialect->getNamespace() : "";
    bool tensorRead = isa<tensor::ExtractOp, tensor::DimOp>(op);
    if (ns != "arith" && ns != "math" && !tensorRead && ns != "fa")
      return fail("the kernel cannot evaluate '")
             << op.getName()
             << "' in a modifier region (arith, math, tensor.extract and "
                "tensor.dim of captured tensors only)";
    for (Value operand : op.getOperands()) {
      if (operand.getParentRegion() == &region ||
          region.isAncestor(operand.getParentRegion()))
        continue;
      // From above: a constant, or an argument of the function.
      if (matchPattern(operand, m_Constant()))
        continue;
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getParentRegion() != funcBody)
        return fail("a modifier region may use only constants and function "
                    "arguments from above on the GPU (operand ")
               << operand.getType() << " of '" << op.getName() << "')";
      auto ty = dyn_cast<RankedTensorType>(arg.getType());
      if (!ty || !tensorRead)
        return fail("a modifier region may read function arguments only as "
                    "tensors through tensor.extract / tensor.dim on the GPU");
      if (!ty.hasStaticShape())
        return fail("a tensor a modifier region reads needs a static shape "
                    "on the GPU, got ")
               << ty;
      if (!isCapturableElementType(ty.getElementType()))
        return fail("a tensor a modifier region reads needs f16, bf16, f32 "
                    "or integer elements on the GPU, got ")
               << ty;
      if (!llvm::any_of(captures, [&](const ScoreModifierSpec::Capture &c) {
            return c.arg == arg.getArgNumber();
          }))
        captures.push_back({arg.getArgNumber(), ty});
    }
  }
  return success();
}

void mlir::fa::insertScoreModifierParams(std::vector<KernelParam> &params,
                                         const ScoreModifierSpec &spec) {
  using S = SizeSymbol;
  std::vector<KernelParam> extra;
  if (spec.mask) {
    Type elt = spec.mask->elementType;
    KernelParam p;
    p.name = "mask";
    p.kind = ParamKind::Pointer;
    p.type = MemRefType::get({kModifierGlobalExtent}, storageType(elt));
    p.meaning = elt.isInteger(1)
                    ? "boolean mask [Bm, Hm, Nm, Nk] (true keeps a key; Bm = "
                      "B or 1, Hm = Hq or 1, Nm = Nq or 1), contiguous, one "
                      "byte each"
                    : "additive mask [Bm, Hm, Nm, Nk] (Bm = B or 1, Hm = Hq "
                      "or 1, Nm = Nq or 1), contiguous, " +
                          manifestDtype(elt);
    SmallVector<SizeExpr, 4> shape = {
        spec.mask->batchBroadcast ? SizeExpr(1) : SizeExpr(S::B),
        spec.mask->headBroadcast ? SizeExpr(1) : SizeExpr(S::Hq),
        spec.mask->rowBroadcast ? SizeExpr(1) : SizeExpr(S::Nq), S::Nk};
    p.tensor = TensorContract{"mask", manifestDtype(elt), shape,
                              storageBytes(elt)};
    extra.push_back(std::move(p));
  }
  for (const ScoreModifierSpec::Capture &c : spec.captures) {
    Type elt = c.type.getElementType();
    KernelParam p;
    p.name = "arg" + std::to_string(c.arg);
    p.kind = ParamKind::Pointer;
    p.type = MemRefType::get({kModifierGlobalExtent}, storageType(elt));
    p.meaning = "argument " + std::to_string(c.arg) +
                " of the function, read by a modifier region, contiguous";
    SmallVector<SizeExpr, 4> shape;
    for (int64_t n : c.type.getShape())
      shape.push_back(n);
    p.tensor = TensorContract{p.name, manifestDtype(elt), shape,
                              storageBytes(elt)};
    extra.push_back(std::move(p));
  }
  for (const ScoreModifierSpec::Capture &c : spec.captureGrads) {
    Type f32 = Float32Type::get(c.type.getContext());
    KernelParam p;
    p.name = "grad_arg" + std::to_string(c.arg);
    p.kind = ParamKind::Pointer;
    p.type = MemRefType::get({kModifierGlobalExtent}, f32);
    p.meaning = "gradient of argument " + std::to_string(c.arg) +
                " (f32, its shape), zero-filled before the launch; receives "
                "score_mod's terms by atomic adds";
    SmallVector<SizeExpr, 4> shape;
    for (int64_t n : c.type.getShape())
      shape.push_back(n);
    p.tensor = TensorContract{p.name, "f32", shape, 4};
    extra.push_back(std::move(p));
  }
  auto firstSize = llvm::find_if(
      params, [](const KernelParam &p) { return p.kind == ParamKind::I32; });
  params.insert(firstSize, extra.begin(), extra.end());
}

//===----------------------------------------------------------------------===//
// KernelScoreModifiers
//===----------------------------------------------------------------------===//

KernelScoreModifiers::KernelScoreModifiers(
    KernelBuilder &kb, const ScoreModifierSpec &spec, ValueRange params,
    const ProblemSizes &sizes, Value batch, Value head, bool splitBias)
    : kb(kb), spec(spec), splitBias(splitBias && spec.addsSplittableBias()),
      batch(batch), head(head), nq(sizes.queryLength), nk(sizes.keyLength) {
  if (this->splitBias) {
    BlockArgument j = spec.scoreMod->front().getArgument(4);
    biasReadsColumn = llvm::any_of(addedTerms(*spec.scoreMod), [&](Value t) {
      return dependsOnRegionArgument(t, j);
    });
  }
  // The key position's last argument: 4 in score_mod and score_mod_grad, 3
  // in mask_mod.
  for (auto [region, jArg] :
       {std::pair(spec.scoreMod, 4u), std::pair(spec.scoreModGrad, 4u),
        std::pair(spec.maskMod, 3u)}) {
    if (!region || region->empty() || region->front().getNumArguments() <= jArg)
      continue;
    BlockArgument j = region->front().getArgument(jArg);
    region->walk([&](tensor::ExtractOp extract) {
      if (llvm::any_of(extract.getIndices(), [&](Value index) {
            return dependsOnRegionArgument(index, j);
          }))
        capturedAtColumn = true;
    });
  }
  if (spec.empty())
    return;
  unsigned next = 0;
  if (spec.mask) {
    mask = params[next++];
    // Plane (b, h) of [Bm, Hm, Nm, Nk], broadcast dims read at 0.
    Value b = spec.mask->batchBroadcast ? kb.idx(0) : batch;
    Value h = spec.mask->headBroadcast ? kb.idx(0) : head;
    Value hm = spec.mask->headBroadcast ? kb.idx(1) : sizes.queryHeads;
    Value plane = kb.add(kb.mul(b, hm), h);
    maskPlane = spec.mask->rowBroadcast ? kb.mul(plane, nk)
                                        : kb.mul(kb.mul(plane, nq), nk);
  }
  for (const ScoreModifierSpec::Capture &c : spec.captures)
    captures[c.arg] = params[next++];
  for (size_t g = 0; g < spec.captureGrads.size(); ++g)
    captureGradBuffers.push_back(params[next++]);
}

SmallVector<KernelScoreModifiers::CaptureGradTerm>
KernelScoreModifiers::captureGradTerms(const Row &r, Value col) const {
  SmallVector<CaptureGradTerm> terms;
  if (spec.captureGradTerms.empty())
    return terms;
  // The score does not reach the terms (checked): 0 stands for it, and t's
  // ops die.
  SmallVector<Value> yielded = inlineRegion(
      *spec.scoreModGrad, {kb.f32(0.0), batch, head, r.i, readColumn(col)});
  size_t at = 2; // past t and dt
  for (const ScoreModifierSpec::CaptureGradTerm &termSpec :
       spec.captureGradTerms) {
    RankedTensorType type = spec.captureGrads[termSpec.grad].type;
    CaptureGradTerm term;
    term.buffer = captureGradBuffers[termSpec.grad];
    term.coefficient = yielded[at++];
    term.tileUniform = termSpec.tileUniform;
    // Row-major offset of the indices, each clamped into its dim (i32: the
    // region's index values are).
    Value offset = kb.i32c(0);
    for (int64_t d = 0; d < type.getRank(); ++d, ++at) {
      Value index = yielded[at];
      if (index.getType().isIndex())
        index =
            arith::IndexCastOp::create(kb.b, kb.loc, kb.b.getI32Type(), index);
      index = arith::MaxSIOp::create(kb.b, kb.loc, index, kb.i32c(0));
      index = arith::MinSIOp::create(kb.b, kb.loc, index,
                                     kb.i32c(type.getDimSize(d) - 1));
      offset = arith::AddIOp::create(
          kb.b, kb.loc,
          arith::MulIOp::create(kb.b, kb.loc, offset,
                                kb.i32c(type.getDimSize(d))),
          index);
    }
    term.offset = kb.asIndex(offset);
    terms.push_back(term);
  }
  return terms;
}

KernelScoreModifiers::Row KernelScoreModifiers::row(Value rowQ) const {
  Row r;
  if (spec.empty())
    return r;
  r.i = arith::MinSIOp::create(kb.b, kb.loc, rowQ,
                               kb.sub(nq, kb.idx(1)));
  if (mask)
    r.maskRow = spec.mask->rowBroadcast ? maskPlane
                                        : kb.add(maskPlane, kb.mul(r.i, nk));
  return r;
}

KernelScoreModifiers::Row
KernelScoreModifiers::biasedRow(Value rowQ, Value colBase, double scale) const {
  assert(splitsBias(scale) && "a bias split needs splitsBias");
  Row r = row(rowQ);
  r.colBase = colBase;
  // The bias at column colBase + 1: in affine form its base is the bias at
  // colBase and its offset what one column adds, in multiples of k.
  Value probe = arith::AddIOp::create(kb.b, kb.loc, colBase, kb.idx(1));
  InlinedBias g = inlineBias(r, probe);
  if (g.base) {
    r.bias = g.base;
    if (g.offset != 0) {
      Value step = kb.f32(double(g.offset) / scale);
      r.rawStep =
          g.k ? arith::MulFOp::create(kb.b, kb.loc, g.k, step).getResult()
              : step;
    }
    return r;
  }
  // Not affine in the column: a row constant when it does not read the
  // column at all, else evaluated per score (bias null).
  if (!biasReadsColumn)
    r.bias = g.value;
  return r;
}

Value KernelScoreModifiers::exponentBias(const Row &r) const {
  if (!r.bias)
    return Value();
  return arith::MulFOp::create(kb.b, kb.loc, r.bias, kb.f32(M_LOG2E));
}

Value KernelScoreModifiers::readColumn(Value col) const {
  // Not for a capture read at (b, h, i) alone: a clamped column is no
  // longer `base + constant`, and ALiBi's slope table then cost an int to
  // float conversion per score (0.55x our plain kernel measured through
  // fa.flex, against 0.93x with the slope computed in the region).
  if (spec.mask || capturedAtColumn)
    return arith::MinSIOp::create(kb.b, kb.loc, col, kb.sub(nk, kb.idx(1)));
  return col;
}

Value KernelScoreModifiers::applyMaskOperand(Value &s, const Row &r,
                                             Value j) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value m =
      memref::LoadOp::create(b, loc, mask, ValueRange{kb.add(r.maskRow, j)});
  if (spec.mask->elementType.isInteger(1))
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, m,
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
  if (!m.getType().isF32())
    m = arith::ExtFOp::create(b, loc, b.getF32Type(), m);
  s = arith::AddFOp::create(b, loc, s, m);
  return Value();
}

/// `flags` with contraction allowed.
static arith::FastMathFlagsAttr
withContraction(OpBuilder &b, arith::FastMathFlagsAttr flags) {
  arith::FastMathFlags f =
      flags ? flags.getValue() : arith::FastMathFlags::none;
  return arith::FastMathFlagsAttr::get(b.getContext(),
                                       f | arith::FastMathFlags::contract);
}

/// Integer ops whose index form is computed in i32 in the kernel.
static bool isNarrowableIntOp(Operation &op) {
  // Every integer op a region may apply to an index (a result of the same
  // type as its operands, or an i1): cloned as it is, an op on index values
  // narrowed to i32 kept its index result (math.absi then left an
  // unrealized_conversion_cast that failed the LLVM translation).
  return isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
             arith::RemSIOp, arith::MinSIOp, arith::MaxSIOp,
             arith::FloorDivSIOp, arith::CeilDivSIOp, arith::SelectOp,
             arith::CmpIOp, arith::DivUIOp, arith::RemUIOp, arith::CeilDivUIOp,
             arith::MinUIOp, arith::MaxUIOp, arith::AndIOp, arith::OrIOp,
             arith::XOrIOp, arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp,
             math::AbsIOp>(op);
}

namespace {
/// Float values of a region that move with the key column: base + k * offset
/// (k null for 1), with `base` and `k` kernel values constant along the row
/// and `offset` the fragment's column offset. They come from an int-to-float
/// conversion of a column-affine integer and stay in this form through
/// products, sums and differences with row-constant values, negations and
/// fmas, so ALiBi's slope * (j - i) costs one fma per score: slope * (base +
/// offset) is evaluated as fma(slope, offset, slope * base), one more
/// rounding (of slope * base) than the region's order.
class ColumnFloats {
public:
  struct FloatAffine {
    Value base, k;
    int64_t offset;
  };
  /// Region integer -> (kernel value of the tile's base, constant offset).
  using ColumnInts = DenseMap<Value, std::pair<Value, int64_t>>;

  /// `scoreIsRowConstant`: the float arguments are bound to a row constant
  /// (a score_mod's bias evaluated apart from the score, with score -0.0).
  ColumnFloats(KernelBuilder &kb, const ColumnInts &columnAffine, Block &body,
               bool scoreIsRowConstant = false)
      : kb(kb), b(kb.b), loc(kb.loc), columnAffine(columnAffine) {
    // Values that differ from score to score: the float arguments (the
    // score) and the positions that move with the fragment's column (`j` in
    // the forward, `i` in the backward's transposed tiles), and all they
    // flow into. Only a cost hint: the algebra holds for any values, and
    // folding a per-score value into `base` would only cost more.
    for (BlockArgument arg : body.getArguments())
      if ((!arg.getType().isIndex() && !scoreIsRowConstant) ||
          columnAffine.count(arg))
        perScore.insert(arg);
  }

  /// Marks `op`'s results per score when an operand is.
  void track(Operation &op) {
    if (llvm::any_of(op.getOperands(),
                     [&](Value o) { return perScore.contains(o); }))
      perScore.insert(op.result_begin(), op.result_end());
  }

  const FloatAffine *affineOf(Value v) const {
    auto it = affine.find(v);
    return it == affine.end() ? nullptr : &it->second;
  }

  /// base + k * offset: one fma (or add) per score.
  Value materialize(const FloatAffine &a) const {
    if (a.offset == 0)
      return a.base;
    Value offset = kb.f32(double(a.offset));
    if (a.k)
      return math::FmaOp::create(b, loc, a.k, offset, a.base);
    return arith::AddFOp::create(b, loc, a.base, offset);
  }

  /// Keeps `op` (a float op) in affine form when it can, or maps its result
  /// in `map` to a score-plus-affine sum; false: `op` is the caller's.
  bool fold(Operation &op, function_ref<Value(Value)> lookup, IRMapping &map);

private:
  bool rowConstant(Value v) const {
    return v.getType().isF32() && !perScore.contains(v) && !affineOf(v);
  }
  /// -(base + k offset) = -base + k (-offset), exact.
  FloatAffine negated(FloatAffine a) const {
    a.base = arith::NegFOp::create(b, loc, a.base);
    a.offset = -a.offset;
    return a;
  }

  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  const ColumnInts &columnAffine;
  DenseSet<Value> perScore;
  DenseMap<Value, FloatAffine> affine;
};
} // namespace

bool ColumnFloats::fold(Operation &op, function_ref<Value(Value)> lookup,
                        IRMapping &map) {
  Value res = op.getResult(0);
  if (auto toFloat = dyn_cast<arith::SIToFPOp>(op)) {
    auto it = columnAffine.find(toFloat.getIn());
    if (it == columnAffine.end() ||
        std::abs(it->second.second) >= (int64_t(1) << 24))
      return false;
    affine[res] = {
        arith::SIToFPOp::create(b, loc, res.getType(), it->second.first),
        Value(), it->second.second};
    return true;
  }
  if (auto neg = dyn_cast<arith::NegFOp>(op)) {
    const FloatAffine *a = affineOf(neg.getOperand());
    if (!a)
      return false;
    FloatAffine n = negated(*a);
    affine[res] = n;
    return true;
  }
  if (!isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, math::FmaOp>(op))
    return false;
  Value lhs = op.getOperand(0), rhs = op.getOperand(1);
  if (isa<arith::AddFOp, arith::SubFOp>(op) &&
      !affineOf(lhs) != !affineOf(rhs) &&
      !rowConstant(affineOf(lhs) ? rhs : lhs)) {
    // A score plus or minus the affine value: one add (contractible with
    // the score's scaling) after the affine one; y - a as y + (-a).
    bool negate = isa<arith::SubFOp>(op) && affineOf(rhs);
    FloatAffine a = *affineOf(affineOf(lhs) ? lhs : rhs);
    if (negate)
      a = negated(a);
    Value y = lookup(affineOf(lhs) ? rhs : lhs);
    Value sum = isa<arith::SubFOp>(op) && !negate
                    ? arith::SubFOp::create(b, loc, materialize(a), y,
                                            withContraction(b, {}))
                          .getResult()
                    : arith::AddFOp::create(b, loc, y, materialize(a),
                                            withContraction(b, {}))
                          .getResult();
    map.map(res, sum);
    return true;
  }
  bool affineLhs = affineOf(lhs) && rowConstant(rhs);
  if (!affineLhs && !(affineOf(rhs) && rowConstant(lhs)))
    return false;
  auto fma = dyn_cast<math::FmaOp>(op);
  if (fma && affineOf(fma.getC()))
    return false;
  FloatAffine a = *affineOf(affineLhs ? lhs : rhs);
  Value x = lookup(affineLhs ? rhs : lhs);
  if (isa<arith::AddFOp>(op)) {
    a.base = arith::AddFOp::create(b, loc, a.base, x);
  } else if (isa<arith::SubFOp>(op) && affineLhs) {
    a.base = arith::SubFOp::create(b, loc, a.base, x);
  } else if (isa<arith::SubFOp>(op)) {
    a = negated(a);
    a.base = arith::AddFOp::create(b, loc, x, a.base);
  } else {
    // x (base + k offset) = x base + (x k) offset.
    a.base = arith::MulFOp::create(b, loc, a.base, x);
    a.k = a.k ? arith::MulFOp::create(b, loc, a.k, x).getResult() : x;
  }
  if (fma && !rowConstant(fma.getC())) {
    // A score plus the product: one add, contractible with the score's
    // scaling.
    map.map(res, arith::AddFOp::create(b, loc, lookup(fma.getC()),
                                       materialize(a), withContraction(b, {})));
    return true;
  }
  if (fma)
    a.base = arith::AddFOp::create(b, loc, a.base, lookup(fma.getC()));
  affine[res] = a;
  return true;
}

SmallVector<Value> KernelScoreModifiers::inlineRegion(Region &region,
                                                      ArrayRef<Value> args,
                                                      bool fuseFloats) const {
  return inlineRegionImpl(region, args, fuseFloats, /*yieldBias=*/nullptr);
}

KernelScoreModifiers::InlinedBias
KernelScoreModifiers::inlineBias(const Row &r, Value col) const {
  // -0.0 + g = g, -0.0 - g = -g and fma(x, y, -0.0) = x * y exactly (the
  // addend folds away), so the yield is the bias alone.
  InlinedBias g;
  inlineRegionImpl(*spec.scoreMod,
                   {kb.f32(-0.0), batch, head, r.i, readColumn(col)},
                   /*fuseFloats=*/true, &g);
  return g;
}

SmallVector<Value>
KernelScoreModifiers::inlineRegionImpl(Region &region, ArrayRef<Value> args,
                                       bool fuseFloats,
                                       InlinedBias *yieldBias) const {
  // Index values of the region are computed in i32: positions, batch and
  // head are below 2^31 (the kernel's sizes are i32 parameters), and 64-bit
  // integer math and conversions would cost registers and issue slots per
  // score. They go back to index where an op needs one (tensor.extract).
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type i32 = b.getI32Type();
  IRMapping map;
  Block &body = region.front();
  auto narrow = [&](Value v) -> Value {
    if (!v.getType().isIndex())
      return v;
    return arith::IndexCastOp::create(b, loc, i32, v);
  };
  // Values that move with the key column: region value -> (kernel value of
  // the tile's base, constant offset), from a `j` argument that is the base
  // plus a constant (the fragment's column) through adds, subtracts and
  // integer casts. An int-to-float conversion of such a value converts the
  // base once per row and adds the offset as a float: the conversion is a
  // quarter-rate instruction, on the unit the softmax's exp2 waits on, and
  // ALiBi's (j - i) did one per score (exact while |base| and |base +
  // offset| < 2^24; within one ulp beyond).
  DenseMap<Value, std::pair<Value, int64_t>> columnAffine;
  for (auto [arg, v] : llvm::zip_equal(body.getArguments(), args)) {
    map.map(arg, narrow(v));
    APInt offset;
    if (auto add = v.getDefiningOp<arith::AddIOp>();
        add && v.getType().isIndex() &&
        matchPattern(add.getRhs(), m_ConstantInt(&offset)))
      columnAffine[arg] = {narrow(add.getLhs()), offset.getSExtValue()};
  }
  ColumnFloats floats(kb, columnAffine, body,
                      /*scoreIsRowConstant=*/yieldBias != nullptr);
  // The kernel value of `v` (i32 for an index `v`). Constants from above are
  // cloned where used; a ColumnFloats value is formed where first used.
  auto lookup = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v))
      return m;
    if (const ColumnFloats::FloatAffine *a = floats.affineOf(v)) {
      Value x = floats.materialize(*a);
      map.map(v, x);
      return x;
    }
    Operation *def = v.getDefiningOp();
    assert(def && matchPattern(v, m_Constant()) &&
           "checkModifierRegionForKernel admits constants and arguments");
    Value c = b.clone(*def)->getResult(0);
    map.map(v, narrow(c));
    return map.lookup(v);
  };
  // `v`'s kernel value with `v`'s own type (index again where narrowed).
  auto asRegionType = [&](Value v) -> Value {
    Value m = lookup(v);
    if (v.getType().isIndex() && !m.getType().isIndex())
      return kb.asIndex(m);
    return m;
  };
  // An integer of `from`'s kernel type to `to` (i32 stands for index).
  auto convertInt = [&](Value x, Type to) -> Value {
    unsigned fromBits = x.getType().getIntOrFloatBitWidth();
    unsigned toBits = to.getIntOrFloatBitWidth();
    if (fromBits == toBits)
      return x;
    if (fromBits < toBits)
      return arith::ExtSIOp::create(b, loc, to, x);
    return arith::TruncIOp::create(b, loc, to, x);
  };
  for (Operation &op : body.without_terminator()) {
    Value res = op.getNumResults() ? op.getResult(0) : Value();
    floats.track(op);
    // (The conversion's fold is the backward's too.)
    if (res && res.getType().isF32() &&
        (fuseFloats || isa<arith::SIToFPOp>(op)) &&
        floats.fold(op, lookup, map))
      continue;
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      auto arg = cast<BlockArgument>(extract.getTensor());
      RankedTensorType ty = extract.getTensor().getType();
      // Row-major linear index of the static shape.
      Value lin = kb.idx(0);
      for (auto [d, index] : llvm::enumerate(extract.getIndices()))
        lin = kb.add(kb.mul(lin, kb.idx(ty.getDimSize(d))),
                     asRegionType(index));
      Value v = memref::LoadOp::create(
          b, loc, captures.lookup(arg.getArgNumber()), ValueRange{lin});
      if (ty.getElementType().isInteger(1))
        v = arith::TruncIOp::create(b, loc, b.getI1Type(), v);
      map.map(res, v);
      continue;
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      auto ty = cast<RankedTensorType>(dim.getSource().getType());
      Value size = kb.i32c(0);
      Value di = lookup(dim.getIndex());
      for (int64_t k = 0; k < ty.getRank(); ++k)
        size = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, di,
                                  kb.i32c(k)),
            kb.i32c(ty.getDimSize(k)), size);
      map.map(res, size);
      continue;
    }
    if (isa<arith::ConstantOp>(op)) {
      map.map(res, narrow(b.clone(op)->getResult(0)));
      continue;
    }
    if (auto cast = dyn_cast<arith::IndexCastOp>(op)) {
      // index <-> iN: i32 stands for index.
      Value x = lookup(cast.getIn());
      Type to = res.getType().isIndex() ? i32 : res.getType();
      map.map(res, convertInt(x, to));
      if (auto it = columnAffine.find(cast.getIn()); it != columnAffine.end())
        columnAffine[res] = {convertInt(it->second.first, to),
                             it->second.second};
      continue;
    }
    if (isNarrowableIntOp(op) &&
        llvm::any_of(op.getOperandTypes(), [](Type t) { return t.isIndex(); })) {
      SmallVector<Value> operands;
      for (Value o : op.getOperands())
        operands.push_back(lookup(o));
      SmallVector<Type> types;
      for (Type t : op.getResultTypes())
        types.push_back(t.isIndex() ? i32 : t);
      OperationState state(loc, op.getName().getIdentifier(), operands, types,
                           op.getAttrs());
      map.map(res, b.create(state)->getResult(0));
      // The base's sum or difference, and the offsets'.
      if (isa<arith::AddIOp, arith::SubIOp>(op)) {
        auto part = [&](Value o) -> std::pair<Value, int64_t> {
          auto it = columnAffine.find(o);
          return it != columnAffine.end() ? it->second
                                          : std::pair(lookup(o), int64_t(0));
        };
        Value lhs = op.getOperand(0), rhs = op.getOperand(1);
        if (columnAffine.count(lhs) || columnAffine.count(rhs)) {
          auto [lb, lc] = part(lhs);
          auto [rb, rc] = part(rhs);
          bool sub = isa<arith::SubIOp>(op);
          Value base =
              sub ? arith::SubIOp::create(b, loc, lb, rb).getResult()
                  : arith::AddIOp::create(b, loc, lb, rb).getResult();
          columnAffine[res] = {base, sub ? lc - rc : lc + rc};
        }
      }
      continue;
    }
    // math.tanh with afn: the MUFU's tanh.approx (as the built-in softcap);
    // without it, libdevice's __nv_tanhf through convert-gpu-to-nvvm.
    if (auto tanh = dyn_cast<math::TanhOp>(op);
        tanh && tanh.getType().isF32() &&
        bitEnumContainsAll(tanh.getFastmath(), arith::FastMathFlags::afn)) {
      map.map(res, kb.tanhApprox(lookup(tanh.getOperand())));
      continue;
    }
    IRMapping operands;
    for (Value o : op.getOperands())
      operands.map(o, asRegionType(o));
    Operation *c = b.clone(op, operands);
    // Contraction allowed (nvcc's default): a product that feeds a sum may
    // become one fma, the scale's product in `apply` among them.
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(c); fm && fuseFloats)
      c->setAttr(fm.getFastMathAttrName(),
                 withContraction(b, fm.getFastMathFlagsAttr()));
    for (auto [r, cr] : llvm::zip_equal(op.getResults(), c->getResults()))
      map.map(r, narrow(cr));
  }
  if (yieldBias) {
    Value y = body.getTerminator()->getOperand(0);
    if (const ColumnFloats::FloatAffine *a = floats.affineOf(y))
      *yieldBias = {Value(), a->base, a->k, a->offset};
    // (An affine value materialized here is dead where only its form is
    // used.)
    yieldBias->value = lookup(y);
    return {};
  }
  return llvm::map_to_vector(body.getTerminator()->getOperands(), lookup);
}

Value KernelScoreModifiers::apply(Value s, double scale, const Row &r,
                                  Value col, bool maskModApplied) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  // Only reads need the column inside [0, Nk) (a tail block's columns past
  // it are masked by the caller whatever the modifiers give).
  Value j = readColumn(col);
  if (spec.softcap) {
    // softcap * tanh(scale * s / softcap), one multiply before the tanh,
    // tanh on the MUFU (FlashAttention's choice; docs/Attention.md gives its
    // error).
    Value t = kb.tanhApprox(arith::MulFOp::create(
        b, loc, s, kb.f32(scale / *spec.softcap)));
    s = arith::MulFOp::create(b, loc, kb.f32(*spec.softcap), t);
  } else if (scalesFirst(scale)) {
    // Contractible for a score_mod: an add to the score makes it one fma.
    // (Not with the additive mask: its add contracted spilled 100 bytes
    // more at d128 on sm_90a.)
    s = arith::MulFOp::create(b, loc, s, kb.f32(scale),
                              spec.scoreMod && !spec.mask
                                  ? withContraction(b, {})
                                  : arith::FastMathFlagsAttr());
  }
  Value keep;
  // A per-key boolean mask classified per block: a block it shows wholly
  // (maskModApplied false) skips it.
  if (spec.mask && (maskModApplied || !spec.classifiesMaskOperand()))
    keep = applyMaskOperand(s, r, j);
  if (splitsBias(scale)) {
    // The raw score plus the bias's part beyond the row's (biasedRow).
    assert(r.colBase && "splitsBias needs the rows of biasedRow");
    APInt offset;
    if (r.rawStep) {
      Value n; // the column's offset from colBase, null for 0
      if (auto add = col.getDefiningOp<arith::AddIOp>();
          add && add.getLhs() == r.colBase &&
          matchPattern(add.getRhs(), m_ConstantInt(&offset)))
        n = offset.isZero() ? Value() : kb.f32(double(offset.getSExtValue()));
      else if (col != r.colBase)
        n = arith::SIToFPOp::create(
            b, loc, b.getF32Type(),
            arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                       kb.sub(col, r.colBase)));
      if (n)
        s = math::FmaOp::create(b, loc, r.rawStep, n, s);
    } else if (!r.bias) {
      s = math::FmaOp::create(b, loc, inlineBias(r, col).value,
                              kb.f32(1.0 / scale), s);
    }
  } else if (spec.scoreMod) {
    s = inlineRegion(*spec.scoreMod, {s, batch, head, r.i, j},
                     /*fuseFloats=*/true)[0];
  }
  if (spec.maskMod && (maskModApplied || !classifiesBlocks())) {
    Value k = inlineRegion(*spec.maskMod, {batch, head, r.i, j},
                           /*fuseFloats=*/true)[0];
    keep = keep ? arith::AndIOp::create(b, loc, keep, k).getResult() : k;
  }
  if (keep)
    s = arith::SelectOp::create(
        b, loc, keep, s,
        kb.f32(-std::numeric_limits<double>::infinity()));
  return s;
}

KernelScoreModifiers::ScoreWithDerivative
KernelScoreModifiers::applyWithDerivative(Value s, double scale, const Row &r,
                                          Value col) const {
  assert(!spec.scoreMod && "the backward takes a differentiated score_mod");
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value j = readColumn(col);
  ScoreWithDerivative out;
  if (spec.softcap) {
    // s' = c tanh(scale s / c): ds' / d(scale s) = 1 - tanh^2.
    Value t = kb.tanhApprox(arith::MulFOp::create(
        b, loc, s, kb.f32(scale / *spec.softcap)));
    s = arith::MulFOp::create(b, loc, kb.f32(*spec.softcap), t);
    out.derivative = arith::SubFOp::create(
        b, loc, kb.f32(1.0), arith::MulFOp::create(b, loc, t, t));
  } else {
    s = arith::MulFOp::create(b, loc, s, kb.f32(scale));
  }
  // The mask operand: added after the softcap (its derivative is 1), or
  // hiding the key.
  Value maskKeep = spec.mask ? applyMaskOperand(s, r, j) : Value();
  if (spec.scoreModGrad) {
    // The chain rule: d score_mod(s') / d(scale s) = score_mod'(s') ds'.
    SmallVector<Value> tdt =
        inlineRegion(*spec.scoreModGrad, {s, batch, head, r.i, j});
    s = tdt[0];
    out.derivative =
        out.derivative
            ? arith::MulFOp::create(b, loc, out.derivative, tdt[1]).getResult()
            : tdt[1];
  }
  if (spec.maskMod)
    out.keep = inlineRegion(*spec.maskMod, {batch, head, r.i, j})[0];
  if (maskKeep)
    out.keep =
        out.keep ? arith::AndIOp::create(b, loc, maskKeep, out.keep).getResult()
                 : maskKeep;
  out.score = s;
  return out;
}

//===----------------------------------------------------------------------===//
// Block classification of mask_mod by interval arithmetic
//===----------------------------------------------------------------------===//
//
// AttentionUtils' boundMaskModOverBlock (the tiled form's block sparsity)
// evaluates mask_mod over a block of rows x keys as IR; in a kernel its
// constants from above are cloned in and a captured 1-D tensor's values over
// an index range are scanned (tensorRange).

/// The bound of "unbounded" intervals: far beyond any position or tensor
/// value, with room for the interval sums.
static constexpr int64_t kUnboundedInterval = int64_t(1) << 40;

/// Hooks that make the bounder work inside a kernel; `tensorRange` null: no
/// tensor reads (a dry run at match time passes a stand-in).
static MaskModBoundHooks
kernelBoundHooks(OpBuilder &b,
                 std::function<std::pair<Value, Value>(tensor::ExtractOp,
                                                       Value, Value)>
                     tensorRange) {
  MaskModBoundHooks hooks;
  hooks.captured = [&b](Value v) -> Value {
    if (!matchPattern(v, m_Constant()))
      return Value();
    return b.clone(*v.getDefiningOp())->getResult(0);
  };
  hooks.extract = std::move(tensorRange);
  return hooks;
}

ScoreModifierSpec::MaskModBound mlir::fa::boundMaskMod(Region &maskMod) {
  using Bound = ScoreModifierSpec::MaskModBound;
  // A dry run over a scratch block of stand-in arguments.
  MLIRContext *ctx = maskMod.getContext();
  OpBuilder b(ctx);
  Location loc = maskMod.getLoc();
  Block scratch;
  SmallVector<Value> args;
  for (int k = 0; k < 6; ++k)
    args.push_back(scratch.addArgument(b.getIndexType(), loc));
  b.setInsertionPointToStart(&scratch);
  bool reads = false;
  auto standIn = [&](tensor::ExtractOp extract, Value lo, Value hi) {
    RankedTensorType ty = extract.getTensor().getType();
    if (ty.getRank() != 1 || !ty.getElementType().isSignlessInteger() ||
        ty.getElementType().isInteger(1))
      return std::pair<Value, Value>();
    reads = true;
    return std::pair<Value, Value>(lo, hi);
  };
  FailureOr<MaskModBlockVisibility> bounded = boundMaskModOverBlock(
      b, loc, maskMod, args[0], args[1], args[2], args[3], args[4], args[5],
      kernelBoundHooks(b, standIn));
  scratch.dropAllDefinedValueUses();
  scratch.clear();
  if (failed(bounded))
    return Bound::None;
  return reads ? Bound::TensorReads : Bound::Arithmetic;
}

/// Whether `extract` reads its 1-D tensor at mask_mod's row argument `i`
/// (block argument 2 of (b, h, i, j)).
static bool readsAtRow(tensor::ExtractOp extract, Region &maskMod) {
  if (extract.getIndices().size() != 1)
    return false;
  auto arg = dyn_cast<BlockArgument>(extract.getIndices()[0]);
  return arg && arg.getOwner() == &maskMod.front() && arg.getArgNumber() == 2;
}

void KernelScoreModifiers::hoistRowRanges(Value iLo, Value iHi) {
  if (!spec.maskModReadsTensors())
    return;
  hoistedRowLo = iLo;
  spec.maskMod->walk([&](tensor::ExtractOp extract) {
    if (readsAtRow(extract, *spec.maskMod) &&
        isa<BlockArgument>(extract.getTensor()))
      hoistedRowRanges[extract] =
          tensorRangeWarp(captured(extract), iLo, iHi, kMaxScanSpan);
  });
}

KernelScoreModifiers::BlockVisibility
KernelScoreModifiers::blockVisibility(Value iLo, Value iHi, Value jLo,
                                      Value jHi, bool warpUniform,
                                      int64_t maxSpan,
                                      const LaneSubset *lanes) const {
  assert(narrowsBlocks() && "a bounded mask_mod or a per-key boolean mask");
  auto scan = [&](const ScanSource &src, Value lo, Value hi) {
    return warpUniform ? tensorRangeWarp(src, lo, hi, maxSpan)
                       : tensorRangeLanes(src, lo, hi, maxSpan, lanes);
  };
  BlockVisibility vis;
  if (spec.maskMod &&
      spec.maskModBound == ScoreModifierSpec::MaskModBound::None) {
    // Unbounded: any key may be hidden or shown (only the mask operand can
    // skip blocks; every visited block evaluates mask_mod per key).
    vis.some = arith::ConstantOp::create(kb.b, kb.loc, kb.b.getBoolAttr(true));
    vis.all = arith::ConstantOp::create(kb.b, kb.loc, kb.b.getBoolAttr(false));
  } else if (spec.maskMod) {
    // The tile's rows: their ranges were scanned once (hoistRowRanges).
    bool tileRows = hoistedRowLo && iLo == hoistedRowLo;
    auto range = [&](tensor::ExtractOp extract, Value lo, Value hi) {
      if (tileRows) {
        auto it = hoistedRowRanges.find(extract);
        if (it != hoistedRowRanges.end())
          return it->second;
      }
      return scan(captured(extract), lo, hi);
    };
    FailureOr<MaskModBlockVisibility> v = boundMaskModOverBlock(
        kb.b, kb.loc, *spec.maskMod, batch, head, iLo, kb.add(iHi, kb.idx(1)),
        jLo, kb.add(jHi, kb.idx(1)), kernelBoundHooks(kb.b, range));
    assert(succeeded(v) && "boundMaskMod found the region bounded");
    vis = {v->someVisible, v->allVisible};
  }
  if (spec.classifiesMaskOperand()) {
    BlockVisibility m =
        maskOperandVisibility(jLo, jHi, warpUniform, maxSpan, lanes);
    vis.some =
        vis.some
            ? arith::AndIOp::create(kb.b, kb.loc, vis.some, m.some).getResult()
            : m.some;
    vis.all =
        vis.all
            ? arith::AndIOp::create(kb.b, kb.loc, vis.all, m.all).getResult()
            : m.all;
  }
  return vis;
}

KernelScoreModifiers::BlockVisibility
KernelScoreModifiers::maskOperandVisibility(Value jLo, Value jHi,
                                            bool warpUniform, int64_t maxSpan,
                                            const LaneSubset *lanes) const {
  assert(spec.classifiesMaskOperand() && "a per-key boolean mask");
  // The mask's bytes (0 or 1) over the keys: some key visible iff max > 0,
  // all iff min > 0 (an unbounded range, [-2^40, 2^40], is some and not
  // all).
  ScanSource src = maskRowSource();
  auto [mn, mx] = warpUniform ? tensorRangeWarp(src, jLo, jHi, maxSpan)
                              : tensorRangeLanes(src, jLo, jHi, maxSpan, lanes);
  Value zero = kb.idx(0);
  return {kb.cmp(arith::CmpIPredicate::sgt, mx, zero),
          kb.cmp(arith::CmpIPredicate::sgt, mn, zero)};
}

KernelScoreModifiers::ScanSource
KernelScoreModifiers::captured(tensor::ExtractOp extract) const {
  auto arg = cast<BlockArgument>(extract.getTensor());
  ScanSource src;
  src.data = captures.lookup(arg.getArgNumber());
  src.elementType = extract.getTensor().getType().getElementType();
  src.staticSize = extract.getTensor().getType().getDimSize(0);
  return src;
}

KernelScoreModifiers::ScanSource KernelScoreModifiers::maskRowSource() const {
  assert(spec.classifiesMaskOperand() && "a per-key boolean mask");
  ScanSource src;
  src.data = mask;
  src.base = maskPlane;
  src.elementType = kb.b.getI8Type();
  src.size = nk;
  return src;
}

Value KernelScoreModifiers::ScanSource::sizeValue(KernelBuilder &kb) const {
  return size ? size : kb.idx(staticSize);
}

Value KernelScoreModifiers::ScanSource::lastIndex(KernelBuilder &kb) const {
  return size ? kb.sub(size, kb.idx(1)) : kb.idx(staticSize - 1);
}

Value KernelScoreModifiers::ScanSource::load(KernelBuilder &kb,
                                             Value index) const {
  if (base)
    index = kb.add(base, index);
  return memref::LoadOp::create(kb.b, kb.loc, data, ValueRange{index});
}

std::pair<Value, Value> KernelScoreModifiers::tensorRange(const ScanSource &src,
                                                          Value lo,
                                                          Value hi) const {
  // At most this many elements are scanned; a wider (or empty) index
  // interval gives the unbounded interval.
  constexpr int64_t kMaxSpan = kMaxScanSpan, kUnroll = 8;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  lo = arith::MaxSIOp::create(b, loc, lo, kb.idx(0));
  hi = arith::MinSIOp::create(b, loc, hi, src.lastIndex(kb));
  Value capped =
      arith::MinSIOp::create(b, loc, hi, kb.add(lo, kb.idx(kMaxSpan - 1)));
  Value big = kb.idx(kUnboundedInterval);
  Value negBig = kb.idx(-kUnboundedInterval);
  auto loop = scf::ForOp::create(b, loc, lo, kb.add(capped, kb.idx(1)),
                                 kb.idx(kUnroll), ValueRange{big, negBig});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value mn = loop.getRegionIterArgs()[0], mx = loop.getRegionIterArgs()[1];
    for (int64_t u = 0; u < kUnroll; ++u) {
      // Past `capped` the last element again (min / max do not mind).
      Value t = arith::MinSIOp::create(
          b, loc, kb.add(loop.getInductionVar(), kb.idx(u)), capped);
      Value v = kb.asIndex(src.load(kb, t));
      mn = arith::MinSIOp::create(b, loc, mn, v);
      mx = arith::MaxSIOp::create(b, loc, mx, v);
    }
    scf::YieldOp::create(b, loc, ValueRange{mn, mx});
  }
  Value unbounded = arith::OrIOp::create(
      b, loc, kb.cmp(arith::CmpIPredicate::sgt, kb.sub(hi, lo), kb.idx(kMaxSpan - 1)),
      kb.cmp(arith::CmpIPredicate::slt, hi, lo));
  Value rlo = arith::SelectOp::create(b, loc, unbounded, negBig, loop.getResult(0));
  Value rhi = arith::SelectOp::create(b, loc, unbounded, big, loop.getResult(1));
  return {rlo, rhi};
}

/// [lo, hi] as i32 indices of `src` (< 2^31 elements): lo into [0, size],
/// hi into [hiFloor, size - 1].
static std::pair<Value, Value>
clampIndices32(KernelBuilder &kb, Value lo, Value hi,
               const KernelScoreModifiers::ScanSource &src, int64_t hiFloor) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value l = kb.toI32(arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, lo, kb.idx(0)),
      src.sizeValue(kb)));
  Value h = kb.toI32(arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, hi, src.lastIndex(kb)),
      kb.idx(hiFloor)));
  return {l, h};
}

std::pair<Value, Value>
KernelScoreModifiers::tensorRangeWarp(const ScanSource &src, Value lo, Value hi,
                                      int64_t maxSpan) const {
  assert(maxSpan % 32 == 0 && maxSpan <= kMaxScanSpan && "whole loads");
  int64_t perLane = maxSpan / 32;
  Type elt = src.elementType;
  if (elt.getIntOrFloatBitWidth() > 32)
    return tensorRange(src, lo, hi);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type i32 = b.getI32Type();
  lo = arith::MaxSIOp::create(b, loc, lo, kb.idx(0));
  hi = arith::MinSIOp::create(b, loc, hi, src.lastIndex(kb));
  // The indices read, inside the tensor whatever the interval (an empty or
  // out-of-range one reads element 0 or size - 1, and is unbounded below).
  auto [lo32, hi32] = clampIndices32(kb, lo, hi, src, /*hiFloor=*/0);
  Value first = arith::AddIOp::create(b, loc, lo32,
                                      NVVM::LaneIdOp::create(b, loc, i32));
  Value mn, mx;
  for (int64_t k = 0; k < perLane; ++k) {
    // Past hi the last element again (min / max do not mind).
    Value t = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, kb.i32c(32 * k)), hi32);
    Value v =
        src.load(kb, arith::IndexCastUIOp::create(b, loc, b.getIndexType(), t));
    if (elt.getIntOrFloatBitWidth() < 32)
      v = arith::ExtSIOp::create(b, loc, i32, v);
    mn = mn ? arith::MinSIOp::create(b, loc, mn, v).getResult() : v;
    mx = mx ? arith::MaxSIOp::create(b, loc, mx, v).getResult() : v;
  }
  for (int32_t off : {16, 8, 4, 2, 1}) {
    auto shuffle = [&](Value v) {
      return gpu::ShuffleOp::create(b, loc, v, off, 32, gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    mn = arith::MinSIOp::create(b, loc, mn, shuffle(mn));
    mx = arith::MaxSIOp::create(b, loc, mx, shuffle(mx));
  }
  Value unbounded = arith::OrIOp::create(
      b, loc,
      kb.cmp(arith::CmpIPredicate::sgt, kb.sub(hi, lo), kb.idx(maxSpan - 1)),
      kb.cmp(arith::CmpIPredicate::slt, hi, lo));
  Value rlo = arith::SelectOp::create(b, loc, unbounded,
                                      kb.idx(-kUnboundedInterval),
                                      kb.asIndex(mn));
  Value rhi = arith::SelectOp::create(b, loc, unbounded,
                                      kb.idx(kUnboundedInterval),
                                      kb.asIndex(mx));
  return {rlo, rhi};
}

std::pair<Value, Value>
KernelScoreModifiers::tensorRangeLanes(const ScanSource &src, Value lo,
                                       Value hi, int64_t maxSpan,
                                       const LaneSubset *lanes) const {
  // One lane's interval after the other, each scanned by the whole warp:
  // a lane alone would read its interval element by element, 32 lanes 32
  // intervals far apart (a sector per lane and load); the warp together
  // reads an interval in maxSpan / 32 coalesced loads. Unrolled by kUnroll
  // intervals, so that their loads are in flight together.
  constexpr int64_t kUnroll = 4;
  if (src.elementType.getIntOrFloatBitWidth() > 32)
    return tensorRange(src, lo, hi);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type i32 = b.getI32Type();
  // Clamped so that they fit in 32 bits for the shuffles: lo into [0, size],
  // hi into [-1, size - 1] leave tensorRangeWarp's clamped interval (and so
  // its bounded-or-not answer) as it was.
  auto [lo32, hi32] = clampIndices32(kb, lo, hi, src, /*hiFloor=*/-1);
  Value lane = NVVM::LaneIdOp::create(b, loc, i32);
  // Only `lanes`' intervals when given (a lane k past 31 reads lane k - 32's
  // and keeps nothing).
  int64_t step = lanes ? lanes->step : 1;
  auto loop = scf::ForOp::create(b, loc, lanes ? lanes->first : kb.idx(0),
                                 kb.idx(32), kb.idx(kUnroll * step),
                                 ValueRange{lo, hi});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value mine[2] = {loop.getRegionIterArgs()[0], loop.getRegionIterArgs()[1]};
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value k = kb.toI32(kb.add(loop.getInductionVar(), kb.idx(u * step)));
      auto fromLane = [&](Value v) {
        return gpu::ShuffleOp::create(b, loc, v, k, kb.i32c(32),
                                      gpu::ShuffleMode::IDX)
            .getShuffleResult();
      };
      auto [rlo, rhi] = tensorRangeWarp(src, kb.asIndex(fromLane(lo32)),
                                        kb.asIndex(fromLane(hi32)), maxSpan);
      Value isMine =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, k);
      mine[0] = arith::SelectOp::create(b, loc, isMine, rlo, mine[0]);
      mine[1] = arith::SelectOp::create(b, loc, isMine, rhi, mine[1]);
    }
    scf::YieldOp::create(b, loc, ValueRange{mine[0], mine[1]});
  }
  return {loop.getResult(0), loop.getResult(1)};
}

Value KernelScoreModifiers::lastRow(Value q0, int64_t blockQ) const {
  Value end = kb.add(q0, kb.idx(blockQ));
  return kb.sub(arith::MinSIOp::create(kb.b, kb.loc, end, nq), kb.idx(1));
}

Value KernelScoreModifiers::blockKeyHi(Value j, int64_t blockKV) const {
  Value next = kb.mul(kb.add(j, kb.idx(1)), kb.idx(blockKV));
  return kb.sub(arith::MinSIOp::create(kb.b, kb.loc, next, nk), kb.idx(1));
}

Value KernelScoreModifiers::isFullBlock(const FullBlocks &full,
                                        Value j) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value at = kb.sub(j, full.begin);
  Value word = kb.div(at, 32);
  Value inWords = kb.cmp(arith::CmpIPredicate::ult, word,
                         kb.idx(kFullBlockWords));
  Value clamped =
      arith::MinUIOp::create(b, loc, word, kb.idx(kFullBlockWords - 1));
  Value bits = memref::LoadOp::create(b, loc, full.words, ValueRange{clamped});
  for (int64_t g = 1; g < full.groups; ++g)
    bits = arith::OrIOp::create(
        b, loc, bits,
        memref::LoadOp::create(
            b, loc, full.words,
            ValueRange{kb.add(clamped, kb.idx(g * kFullBlockWords))}));
  Value shift = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                           kb.rem(at, 32));
  Value bit = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, shift), kb.i32c(1));
  Value set =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit, kb.i32c(0));
  return arith::AndIOp::create(b, loc, inWords, set);
}

std::pair<Value, Value>
KernelScoreModifiers::narrowBlockRange(Value begin, Value end, Value iLo,
                                       Value iHi, int64_t blockKV,
                                       FullBlocks *full,
                                       const WarpShare *share) const {
  // A block's keys (and the tile's rows, at most 128) are all a tensor read
  // at j or i spans: scanning no more halves the loads at block-kv 128.
  int64_t span = std::min<int64_t>(
      kMaxScanSpan, llvm::alignTo(std::max<int64_t>(blockKV, 128), 32));
  return narrowBlocks(
      begin, end,
      [&](Value j, const LaneSubset *lanes) {
        return blockVisibility(iLo, iHi, kb.mul(j, kb.idx(blockKV)),
                               blockKeyHi(j, blockKV), /*warpUniform=*/false,
                               span, lanes);
      },
      full, share);
}

std::pair<Value, Value>
KernelScoreModifiers::narrowQueryBlockRange(Value begin, Value end, Value jLo,
                                            Value jHi, int64_t blockQ) const {
  return narrowBlocks(
      begin, end,
      [&](Value qb, const LaneSubset *) {
        Value q0 = kb.mul(qb, kb.idx(blockQ));
        return blockVisibility(q0, lastRow(q0, blockQ), jLo, jHi);
      },
      nullptr);
}

std::pair<Value, Value> KernelScoreModifiers::narrowBlocks(
    Value begin, Value end,
    llvm::function_ref<BlockVisibility(Value, const LaneSubset *)> classify,
    FullBlocks *full, const WarpShare *share) const {
  // Warp-parallel: each lane classifies one block of a chunk of 32, a ballot
  // gives the chunk's visible blocks (every warp computes the same range,
  // or with `share` a share of the chunks). Position-only classifications
  // are a few integer ops: kUnroll chunks per iteration, so that their
  // ballots are not a serial chain of latencies (the scan precedes the
  // tile's first load). Those that read captured tensors are loops of loads
  // already, one chunk per iteration.
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type i32 = b.getI32Type();
  const int64_t kUnroll = classifyingReadsTensors() ? 1 : 4;
  Value lane = kb.asIndex(NVVM::LaneIdOp::create(b, loc, i32));
  Value laneZero = kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0));
  Value chunks = kb.div(kb.add(kb.sub(end, begin), kb.idx(31)), 32);
  // Shared: warp w scans chunks w, w + warps, ...; or, perChunk warps to a
  // chunk, chunks w / perChunk, + warps / perChunk, ..., each the blocks of
  // every perChunk-th lane from w % perChunk (its ballots hold those lanes'
  // bits only: the ranges still meet in the min / max, the full-block bits
  // in perChunk words that the steps OR).
  int64_t perChunk = share ? scanWarpsPerChunk(share->warps) : 1;
  Value chunkStart = share ? share->warp : kb.idx(0);
  int64_t chunkStep = share ? share->warps : kUnroll;
  std::optional<LaneSubset> subset;
  Value owned, wordBase;
  if (perChunk > 1) {
    Value group = kb.rem(share->warp, perChunk);
    subset = LaneSubset{group, perChunk};
    chunkStart = kb.div(share->warp, perChunk);
    chunkStep = share->warps / perChunk;
    owned = kb.cmp(arith::CmpIPredicate::eq, kb.rem(lane, perChunk), group);
    wordBase = kb.mul(group, kb.idx(kFullBlockWords));
  }
  if (full) {
    // Shared with the CTA, or private memory (one copy per thread; every
    // lane holds the ballots).
    full->words = share ? share->scratch
                        : memref::AllocaOp::create(
                              b, loc, MemRefType::get({kFullBlockWords}, i32))
                              .getResult();
    full->begin = begin;
    full->groups = perChunk;
  }
  // In shared memory one lane's store stands for the warp's.
  auto store = [&](Value v, Value word, Value when) {
    if (share)
      when = arith::AndIOp::create(b, loc, when, laneZero);
    auto ifOp = scf::IfOp::create(b, loc, when, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value words = full ? full->words : share->scratch;
    memref::StoreOp::create(b, loc, v, words, ValueRange{word});
  };
  auto loop = scf::ForOp::create(b, loc, chunkStart, chunks,
                                 kb.idx(chunkStep), ValueRange{end, begin});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = loop.getRegionIterArgs()[0];
    Value lastPlus = loop.getRegionIterArgs()[1];
    for (int64_t u = 0; u < (share ? 1 : kUnroll); ++u) {
      // Chunks past the last one have no block in range: ballots of 0.
      Value chunk = kb.add(loop.getInductionVar(), kb.idx(u));
      Value base = kb.add(begin, kb.mul(chunk, kb.idx(32)));
      Value j = kb.add(base, lane);
      BlockVisibility vis = classify(j, subset ? &*subset : nullptr);
      Value inRange = kb.cmp(arith::CmpIPredicate::slt, j, end);
      if (owned)
        inRange = arith::AndIOp::create(b, loc, inRange, owned);
      Value some = arith::AndIOp::create(b, loc, vis.some, inRange);
      if (full) {
        Value all = arith::AndIOp::create(b, loc, vis.all, inRange);
        Value allBallot = NVVM::VoteSyncOp::create(
            b, loc, i32, kb.i32c(-1), all, NVVM::VoteSyncKind::ballot);
        store(allBallot, wordBase ? kb.add(chunk, wordBase) : chunk,
              kb.cmp(arith::CmpIPredicate::ult, chunk,
                     kb.idx(kFullBlockWords)));
      }
      Value ballot = NVVM::VoteSyncOp::create(
          b, loc, i32, kb.i32c(-1), some, NVVM::VoteSyncKind::ballot);
      Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        ballot, kb.i32c(0));
      Value lo = kb.asIndex(LLVM::CountTrailingZerosOp::create(
          b, loc, i32, ballot, /*is_zero_poison=*/false));
      Value hi = kb.asIndex(LLVM::CountLeadingZerosOp::create(
          b, loc, i32, ballot, /*is_zero_poison=*/false));
      Value unset = kb.cmp(arith::CmpIPredicate::eq, first, end);
      first = arith::SelectOp::create(
          b, loc, arith::AndIOp::create(b, loc, any, unset), kb.add(base, lo),
          first);
      // One past the chunk's last visible block: base + 32 - clz.
      lastPlus = arith::SelectOp::create(
          b, loc, any, kb.sub(kb.add(base, kb.idx(32)), hi), lastPlus);
    }
    scf::YieldOp::create(b, loc, ValueRange{first, lastPlus});
  }
  Value first = loop.getResult(0);
  Value lastPlus = loop.getResult(1);
  if (share) {
    // Each warp's (first, one past last) after the ballot words; then the
    // CTA's: the least first and the greatest end (a warp that saw no
    // visible block holds (end, begin)). Block indices fit in 32 bits.
    Value slot = kb.add(kb.idx(perChunk * kFullBlockWords),
                        kb.mul(share->warp, kb.idx(2)));
    Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    store(kb.toI32(first), slot, yes);
    store(kb.toI32(lastPlus), kb.add(slot, kb.idx(1)), yes);
    gpu::BarrierOp::create(b, loc);
    // Lane w reads warp w's pair (the others a neutral one), a butterfly of
    // shuffles combines them (few registers: the prologue is near the cap).
    assert(share->warps <= 32 && "one lane per warp");
    Value laneSlot = arith::MinSIOp::create(b, loc, lane,
                                            kb.idx(share->warps - 1));
    Value own = kb.cmp(arith::CmpIPredicate::slt, lane, kb.idx(share->warps));
    auto read = [&](int64_t word) {
      return memref::LoadOp::create(
          b, loc, share->scratch,
          ValueRange{kb.add(kb.idx(perChunk * kFullBlockWords + word),
                            kb.mul(laneSlot, kb.idx(2)))});
    };
    Value f = arith::SelectOp::create(b, loc, own, read(0), kb.toI32(end));
    Value l = arith::SelectOp::create(b, loc, own, read(1), kb.toI32(begin));
    for (int32_t off : {16, 8, 4, 2, 1}) {
      auto shuffle = [&](Value v) {
        return gpu::ShuffleOp::create(b, loc, v, off, 32,
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      f = arith::MinSIOp::create(b, loc, f, shuffle(f));
      l = arith::MaxSIOp::create(b, loc, l, shuffle(l));
    }
    first = kb.asIndex(f);
    lastPlus = kb.asIndex(l);
  }
  Value last = arith::MaxSIOp::create(b, loc, lastPlus, first);
  return {first, last};
}
