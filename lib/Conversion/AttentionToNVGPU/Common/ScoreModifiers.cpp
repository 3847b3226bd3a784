//===- ScoreModifiers.cpp - softcap, masks and modifier regions -----------===//
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

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
                                         const ScoreModifierSpec &spec,
                                         MLIRContext *ctx) {
  using S = SizeSymbol;
  std::vector<KernelParam> extra;
  if (spec.mask) {
    Type elt = spec.mask->elementType;
    KernelParam p;
    p.name = "mask";
    p.kind = ParamKind::Pointer;
    p.type = MemRefType::get({kModifierGlobalExtent}, storageType(elt));
    p.meaning = elt.isInteger(1)
                    ? "boolean mask [Bm, Hm, Nq, Nk] (true keeps a key; Bm = "
                      "B or 1, Hm = Hq or 1), contiguous, one byte each"
                    : "additive mask [Bm, Hm, Nq, Nk] (Bm = B or 1, Hm = Hq "
                      "or 1), contiguous, " +
                          manifestDtype(elt);
    SmallVector<SizeExpr, 4> shape = {
        spec.mask->batchBroadcast ? SizeExpr(1) : SizeExpr(S::B),
        spec.mask->headBroadcast ? SizeExpr(1) : SizeExpr(S::Hq), S::Nq,
        S::Nk};
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
  auto firstSize = llvm::find_if(
      params, [](const KernelParam &p) { return p.kind == ParamKind::I32; });
  params.insert(firstSize, extra.begin(), extra.end());
  (void)ctx;
}

//===----------------------------------------------------------------------===//
// KernelScoreModifiers
//===----------------------------------------------------------------------===//

KernelScoreModifiers::KernelScoreModifiers(KernelBuilder &kb,
                               const ScoreModifierSpec &spec,
                               ValueRange params, const ProblemSizes &sizes,
                               Value batch, Value head)
    : kb(kb), spec(spec), batch(batch), head(head), nq(sizes.queryLength),
      nk(sizes.keyLength) {
  if (spec.empty())
    return;
  unsigned next = 0;
  if (spec.mask) {
    mask = params[next++];
    // Plane (b, h) of [Bm, Hm, Nq, Nk], broadcast dims read at 0.
    Value b = spec.mask->batchBroadcast ? kb.idx(0) : batch;
    Value h = spec.mask->headBroadcast ? kb.idx(0) : head;
    Value hm = spec.mask->headBroadcast ? kb.idx(1) : sizes.queryHeads;
    maskPlane = kb.mul(kb.mul(kb.add(kb.mul(b, hm), h), nq), nk);
  }
  for (const ScoreModifierSpec::Capture &c : spec.captures)
    captures[c.arg] = params[next++];
}

KernelScoreModifiers::Row KernelScoreModifiers::row(Value rowQ) const {
  Row r;
  if (spec.empty())
    return r;
  r.i = arith::MinSIOp::create(kb.b, kb.loc, rowQ,
                               kb.sub(nq, kb.idx(1)));
  if (mask)
    r.maskRow = kb.add(maskPlane, kb.mul(r.i, nk));
  return r;
}

/// Integer ops whose index form is computed in i32 in the kernel.
static bool isNarrowableIntOp(Operation &op) {
  return isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
             arith::RemSIOp, arith::MinSIOp, arith::MaxSIOp,
             arith::FloorDivSIOp, arith::CeilDivSIOp, arith::SelectOp,
             arith::CmpIOp>(op);
}

Value KernelScoreModifiers::inlineRegion(Region &region,
                                         ArrayRef<Value> args) const {
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
  for (auto [arg, v] : llvm::zip_equal(body.getArguments(), args))
    map.map(arg, narrow(v));
  // The kernel value of `v` (i32 for an index `v`). Constants from above are
  // cloned where used.
  auto lookup = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v))
      return m;
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
    for (auto [r, cr] : llvm::zip_equal(op.getResults(), c->getResults()))
      map.map(r, narrow(cr));
  }
  return lookup(body.getTerminator()->getOperand(0));
}

Value KernelScoreModifiers::apply(Value s, double scale, const Row &r,
                                  Value col, bool maskModApplied) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  // Only reads need the column inside [0, Nk) (a tail block's columns past
  // it are masked by the caller whatever the modifiers give).
  Value j = col;
  if (spec.mask || !spec.captures.empty())
    j = arith::MinSIOp::create(b, loc, col, kb.sub(nk, kb.idx(1)));
  if (spec.softcap) {
    // softcap * tanh(scale * s / softcap), one multiply before the tanh,
    // tanh on the MUFU (FlashAttention's choice; docs/Attention.md gives its
    // error).
    Value t = kb.tanhApprox(arith::MulFOp::create(
        b, loc, s, kb.f32(scale / *spec.softcap)));
    s = arith::MulFOp::create(b, loc, kb.f32(*spec.softcap), t);
  } else {
    s = arith::MulFOp::create(b, loc, s, kb.f32(scale));
  }
  Value keep;
  if (spec.mask) {
    Value m = memref::LoadOp::create(b, loc, mask,
                                     ValueRange{kb.add(r.maskRow, j)});
    if (spec.mask->elementType.isInteger(1)) {
      keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, m,
                                   arith::ConstantOp::create(
                                       b, loc, b.getI8IntegerAttr(0)));
    } else {
      if (!m.getType().isF32())
        m = arith::ExtFOp::create(b, loc, b.getF32Type(), m);
      s = arith::AddFOp::create(b, loc, s, m);
    }
  }
  if (spec.scoreMod)
    s = inlineRegion(*spec.scoreMod, {s, batch, head, r.i, j});
  if (spec.maskMod && (maskModApplied || !classifiesBlocks())) {
    Value k = inlineRegion(*spec.maskMod, {batch, head, r.i, j});
    keep = keep ? arith::AndIOp::create(b, loc, keep, k).getResult() : k;
  }
  if (keep)
    s = arith::SelectOp::create(
        b, loc, keep, s,
        kb.f32(-std::numeric_limits<double>::infinity()));
  return s;
}

//===----------------------------------------------------------------------===//
// Block classification of mask_mod by interval arithmetic
//===----------------------------------------------------------------------===//
//
// mask_mod evaluated over a block of rows [iLo, iHi] x keys [jLo, jHi] (b and
// h exact): each integer value becomes an interval [lo, hi] (emitted as two
// index values), each i1 a pair (may be true, may be false). Sound for the
// ops admitted by canBoundMaskMod; a block with nothing that may be true is
// empty, one with nothing that may be false is fully visible.

/// The constant of `v`, if it is one.
static std::optional<int64_t> constantOf(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  return std::nullopt;
}

static bool isIntervalOp(Operation &op) {
  if (isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MinSIOp,
          arith::MaxSIOp, arith::IndexCastOp, arith::CmpIOp, arith::AndIOp,
          arith::OrIOp, arith::XOrIOp, arith::SelectOp, arith::ExtSIOp>(op))
    return true;
  if (auto mul = dyn_cast<arith::MulIOp>(op))
    return constantOf(mul.getLhs()) || constantOf(mul.getRhs());
  if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) {
    std::optional<int64_t> c = constantOf(op.getOperand(1));
    return c && *c > 0;
  }
  return false;
}

ScoreModifierSpec::MaskModBound mlir::fa::boundMaskMod(Region &maskMod) {
  using Bound = ScoreModifierSpec::MaskModBound;
  Bound bound = Bound::Arithmetic;
  for (Operation &op : maskMod.front().without_terminator()) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      // A captured 1-D integer tensor (checkModifierRegionForKernel made sure
      // it is a function argument of static shape).
      RankedTensorType ty = extract.getTensor().getType();
      if (maskMod.isAncestor(extract.getTensor().getParentRegion()) ||
          ty.getRank() != 1 || !ty.getElementType().isSignlessInteger() ||
          ty.getElementType().isInteger(1))
        return Bound::None;
      bound = Bound::TensorReads;
      continue;
    }
    if (!isIntervalOp(op))
      return Bound::None;
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      using P = arith::CmpIPredicate;
      P p = cmp.getPredicate();
      if (p != P::eq && p != P::ne && p != P::slt && p != P::sle &&
          p != P::sgt && p != P::sge)
        return Bound::None;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op) &&
        op.getResult(0).getType().isInteger(1))
      return Bound::None;
    for (Value operand : op.getOperands())
      if (!maskMod.isAncestor(operand.getParentRegion()) &&
          !constantOf(operand))
        return Bound::None; // a captured value that is not a constant
  }
  return bound;
}

/// The bound of "unbounded" intervals: far beyond any position or tensor
/// value, with room for the interval sums.
static constexpr int64_t kMaxWindowBoundForIntervals = int64_t(1) << 40;

namespace {
struct Interval {
  Value lo, hi;
};
struct Truth {
  Value mayTrue, mayFalse;
};
} // namespace

KernelScoreModifiers::BlockVisibility
KernelScoreModifiers::blockVisibility(Value iLo, Value iHi, Value jLo,
                                      Value jHi) const {
  assert(narrowsBlocks() && "an interval-bounded mask_mod");
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Block &body = spec.maskMod->front();
  DenseMap<Value, Interval> ints;
  DenseMap<Value, Truth> bools;
  auto point = [&](Value v) { return Interval{v, v}; };
  ints[body.getArgument(0)] = point(batch);
  ints[body.getArgument(1)] = point(head);
  ints[body.getArgument(2)] = {iLo, iHi};
  ints[body.getArgument(3)] = {jLo, jHi};
  auto get = [&](Value v) -> Interval {
    auto it = ints.find(v);
    if (it != ints.end())
      return it->second;
    Value c = kb.idx(*constantOf(v)); // canBoundMaskMod: a constant
    return ints[v] = point(c);
  };
  auto truth = [&](Value v) -> Truth {
    auto it = bools.find(v);
    if (it != bools.end())
      return it->second;
    bool c = *constantOf(v) != 0;
    Value t = arith::ConstantOp::create(b, loc, b.getBoolAttr(c));
    Value f = arith::ConstantOp::create(b, loc, b.getBoolAttr(!c));
    return bools[v] = Truth{t, f};
  };
  auto lt = [&](Value x, Value y) {
    return kb.cmp(arith::CmpIPredicate::slt, x, y);
  };
  auto le = [&](Value x, Value y) {
    return kb.cmp(arith::CmpIPredicate::sle, x, y);
  };
  auto andI = [&](Value x, Value y) {
    return arith::AndIOp::create(b, loc, x, y).getResult();
  };
  auto orI = [&](Value x, Value y) {
    return arith::OrIOp::create(b, loc, x, y).getResult();
  };
  auto notI = [&](Value x) {
    return arith::XOrIOp::create(
               b, loc, x,
               arith::ConstantOp::create(b, loc, b.getBoolAttr(true)))
        .getResult();
  };
  auto smin = [&](Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y).getResult();
  };
  auto smax = [&](Value x, Value y) {
    return arith::MaxSIOp::create(b, loc, x, y).getResult();
  };
  for (Operation &op : body.without_terminator()) {
    Value res = op.getResult(0);
    bool isBool = res.getType().isInteger(1);
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (isBool)
        (void)truth(res);
      else
        (void)get(res);
      continue;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
      ints[res] = get(op.getOperand(0));
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      Interval x = get(extract.getIndices()[0]);
      auto [lo, hi] = tensorRange(extract, x.lo, x.hi);
      ints[res] = {lo, hi};
      continue;
    }
    if (auto add = dyn_cast<arith::AddIOp>(op)) {
      Interval x = get(add.getLhs()), y = get(add.getRhs());
      ints[res] = {kb.add(x.lo, y.lo), kb.add(x.hi, y.hi)};
      continue;
    }
    if (auto sub = dyn_cast<arith::SubIOp>(op)) {
      Interval x = get(sub.getLhs()), y = get(sub.getRhs());
      ints[res] = {kb.sub(x.lo, y.hi), kb.sub(x.hi, y.lo)};
      continue;
    }
    if (auto mul = dyn_cast<arith::MulIOp>(op)) {
      bool lhsConst = constantOf(mul.getLhs()).has_value();
      int64_t c = *constantOf(lhsConst ? mul.getLhs() : mul.getRhs());
      Interval x = get(lhsConst ? mul.getRhs() : mul.getLhs());
      Value a = kb.mul(x.lo, kb.idx(c)), z = kb.mul(x.hi, kb.idx(c));
      ints[res] = c >= 0 ? Interval{a, z} : Interval{z, a};
      continue;
    }
    if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) {
      // Monotone in the dividend for a positive divisor.
      Interval x = get(op.getOperand(0));
      Value c = kb.idx(*constantOf(op.getOperand(1)));
      auto apply = [&](Value v) -> Value {
        if (isa<arith::DivSIOp>(op))
          return arith::DivSIOp::create(b, loc, v, c);
        if (isa<arith::FloorDivSIOp>(op))
          return arith::FloorDivSIOp::create(b, loc, v, c);
        return arith::CeilDivSIOp::create(b, loc, v, c);
      };
      ints[res] = {apply(x.lo), apply(x.hi)};
      continue;
    }
    if (auto mn = dyn_cast<arith::MinSIOp>(op)) {
      Interval x = get(mn.getLhs()), y = get(mn.getRhs());
      ints[res] = {smin(x.lo, y.lo), smin(x.hi, y.hi)};
      continue;
    }
    if (auto mx = dyn_cast<arith::MaxSIOp>(op)) {
      Interval x = get(mx.getLhs()), y = get(mx.getRhs());
      ints[res] = {smax(x.lo, y.lo), smax(x.hi, y.hi)};
      continue;
    }
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      using P = arith::CmpIPredicate;
      Interval x = get(cmp.getLhs()), y = get(cmp.getRhs());
      Truth t;
      switch (cmp.getPredicate()) {
      case P::slt: // x < y
        t = {lt(x.lo, y.hi), le(y.lo, x.hi)};
        break;
      case P::sle:
        t = {le(x.lo, y.hi), lt(y.lo, x.hi)};
        break;
      case P::sgt: // y < x
        t = {lt(y.lo, x.hi), le(x.lo, y.hi)};
        break;
      case P::sge:
        t = {le(y.lo, x.hi), lt(x.lo, y.hi)};
        break;
      case P::eq:
      case P::ne: {
        Value overlap = andI(le(x.lo, y.hi), le(y.lo, x.hi));
        Value samePoint =
            andI(andI(kb.cmp(P::eq, x.lo, x.hi), kb.cmp(P::eq, y.lo, y.hi)),
                 kb.cmp(P::eq, x.lo, y.lo));
        t = {overlap, notI(samePoint)};
        if (cmp.getPredicate() == P::ne)
          std::swap(t.mayTrue, t.mayFalse);
        break;
      }
      default:
        llvm_unreachable("canBoundMaskMod admits signed compares only");
      }
      bools[res] = t;
      continue;
    }
    if (auto a = dyn_cast<arith::AndIOp>(op)) {
      Truth x = truth(a.getLhs()), y = truth(a.getRhs());
      bools[res] = {andI(x.mayTrue, y.mayTrue), orI(x.mayFalse, y.mayFalse)};
      continue;
    }
    if (auto o = dyn_cast<arith::OrIOp>(op)) {
      Truth x = truth(o.getLhs()), y = truth(o.getRhs());
      bools[res] = {orI(x.mayTrue, y.mayTrue), andI(x.mayFalse, y.mayFalse)};
      continue;
    }
    if (auto x = dyn_cast<arith::XOrIOp>(op)) {
      Truth p = truth(x.getLhs()), q = truth(x.getRhs());
      bools[res] = {orI(andI(p.mayTrue, q.mayFalse), andI(p.mayFalse, q.mayTrue)),
                    orI(andI(p.mayTrue, q.mayTrue), andI(p.mayFalse, q.mayFalse))};
      continue;
    }
    if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      Truth c = truth(sel.getCondition());
      if (isBool) {
        Truth x = truth(sel.getTrueValue()), y = truth(sel.getFalseValue());
        bools[res] = {orI(andI(c.mayTrue, x.mayTrue), andI(c.mayFalse, y.mayTrue)),
                      orI(andI(c.mayTrue, x.mayFalse),
                          andI(c.mayFalse, y.mayFalse))};
      } else {
        // The union of the branches that may be taken.
        Interval x = get(sel.getTrueValue()), y = get(sel.getFalseValue());
        Value lo = arith::SelectOp::create(
            b, loc, c.mayTrue,
            arith::SelectOp::create(b, loc, c.mayFalse, smin(x.lo, y.lo), x.lo),
            y.lo);
        Value hi = arith::SelectOp::create(
            b, loc, c.mayTrue,
            arith::SelectOp::create(b, loc, c.mayFalse, smax(x.hi, y.hi), x.hi),
            y.hi);
        ints[res] = {lo, hi};
      }
      continue;
    }
    llvm_unreachable("canBoundMaskMod admits only the ops above");
  }
  Truth keep = truth(body.getTerminator()->getOperand(0));
  return {keep.mayTrue, notI(keep.mayFalse)};
}

std::pair<Value, Value>
KernelScoreModifiers::tensorRange(tensor::ExtractOp extract, Value lo,
                                  Value hi) const {
  // At most this many elements are scanned; a wider (or empty) index
  // interval gives the unbounded interval.
  constexpr int64_t kMaxSpan = 256, kUnroll = 8;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto arg = cast<BlockArgument>(extract.getTensor());
  Value data = captures.lookup(arg.getArgNumber());
  int64_t size = extract.getTensor().getType().getDimSize(0);
  lo = arith::MaxSIOp::create(b, loc, lo, kb.idx(0));
  hi = arith::MinSIOp::create(b, loc, hi, kb.idx(size - 1));
  Value capped =
      arith::MinSIOp::create(b, loc, hi, kb.add(lo, kb.idx(kMaxSpan - 1)));
  Value big = kb.idx(kMaxWindowBoundForIntervals);
  Value negBig = kb.idx(-kMaxWindowBoundForIntervals);
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
      Value v = kb.asIndex(memref::LoadOp::create(b, loc, data, ValueRange{t}));
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

Value KernelScoreModifiers::lastRow(Value q0, int64_t blockQ) const {
  Value end = kb.add(q0, kb.idx(blockQ));
  return kb.sub(arith::MinSIOp::create(kb.b, kb.loc, end, nq), kb.idx(1));
}

Value KernelScoreModifiers::blockKeyHi(Value j, int64_t blockKV) const {
  Value next = kb.mul(kb.add(j, kb.idx(1)), kb.idx(blockKV));
  return kb.sub(arith::MinSIOp::create(kb.b, kb.loc, next, nk), kb.idx(1));
}

std::pair<Value, Value>
KernelScoreModifiers::narrowBlockRange(Value begin, Value end, Value iLo,
                                       Value iHi, int64_t blockKV) const {
  // Warp-parallel: each lane classifies one block of a chunk of 32, a ballot
  // gives the chunk's visible blocks (every warp computes the same range).
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type i32 = b.getI32Type();
  Value lane = kb.asIndex(NVVM::LaneIdOp::create(b, loc, i32));
  Value chunks = kb.div(kb.add(kb.sub(end, begin), kb.idx(31)), 32);
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), chunks, kb.idx(1),
                                 ValueRange{end, begin});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = kb.add(begin, kb.mul(loop.getInductionVar(), kb.idx(32)));
    Value first = loop.getRegionIterArgs()[0];
    Value lastPlus = loop.getRegionIterArgs()[1];
    Value j = kb.add(base, lane);
    Value some = blockVisibility(iLo, iHi, kb.mul(j, kb.idx(blockKV)),
                                 blockKeyHi(j, blockKV))
                     .some;
    some = arith::AndIOp::create(b, loc, some,
                                 kb.cmp(arith::CmpIPredicate::slt, j, end));
    Value ballot = NVVM::VoteSyncOp::create(
        b, loc, i32, kb.i32c(-1), some, NVVM::VoteSyncKind::ballot);
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, ballot,
                                      kb.i32c(0));
    Value lo = kb.asIndex(LLVM::CountTrailingZerosOp::create(
        b, loc, i32, ballot, /*is_zero_poison=*/false));
    Value hi = kb.asIndex(LLVM::CountLeadingZerosOp::create(
        b, loc, i32, ballot, /*is_zero_poison=*/false));
    Value unset = kb.cmp(arith::CmpIPredicate::eq, first, end);
    Value newFirst = arith::SelectOp::create(
        b, loc, arith::AndIOp::create(b, loc, any, unset), kb.add(base, lo),
        first);
    // One past the chunk's last visible block: base + 32 - clz.
    Value newLast = arith::SelectOp::create(
        b, loc, any, kb.sub(kb.add(base, kb.idx(32)), hi), lastPlus);
    scf::YieldOp::create(b, loc, ValueRange{newFirst, newLast});
  }
  Value first = loop.getResult(0);
  Value last = arith::MaxSIOp::create(b, loc, loop.getResult(1), first);
  return {first, last};
}
