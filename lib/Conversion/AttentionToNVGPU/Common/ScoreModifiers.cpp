//===- ScoreModifiers.cpp - softcap, masks and modifier regions -----------===//
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
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

Value KernelScoreModifiers::inlineRegion(Region &region,
                                   ArrayRef<Value> args) const {
  OpBuilder &b = kb.b;
  IRMapping map;
  Block &body = region.front();
  for (auto [arg, v] : llvm::zip_equal(body.getArguments(), args))
    map.map(arg, v);
  // Values from above: constants are cloned where used.
  auto lookup = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v))
      return m;
    Operation *def = v.getDefiningOp();
    assert(def && matchPattern(v, m_Constant()) &&
           "checkModifierRegionForKernel admits constants and arguments");
    Operation *c = b.clone(*def);
    map.map(def->getResults(), c->getResults());
    return map.lookup(v);
  };
  for (Operation &op : body.without_terminator()) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      auto arg = cast<BlockArgument>(extract.getTensor());
      RankedTensorType ty = extract.getTensor().getType();
      // Row-major linear index of the static shape.
      Value lin = kb.idx(0);
      for (auto [d, index] : llvm::enumerate(extract.getIndices()))
        lin = kb.add(kb.mul(lin, kb.idx(ty.getDimSize(d))), lookup(index));
      Value v = memref::LoadOp::create(b, kb.loc, captures.lookup(arg.getArgNumber()),
                                       ValueRange{lin});
      if (ty.getElementType().isInteger(1))
        v = arith::TruncIOp::create(b, kb.loc, b.getI1Type(), v);
      map.map(extract.getResult(), v);
      continue;
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      auto ty = cast<RankedTensorType>(dim.getSource().getType());
      std::optional<int64_t> d = dim.getConstantIndex();
      Value size;
      if (d) {
        size = kb.idx(ty.getDimSize(*d));
      } else {
        // A runtime dim index of a static shape: select among the sizes.
        size = kb.idx(0);
        Value di = lookup(dim.getIndex());
        for (int64_t k = 0; k < ty.getRank(); ++k)
          size = arith::SelectOp::create(
              b, kb.loc, kb.cmp(arith::CmpIPredicate::eq, di, kb.idx(k)),
              kb.idx(ty.getDimSize(k)), size);
      }
      map.map(dim.getResult(), size);
      continue;
    }
    for (Value operand : op.getOperands())
      (void)lookup(operand);
    // math.tanh with afn: the MUFU's tanh.approx (as the built-in softcap);
    // without it, libdevice's __nv_tanhf through convert-gpu-to-nvvm.
    if (auto tanh = dyn_cast<math::TanhOp>(op);
        tanh && tanh.getType().isF32() &&
        bitEnumContainsAll(tanh.getFastmath(), arith::FastMathFlags::afn)) {
      map.map(tanh.getResult(), kb.tanhApprox(map.lookup(tanh.getOperand())));
      continue;
    }
    b.clone(op, map);
  }
  return lookup(body.getTerminator()->getOperand(0));
}

Value KernelScoreModifiers::apply(Value s, const Row &r, Value col) const {
  if (spec.empty())
    return s;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value j = arith::MinSIOp::create(b, loc, col, kb.sub(nk, kb.idx(1)));
  if (spec.softcap) {
    // softcap * tanh(s / softcap), tanh on the MUFU (FlashAttention's
    // choice; docs/Attention.md gives its error).
    Value cap = kb.f32(*spec.softcap);
    Value t = kb.tanhApprox(
        arith::MulFOp::create(b, loc, s, kb.f32(1.0 / *spec.softcap)));
    s = arith::MulFOp::create(b, loc, cap, t);
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
  if (spec.maskMod) {
    Value k = inlineRegion(*spec.maskMod, {batch, head, r.i, j});
    keep = keep ? arith::AndIOp::create(b, loc, keep, k).getResult() : k;
  }
  if (keep)
    s = arith::SelectOp::create(
        b, loc, keep, s,
        kb.f32(-std::numeric_limits<double>::infinity()));
  return s;
}
