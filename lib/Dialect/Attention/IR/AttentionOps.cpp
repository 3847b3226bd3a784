//===- AttentionOps.cpp - fa dialect ops ----------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `-> T` or `-> (T, Tlse)`: the second form names the optional lse result.
static ParseResult parseResultTypes(OpAsmParser &parser, Type &outType,
                                    Type &lseType) {
  if (succeeded(parser.parseOptionalLParen())) {
    if (parser.parseType(outType) || parser.parseComma() ||
        parser.parseType(lseType) || parser.parseRParen())
      return failure();
    return success();
  }
  return parser.parseType(outType);
}

static void printResultTypes(OpAsmPrinter &printer, Operation *, Type outType,
                             Type lseType) {
  if (!lseType) {
    printer << outType;
    return;
  }
  printer << '(' << outType << ", " << lseType << ')';
}

/// The end of the descale clause: `%vd)` for three f32 scalars (the
/// per-tensor syntax), `%vd : T_qd, T_kd, T_vd)` for tensors.
static ParseResult
parseLastDescale(OpAsmParser &parser,
                 std::optional<OpAsmParser::UnresolvedOperand> &vd,
                 Type &qdType, Type &kdType, Type &vdType) {
  OpAsmParser::UnresolvedOperand operand;
  if (parser.parseOperand(operand))
    return failure();
  vd = operand;
  if (succeeded(parser.parseOptionalColon())) {
    if (parser.parseType(qdType) || parser.parseComma() ||
        parser.parseType(kdType) || parser.parseComma() ||
        parser.parseType(vdType))
      return failure();
  } else {
    qdType = kdType = vdType = parser.getBuilder().getF32Type();
  }
  return parser.parseRParen();
}

static void printLastDescale(OpAsmPrinter &printer, Operation *, Value vd,
                             Type qdType, Type kdType, Type vdType) {
  printer << vd;
  if (!(qdType.isF32() && kdType.isF32() && vdType.isF32()))
    printer << " : " << qdType << ", " << kdType << ", " << vdType;
  printer << ")";
}

//===----------------------------------------------------------------------===//
// Modifier regions (score_mod, mask_mod)
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kModifierNames[] = {"score_mod", "mask_mod"};
static constexpr StringLiteral kGradModifierNames[] = {"score_mod", "mask_mod",
                                                       "score_mod_grad"};

/// `region` (named `name`) is empty, or one block with arguments `argTypes`
/// ending in an fa.yield of `yieldTypes`, and no op in it (nested ones
/// included) has memory effects.
static LogicalResult verifyModifierRegion(Operation *op, Region *region,
                                          StringRef name,
                                          ArrayRef<Type> argTypes,
                                          ArrayRef<Type> yieldTypes) {
  if (!region)
    return success();
  Block &block = region->front();
  // "(f32, index)": types unquoted, as written in the region.
  auto typeList = [](TypeRange types) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "(";
    llvm::interleaveComma(types, os, [&](Type t) { t.print(os); });
    os << ")";
    return text;
  };
  if (!llvm::equal(block.getArgumentTypes(), argTypes)) {
    std::string want = typeList(argTypes);
    std::string got = typeList(block.getArgumentTypes());
    return op->emitOpError() << "the " << name
                             << " region must have the block arguments "
                             << want << ", got " << got;
  }
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError() << "the " << name
                             << " region must end in fa.yield";
  if (!llvm::equal(yield.getValues().getTypes(), yieldTypes)) {
    std::string want = typeList(yieldTypes);
    std::string got = typeList(yield.getValues().getTypes());
    // "one f32" for a single value, "(f32, f32)" for more.
    if (yieldTypes.size() == 1)
      want = "one " + StringRef(want).drop_front().drop_back().str();
    return op->emitOpError() << "the " << name << " region must yield "
                             << want << ", got " << got;
  }
  // Post-order: the innermost offending op is named.
  Operation *effectful = nullptr, *nestedFa = nullptr;
  region->walk([&](Operation *nested) {
    if (isa_and_present<FADialect>(nested->getDialect()) &&
        !isa<YieldOp>(nested)) {
      nestedFa = nested;
      return WalkResult::interrupt();
    }
    if (isMemoryEffectFree(nested))
      return WalkResult::advance();
    effectful = nested;
    return WalkResult::interrupt();
  });
  if (nestedFa)
    return op->emitOpError() << "the " << name << " region must not contain '"
                             << nestedFa->getName()
                             << "' (the region is inlined per score)";
  if (effectful)
    return op->emitOpError()
           << "the " << name << " region must be free of side effects: '"
           << effectful->getName() << "' may read or write memory";
  return success();
}

/// Both modifier regions of `op` (fa.attention or fa.online_attention).
template <typename OpT>
static LogicalResult verifyModifierRegions(OpT op) {
  if (op->getNumRegions() != 0 && op->getNumRegions() != 2)
    return op.emitOpError() << "must have no modifier region, or two "
                               "(score_mod, mask_mod; an absent one empty), got "
                            << op->getNumRegions();
  Builder b(op.getContext());
  Type index = b.getIndexType();
  return failure(
      failed(verifyModifierRegion(op, op.getScoreMod(), "score_mod",
                                  {b.getF32Type(), index, index, index, index},
                                  b.getF32Type())) ||
      failed(verifyModifierRegion(op, op.getMaskMod(), "mask_mod",
                                  {index, index, index, index},
                                  b.getI1Type())));
}

/// What score_mod_grad yields: t and dt/ds (f32), then per capture-gradient
/// term its coefficient (f32) and the capture's indices (index each). A
/// term naming no grad_captures position is left to the verifier's message.
static SmallVector<Type> getScoreModGradYieldTypes(AttentionGradOp op) {
  Builder b(op.getContext());
  SmallVector<Type> types = {b.getF32Type(), b.getF32Type()};
  OperandRange captures = op.getGradCaptures();
  for (int64_t term : op.getCaptureGradTerms().value_or(ArrayRef<int64_t>())) {
    if (term < 0 || term >= static_cast<int64_t>(captures.size()))
      continue;
    types.push_back(b.getF32Type());
    types.append(cast<RankedTensorType>(captures[term].getType()).getRank(),
                 b.getIndexType());
  }
  return types;
}

/// The regions of fa.attention_grad: score_mod and mask_mod as in the
/// forward, and score_mod_grad (s, b, h, i, j) -> (t, dt/ds), which needs a
/// score_mod (it is that region's derivative).
static LogicalResult verifyGradModifierRegions(AttentionGradOp op) {
  if (op->getNumRegions() != 0 && op->getNumRegions() != 3)
    return op.emitOpError() << "must have no modifier region, or three "
                               "(score_mod, mask_mod, score_mod_grad; an "
                               "absent one empty), got "
                            << op->getNumRegions();
  Builder b(op.getContext());
  Type index = b.getIndexType(), f32 = b.getF32Type();
  SmallVector<Type> scoreArgs = {f32, index, index, index, index};
  if (failed(verifyModifierRegion(op, op.getScoreMod(), "score_mod", scoreArgs,
                                  f32)) ||
      failed(verifyModifierRegion(op, op.getMaskMod(), "mask_mod",
                                  {index, index, index, index},
                                  b.getI1Type())) ||
      failed(verifyModifierRegion(op, op.getScoreModGrad(), "score_mod_grad",
                                  scoreArgs, getScoreModGradYieldTypes(op))))
    return failure();
  if (op.getScoreModGrad() && !op.getScoreMod())
    return op.emitOpError() << "a score_mod_grad region needs the score_mod "
                               "region it is the derivative of";
  return success();
}

/// Whether `r` is `ancestor` or nested in it. (Region::isAncestor asks a
/// region for its parent, which asserts on the parser's regions that no op
/// holds yet.)
static bool isNestedIn(Region *r, Region *ancestor) {
  for (; r;
       r = r->getParentOp() ? r->getParentOp()->getParentRegion() : nullptr)
    if (r == ancestor)
      return true;
  return false;
}

/// The positions in `regions` of the first region with an op that uses a
/// value defined in another of them, and of that other region.
///
/// The parser makes such a use out of a name that one region uses before a
/// later sibling defines it (its forward reference resolves to the sibling's
/// value). The verifier would reject it, but if parsing fails first the
/// regions are destroyed one after the other, and the first one destroyed
/// frees a value that an op of another still uses (a heap corruption, found
/// by fa-fuzz).
static std::optional<std::pair<size_t, size_t>>
findSiblingRegionUse(ArrayRef<std::unique_ptr<Region>> regions) {
  for (auto [user, userRegion] : llvm::enumerate(regions)) {
    std::optional<size_t> definer;
    userRegion->walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        // Null for a forward reference not resolved yet.
        Region *def = v.getParentRegion();
        for (auto [other, otherRegion] : llvm::enumerate(regions))
          if (other != user && isNestedIn(def, otherRegion.get())) {
            definer = other;
            return WalkResult::interrupt();
          }
      }
      return WalkResult::advance();
    });
    if (definer)
      return std::make_pair(user, *definer);
  }
  return std::nullopt;
}

/// `[name0 {...}] [name1 {...}] ... :`: the modifier regions in the order of
/// `names`, then the colon before the types (printed here so that an op
/// without regions prints exactly as before). An op has no modifier region,
/// or one per name, the absent ones empty. A region may not use a value of
/// another (findSiblingRegionUse).
static ParseResult
parseNamedRegionsAndColon(OpAsmParser &parser,
                          SmallVectorImpl<std::unique_ptr<Region>> &regions,
                          ArrayRef<StringLiteral> names) {
  SmallVector<std::unique_ptr<Region>> parsed;
  // On failure the regions die in reverse order: unlinked first, as a region
  // that failed to parse may hold a sibling's forward reference too.
  auto fail = [&]() -> ParseResult {
    for (std::unique_ptr<Region> &region : parsed)
      region->dropAllReferences();
    return failure();
  };
  SMLoc loc = parser.getCurrentLocation();
  bool any = false;
  for (StringLiteral keyword : names) {
    parsed.push_back(std::make_unique<Region>());
    if (failed(parser.parseOptionalKeyword(keyword)))
      continue;
    if (parser.parseRegion(*parsed.back()))
      return fail();
    any = true;
  }
  if (auto sibling = findSiblingRegionUse(parsed)) {
    parser.emitError(loc)
        << "the " << names[sibling->first]
        << " region uses a value defined in the " << names[sibling->second]
        << " region (a region sees its own arguments and values defined "
           "above the op)";
    return fail();
  }
  if (any)
    for (std::unique_ptr<Region> &region : parsed)
      regions.push_back(std::move(region));
  return parser.parseColon();
}

static void printNamedRegionsAndColon(OpAsmPrinter &printer,
                                      MutableArrayRef<Region> regions,
                                      ArrayRef<StringLiteral> names) {
  if (regions.size() == names.size())
    for (auto [keyword, region] : llvm::zip(names, regions)) {
      if (region.empty())
        continue;
      printer << keyword << ' ';
      printer.printRegion(region);
      printer << ' ';
    }
  printer << ':';
}

/// fa.attention, fa.online_attention: `[score_mod {...}] [mask_mod {...}] :`.
static ParseResult
parseModifiersAndColon(OpAsmParser &parser,
                       SmallVectorImpl<std::unique_ptr<Region>> &regions) {
  return parseNamedRegionsAndColon(parser, regions, kModifierNames);
}

static void printModifiersAndColon(OpAsmPrinter &printer, Operation *,
                                   MutableArrayRef<Region> regions) {
  printNamedRegionsAndColon(printer, regions, kModifierNames);
}

/// fa.attention_grad: `[score_mod {...}] [mask_mod {...}]
/// [score_mod_grad {...}] :`.
static ParseResult
parseGradModifiersAndColon(OpAsmParser &parser,
                           SmallVectorImpl<std::unique_ptr<Region>> &regions) {
  return parseNamedRegionsAndColon(parser, regions, kGradModifierNames);
}

static void printGradModifiersAndColon(OpAsmPrinter &printer, Operation *,
                                       MutableArrayRef<Region> regions) {
  printNamedRegionsAndColon(printer, regions, kGradModifierNames);
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

void AttentionOp::build(OpBuilder &builder, OperationState &state,
                        Type outType, Value query, Value key, Value value,
                        bool causal) {
  build(builder, state, outType, /*lse=*/Type(), query, key, value,
        /*mask=*/Value(), /*q_descale=*/Value(), /*k_descale=*/Value(),
        /*v_descale=*/Value(), /*diagonal=*/Value(), /*kv_lens=*/Value(),
        /*pages=*/Value(), /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
        /*scale=*/FloatAttr(), causal,
        /*window=*/DenseI64ArrayAttr(), /*softcap=*/FloatAttr(),
        /*descale_block=*/DenseI64ArrayAttr(), /*modifiersCount=*/0);
}

double AttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t headDim = getQueryType().getDimSize(3);
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

std::pair<int64_t, int64_t> AttentionOp::getEffectiveWindow() {
  int64_t left = -1, right = -1;
  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    left = (*window)[0];
    right = (*window)[1];
  }
  if (getCausal())
    right = 0;
  return {left, right};
}

bool AttentionOp::isMaskDimBroadcast(unsigned dim) {
  assert(getMask() && dim < 3 && "a batch, head or row dim of the mask");
  return cast<RankedTensorType>(getMask().getType()).getDimSize(dim) == 1 &&
         getQueryType().getDimSize(dim) != 1;
}

int64_t AttentionOp::getStaticKeyCapacity() {
  int64_t rows = getKeyType().getDimSize(2);
  if (!isPaged())
    return rows;
  int64_t pagesPerSequence =
      cast<RankedTensorType>(getPages().getType()).getDimSize(1);
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(pagesPerSequence))
    return ShapedType::kDynamic;
  return pagesPerSequence * rows;
}

OpFoldResult AttentionOp::getMixedKeyCapacity(OpBuilder &b, Location loc) {
  int64_t capacity = getStaticKeyCapacity();
  if (!ShapedType::isDynamic(capacity))
    return b.getIndexAttr(capacity);
  if (!isPaged())
    return tensor::getMixedSize(b, loc, getKey(), 2);
  // M * S with a dynamic M (S is static: the verifier requires it).
  Value pagesPerSequence = tensor::DimOp::create(b, loc, getPages(), 1);
  Value pageSize = arith::ConstantIndexOp::create(b, loc, getPageSize());
  return arith::MulIOp::create(b, loc, pagesPerSequence, pageSize).getResult();
}

Value AttentionOp::getKeyCapacity(OpBuilder &b, Location loc) {
  return getValueOrCreateConstantIndexOp(b, loc, getMixedKeyCapacity(b, loc));
}

Value AttentionOp::getSequenceKeyLength(OpBuilder &b, Location loc,
                                        Value batch, Value capacity) {
  assert(hasKVLens() && "only ops with kv_lens have per-sequence lengths");
  Value len = tensor::ExtractOp::create(b, loc, getKvLens(), batch);
  Value index =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), len).getResult();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, index, zero), capacity);
}

LogicalResult AttentionOp::reifyResultShapes(
    OpBuilder &builder, ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  // out: [B, Hq, Nq, Dv] and lse: [B, Hq, Nq], all but Dv from the query.
  SmallVector<OpFoldResult> rows;
  for (int64_t dim = 0; dim < 3; ++dim)
    rows.push_back(tensor::getMixedSize(builder, getLoc(), getQuery(), dim));
  SmallVector<OpFoldResult> out(rows);
  out.push_back(builder.getIndexAttr(getOutType().getDimSize(3)));
  reifiedReturnShapes.push_back(out);
  if (getLse())
    reifiedReturnShapes.push_back(rows);
  return success();
}

namespace {
/// The shape rules both verifiers check, reported on `op`.
template <typename OpT>
struct ShapeVerifier {
  OpT op;

  LogicalResult checkRank(StringRef name, RankedTensorType type, int64_t rank,
                          StringRef layout) {
    if (type.getRank() == rank)
      return success();
    return op.emitOpError() << name << " must be a rank-" << rank
                            << " tensor " << layout << ", got " << type;
  }

  /// Two dims that must be equal when both are static.
  LogicalResult checkSameDim(StringRef what, StringRef lhsName, int64_t lhs,
                             StringRef rhsName, int64_t rhs) {
    if (ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs) || lhs == rhs)
      return success();
    return op.emitOpError() << what << " of " << lhsName << " (" << lhs
                            << ") does not match " << rhsName << " (" << rhs
                            << ")";
  }

  /// The mask operand (when present): [B or 1, Hq or 1, Nq or 1, keys] of
  /// i1 (keep where true) or f16 / bf16 / f32 (added), `keyLength` the keys
  /// of `keyName`.
  LogicalResult checkMask(Value mask, RankedTensorType q, StringRef keyName,
                          int64_t keyLength);

  /// varlen: exactly the two [B + 1] x i32 offsets (cu_seqlens_q,
  /// cu_seqlens_k, none null), and query, key and value holding the packed
  /// sequences in batch 1.
  LogicalResult checkVarlenOffsets(ArrayRef<Value> cuSeqlens) {
    if (cuSeqlens.size() != 2 || !cuSeqlens[0] || !cuSeqlens[1])
      return op.emitOpError() << "varlen needs both offset tensors, "
                                 "varlen(%cu_seqlens_q, %cu_seqlens_k : ...)";
    Value cq = cuSeqlens[0], ck = cuSeqlens[1];
    int64_t offsets = ShapedType::kDynamic;
    for (auto [value, name] :
         {std::pair{cq, StringRef("cu_seqlens_q")}, {ck, "cu_seqlens_k"}}) {
      auto type = cast<RankedTensorType>(value.getType());
      if (!type.getElementType().isInteger(32))
        return op.emitOpError() << name << " element type must be i32, got "
                                << type.getElementType();
      if (failed(checkRank(name, type, 1, "[B + 1]")))
        return failure();
      int64_t size = type.getDimSize(0);
      if (size == 0)
        return op.emitOpError() << name
                                << " must hold at least one offset "
                                   "([B + 1], B >= 0)";
      if (failed(checkSameDim("offset count", name, size, "cu_seqlens_q",
                              offsets)))
        return failure();
      offsets = size;
    }
    static constexpr StringRef kOperands[] = {"query", "key", "value"};
    Value tensors[] = {op.getQuery(), op.getKey(), op.getValue()};
    for (auto [name, value] : llvm::zip(kOperands, tensors)) {
      int64_t batch = cast<RankedTensorType>(value.getType()).getDimSize(0);
      if (batch != 1)
        return op.emitOpError()
               << "with varlen the " << name
               << " holds the packed sequences in batch 1: its batch size "
                  "must be 1, got "
               << (ShapedType::isDynamic(batch) ? std::string("?")
                                                : std::to_string(batch));
    }
    return success();
  }

  /// Grouped-query attention: each of the `hkv` K/V heads serves hq / hkv
  /// query heads.
  LogicalResult checkHeadGrouping(int64_t hq, int64_t hkv) {
    if (!ShapedType::isDynamic(hkv) && hkv == 0)
      return op.emitOpError() << "key/value head count must be positive";
    if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
        hq % hkv != 0)
      return op.emitOpError() << "query head count (" << hq
                              << ") must be a multiple of the key/value head "
                                 "count ("
                              << hkv << ")";
    return success();
  }
};

/// Checks the rules of one op and reports the first violation on it.
struct AttentionVerifier : ShapeVerifier<AttentionOp> {

  LogicalResult verify();
  LogicalResult verifyKeyValueDims();
  LogicalResult verifyKVLensAndPages();
  LogicalResult verifyMask();
  LogicalResult verifyDescales(Type elt);
  LogicalResult verifyVarlen();
};
} // namespace

static bool isInputElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || isa<Float8E4M3FNType>(t);
}
static bool isOutputElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32();
}

/// scale, softcap and window, shared by fa.attention and fa.attention_grad.
static LogicalResult verifyScoreAttributes(Operation *op,
                                           std::optional<APFloat> scale,
                                           std::optional<APFloat> softcap,
                                           std::optional<ArrayRef<int64_t>> window,
                                           bool causal) {
  if (scale && !scale->isFinite())
    return op->emitOpError() << "scale must be finite";
  if (softcap)
    if (!softcap->isFinite() || !(softcap->convertToDouble() > 0.0))
      return op->emitOpError() << "softcap must be a finite value > 0, got "
                               << softcap->convertToDouble();
  if (window) {
    if (window->size() != 2)
      return op->emitOpError()
             << "window must hold two values [left, right], got "
             << window->size();
    for (int64_t bound : *window)
      if (bound < -1)
        return op->emitOpError()
               << "window bounds must be >= 0, or -1 for unbounded, got "
               << bound;
    if (causal && (*window)[1] > 0)
      return op->emitOpError() << "window right bound must be 0 or -1 with "
                                  "causal (causal sees no key after the "
                                  "diagonal), got "
                               << (*window)[1];
  }
  return success();
}

LogicalResult AttentionVerifier::verify() {
  // Attributes are the op's own or dialect-prefixed discardable ones: a
  // misspelled `casual` must not silently mean "not causal".
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    if (!llvm::is_contained(AttentionOp::getAttributeNames(), name) &&
        !name.contains('.'))
      return op.emitOpError() << "unknown attribute '" << name << "'";
  }

  RankedTensorType q = op.getQueryType(), k = op.getKeyType(),
                   v = op.getValueType(), o = op.getOutType();
  if (failed(checkRank("query", q, 4, "[B, Hq, Nq, D]")) ||
      failed(checkRank("key", k, 4, "[B, Hkv, Nk, D]")) ||
      failed(checkRank("value", v, 4, "[B, Hkv, Nk, Dv]")) ||
      failed(checkRank("out", o, 4, "[B, Hq, Nq, Dv]")))
    return failure();

  // Element types.
  Type elt = q.getElementType();
  if (!isInputElementType(elt))
    return op.emitOpError()
           << "query element type must be f16, bf16, f32 or f8E4M3FN, got "
           << elt;
  if (k.getElementType() != elt || v.getElementType() != elt)
    return op.emitOpError()
           << "key and value element types must match the query's (" << elt
           << "), got " << k.getElementType() << " and " << v.getElementType();
  if (!isOutputElementType(o.getElementType()))
    return op.emitOpError() << "out element type must be f16, bf16 or f32, got "
                            << o.getElementType();

  // Head dims are static: they size register tiles and MMA shapes.
  if (q.isDynamicDim(3) || k.isDynamicDim(3))
    return op.emitOpError() << "head dim D of query and key must be static";
  if (v.isDynamicDim(3))
    return op.emitOpError() << "head dim Dv of value must be static";

  if (failed(verifyKVLensAndPages()) || failed(verifyKeyValueDims()))
    return failure();
  SmallVector<int64_t> expectedOut = {q.getDimSize(0), q.getDimSize(1),
                                   q.getDimSize(2), v.getDimSize(3)};
  // A named array: the backing array of an ArrayRef{...} in the range-for
  // init dies before the loop body runs (ASan: stack-use-after-scope).
  static constexpr StringRef kDimNames[] = {"batch size", "head count",
                                            "sequence length", "head dim"};
  for (auto [i, name] : llvm::enumerate(kDimNames))
    if (failed(checkSameDim(name, "out", o.getDimSize(i),
                            i == 3 ? "value" : "query", expectedOut[i])))
      return failure();

  // Grouped-query attention: each K/V head serves Hq / Hkv query heads.
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (failed(checkHeadGrouping(hq, hkv)))
    return failure();

  // Attributes.
  if (failed(verifyScoreAttributes(op, op.getScale(), op.getSoftcap(),
                                   op.getWindow(), op.getCausal())))
    return failure();

  // The diagonal override only moves the causal/window band.
  if (op.getDiagonal() && !op.hasPositionalMask())
    return op.emitOpError() << "diagonal(...) needs causal or a bounded window "
                               "(it moves their band of visible keys)";

  if (failed(verifyMask()) || failed(verifyDescales(elt)) ||
      failed(verifyVarlen()) || failed(verifyModifierRegions(op)))
    return failure();

  // Optional log-sum-exp: [B, Hq, Nq] in f32.
  if (Value lse = op.getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (failed(checkRank("lse", l, 3, "[B, Hq, Nq]")))
      return failure();
    if (!l.getElementType().isF32())
      return op.emitOpError() << "lse element type must be f32, got "
                              << l.getElementType();
    for (auto [i, name] :
         llvm::enumerate(ArrayRef<StringRef>(kDimNames).take_front(3)))
      if (failed(checkSameDim(name, "lse", l.getDimSize(i), "query",
                              q.getDimSize(i))))
        return failure();
  }
  return success();
}

/// Key and value against the query and each other. Without pages they are
/// [B, Hkv, Nk, D|Dv]; with pages they are pools [P, Hkv, S, D|Dv] whose dim 0
/// is no batch, so it is checked against the other pool instead.
LogicalResult AttentionVerifier::verifyKeyValueDims() {
  RankedTensorType q = op.getQueryType(), k = op.getKeyType(),
                   v = op.getValueType();
  if (op.isPaged()) {
    if (failed(checkSameDim("page count", "value", v.getDimSize(0), "key",
                            k.getDimSize(0))) ||
        failed(checkSameDim("head count", "value", v.getDimSize(1), "key",
                            k.getDimSize(1))) ||
        failed(checkSameDim("page size", "value", v.getDimSize(2), "key",
                            k.getDimSize(2))))
      return failure();
  } else if (failed(checkSameDim("batch size", "key", k.getDimSize(0), "query",
                                 q.getDimSize(0))) ||
             failed(checkSameDim("batch size", "value", v.getDimSize(0),
                                 "query", q.getDimSize(0))) ||
             failed(checkSameDim("head count", "value", v.getDimSize(1), "key",
                                 k.getDimSize(1))) ||
             failed(checkSameDim("sequence length", "value", v.getDimSize(2),
                                 "key", k.getDimSize(2)))) {
    return failure();
  }
  return checkSameDim("head dim", "key", k.getDimSize(3), "query",
                      q.getDimSize(3));
}

/// kv_lens: [B] x i32. pages: [B, M] x i32, with a static page size S (key
/// dim 2) that is a multiple of 16, the row granularity of the GPU kernels'
/// tiles, so that no key tile straddles two pages.
LogicalResult AttentionVerifier::verifyKVLensAndPages() {
  int64_t batch = op.getQueryType().getDimSize(0);
  auto checkTable = [&](Value table, StringRef name, int64_t rank,
                        StringRef layout) -> LogicalResult {
    auto type = cast<RankedTensorType>(table.getType());
    if (!type.getElementType().isInteger(32))
      return op.emitOpError() << name << " element type must be i32, got "
                              << type.getElementType();
    if (failed(checkRank(name, type, rank, layout)))
      return failure();
    return checkSameDim("batch size", name, type.getDimSize(0), "query",
                        batch);
  };
  if (op.hasKVLens() &&
      failed(checkTable(op.getKvLens(), "kv_lens", 1, "[B]")))
    return failure();
  if (op.isPaged()) {
    if (failed(checkTable(op.getPages(), "pages", 2, "[B, M]")))
      return failure();
    int64_t pageSize = op.getKeyType().getDimSize(2);
    if (ShapedType::isDynamic(pageSize))
      return op.emitOpError() << "page size S (key dim 2) must be static with "
                                 "pages";
    if (pageSize <= 0 || pageSize % 16 != 0)
      return op.emitOpError() << "page size S (key dim 2) must be a positive "
                                 "multiple of 16, got "
                              << pageSize;
    // Page ids are clamped to [0, P - 1]: there must be a page to read.
    if (op.getKeyType().getDimSize(0) == 0)
      return op.emitOpError() << "the page pool (key dim 0) must hold at least "
                                 "one page";
  }
  if ((op.hasKVLens() || op.isPaged()) && op.getQDescale())
    return op.emitOpError() << "fp8 descales with kv_lens or pages are not "
                               "supported";
  return success();
}

/// varlen: two [B + 1] x i32 offset tensors; query, key and value of batch
/// 1; none of the clauses whose meaning is per padded batch or absolute row.
LogicalResult AttentionVerifier::verifyVarlen() {
  Value cq = op.getCuSeqlensQ(), ck = op.getCuSeqlensK();
  if (!cq && !ck)
    return success();
  if (failed(checkVarlenOffsets({cq, ck})))
    return failure();
  StringRef other = op.getMask()       ? "a mask operand"
                    : op.getDiagonal() ? "diagonal(...)"
                    : op.hasKVLens()   ? "kv_lens(...)"
                    : op.isPaged()     ? "pages(...)"
                    : op.getQDescale() ? "fp8 inputs"
                                       : "";
  if (!other.empty())
    return op.emitOpError() << "varlen with " << other << " is not supported";
  return success();
}

/// Mask: [B or 1, Hq or 1, Nq or 1, Ncap] (Ncap = Nk without pages).
LogicalResult AttentionVerifier::verifyMask() {
  return checkMask(op.getMask(), op.getQueryType(),
                   op.isPaged() ? "key capacity M * S" : "key",
                   op.getStaticKeyCapacity());
}

template <typename OpT>
LogicalResult ShapeVerifier<OpT>::checkMask(Value mask, RankedTensorType q,
                                            StringRef keyName,
                                            int64_t keyLength) {
  if (!mask)
    return success();
  auto m = cast<RankedTensorType>(mask.getType());
  if (failed(checkRank("mask", m, 4, "[B or 1, Hq or 1, Nq or 1, Nk]")))
    return failure();
  Type me = m.getElementType();
  if (!(me.isInteger(1) || me.isF16() || me.isBF16() || me.isF32()))
    return op.emitOpError() << "mask element type must be i1 (keep where "
                               "true) or f16, bf16, f32 (added), got "
                            << me;
  auto checkBroadcast = [&](unsigned dim, StringRef name) -> LogicalResult {
    int64_t size = m.getDimSize(dim), full = q.getDimSize(dim);
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(full) ||
        size == 1 || size == full)
      return success();
    return op.emitOpError()
           << "mask dim " << dim << " (" << size << ") must be 1 or the "
           << name << " (" << full << ")";
  };
  return failure(failed(checkBroadcast(0, "batch size")) ||
                 failed(checkBroadcast(1, "query head count")) ||
                 failed(checkBroadcast(2, "query length")) ||
                 failed(checkSameDim("key length", "mask", m.getDimSize(3),
                                     keyName, keyLength)));
}

/// FP8 descale factors: all three with f8E4M3FN, none otherwise; f32
/// scalars, or f32 tensors per (batch, head) or per block of rows.
LogicalResult AttentionVerifier::verifyDescales(Type elt) {
  Value descales[3] = {op.getQDescale(), op.getKDescale(), op.getVDescale()};
  int numDescales = llvm::count_if(descales, [](Value v) { return !!v; });
  std::optional<ArrayRef<int64_t>> block = op.getDescaleBlock();
  if (!isa<Float8E4M3FNType>(elt)) {
    if (numDescales != 0)
      return op.emitOpError() << "descale factors are only allowed with "
                                 "f8E4M3FN inputs, got "
                              << elt;
    if (block)
      return op.emitOpError() << "descale_block is only allowed with per-block "
                                 "(rank-3) descales";
    return success();
  }
  if (numDescales != 3)
    return op.emitOpError() << "f8E4M3FN inputs need the three descale "
                               "factors descale(%q, %k, %v)";

  static constexpr StringRef kNames[] = {"q_descale", "k_descale",
                                         "v_descale"};
  int64_t rank = -1;
  for (auto [name, value] : llvm::zip(kNames, descales)) {
    Type type = value.getType();
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!type.isF32() && !(tensor && tensor.getElementType().isF32()))
      return op.emitOpError() << name << " must be an f32 scalar or a ranked "
                                         "tensor of f32, got "
                              << type;
    int64_t r = tensor ? tensor.getRank() : 0;
    if (tensor && r != 2 && r != 3)
      return op.emitOpError()
             << name << " must be rank 2 (per head: [B, H]) or rank 3 (per "
                        "block of rows: [B, H, NB]), got "
             << type;
    if (rank >= 0 && r != rank)
      return op.emitOpError()
             << "the three descales must have one granularity (all f32 "
                "scalars, all rank 2 or all rank 3), got "
             << descales[0].getType() << ", " << descales[1].getType()
             << " and " << descales[2].getType();
    rank = r;
  }

  if (rank != 3) {
    if (block)
      return op.emitOpError() << "descale_block is only allowed with per-block "
                                 "(rank-3) descales";
    if (rank == 0)
      return success();
  } else {
    if (!block)
      return op.emitOpError()
             << "per-block descales need descale_block = array<i64: block_q, "
                "block_kv>";
    if (block->size() != 2)
      return op.emitOpError() << "descale_block must hold two values "
                                 "[block_q, block_kv], got "
                              << block->size();
    if ((*block)[0] <= 0 || (*block)[1] <= 0)
      return op.emitOpError() << "descale_block values must be positive, got ["
                              << (*block)[0] << ", " << (*block)[1] << "]";
  }

  // Dims: [B, H(, NB)], H = Hq for q, Hkv for k and v.
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  auto numBlocks = [](int64_t n, int64_t blockSize) {
    return ShapedType::isDynamic(n) ? ShapedType::kDynamic
                                    : llvm::divideCeil(n, blockSize);
  };
  for (auto [i, name, value] : llvm::enumerate(kNames, descales)) {
    auto t = cast<RankedTensorType>(value.getType());
    RankedTensorType src = i == 0 ? q : k;
    StringRef srcName = i == 0 ? "query" : "key";
    if (failed(checkSameDim("batch size", name, t.getDimSize(0), srcName,
                            src.getDimSize(0))) ||
        failed(checkSameDim("head count", name, t.getDimSize(1), srcName,
                            src.getDimSize(1))))
      return failure();
    if (rank == 3) {
      int64_t blockSize = (*block)[i == 0 ? 0 : 1];
      int64_t expected = numBlocks(src.getDimSize(2), blockSize);
      int64_t got = t.getDimSize(2);
      if (!ShapedType::isDynamic(expected) && !ShapedType::isDynamic(got) &&
          expected != got)
        return op.emitOpError()
               << "block count of " << name << " (" << got
               << ") does not match ceil(" << srcName << " length "
               << src.getDimSize(2) << " / " << blockSize << ") = " << expected;
    }
  }
  return success();
}

LogicalResult AttentionOp::verify() { return AttentionVerifier{{*this}}.verify(); }


//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

double AttentionGradOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(getQueryType().getDimSize(3)));
}

std::pair<int64_t, int64_t> AttentionGradOp::getEffectiveWindow() {
  int64_t left = -1, right = -1;
  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    left = (*window)[0];
    right = (*window)[1];
  }
  if (getCausal())
    right = 0;
  return {left, right};
}

namespace {
/// Checks the rules of one fa.attention_grad and reports the first violation.
struct AttentionGradVerifier : ShapeVerifier<AttentionGradOp> {

  /// `name` must have the dims of `expected` (each compared when static).
  LogicalResult checkDims(StringRef name, RankedTensorType type,
                          ArrayRef<int64_t> expected,
                          ArrayRef<StringRef> expectedFrom) {
    static constexpr StringRef kDimNames[] = {"batch size", "head count",
                                              "sequence length", "head dim"};
    for (auto [i, size] : llvm::enumerate(expected))
      if (failed(checkSameDim(kDimNames[i], name, type.getDimSize(i),
                              expectedFrom[i], size)))
        return failure();
    return success();
  }

  LogicalResult verify();
  /// grad_captures, their gradients and capture_grad_terms.
  LogicalResult verifyCaptureGrads();
};
} // namespace

LogicalResult AttentionGradVerifier::verify() {
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    if (!llvm::is_contained(AttentionGradOp::getAttributeNames(), name) &&
        !name.contains('.'))
      return op.emitOpError() << "unknown attribute '" << name << "'";
  }

  RankedTensorType q = op.getQueryType(), k = op.getKeyType(),
                   v = op.getValueType(), o = op.getOut().getType(),
                   lse = op.getLse().getType(), dO = op.getGradOut().getType();
  if (failed(checkRank("query", q, 4, "[B, Hq, Nq, D]")) ||
      failed(checkRank("key", k, 4, "[B, Hkv, Nk, D]")) ||
      failed(checkRank("value", v, 4, "[B, Hkv, Nk, Dv]")) ||
      failed(checkRank("out", o, 4, "[B, Hq, Nq, Dv]")) ||
      failed(checkRank("lse", lse, 3, "[B, Hq, Nq]")) ||
      failed(checkRank("grad_out", dO, 4, "[B, Hq, Nq, Dv]")))
    return failure();

  if (op.isVarlen() &&
      failed(checkVarlenOffsets(llvm::to_vector(op.getCuSeqlens()))))
    return failure();

  Type elt = q.getElementType();
  if (!isOutputElementType(elt))
    return op.emitOpError() << "query element type must be f16, bf16 or f32, got "
                            << elt;
  for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{"key", k},
                            {"value", v}, {"out", o}, {"grad_out", dO}})
    if (type.getElementType() != elt)
      return op.emitOpError() << name << " element type must match the query's ("
                              << elt << "), got " << type.getElementType();
  if (!lse.getElementType().isF32())
    return op.emitOpError() << "lse element type must be f32, got "
                            << lse.getElementType();

  if (q.isDynamicDim(3) || k.isDynamicDim(3))
    return op.emitOpError() << "head dim D of query and key must be static";
  if (v.isDynamicDim(3))
    return op.emitOpError() << "head dim Dv of value must be static";

  SmallVector<int64_t> qDims(q.getShape()), kDims(k.getShape());
  SmallVector<int64_t> vDims = {kDims[0], kDims[1], kDims[2], v.getDimSize(3)};
  SmallVector<int64_t> oDims = {qDims[0], qDims[1], qDims[2], v.getDimSize(3)};
  static constexpr StringRef kFromQuery[] = {"query", "query", "query",
                                             "query"};
  static constexpr StringRef kFromKey[] = {"query", "key", "key", "query"};
  static constexpr StringRef kFromValue[] = {"key", "key", "key", "value"};
  static constexpr StringRef kFromOut[] = {"query", "query", "query", "value"};
  if (failed(checkDims("key", k, {qDims[0], kDims[1], kDims[2], qDims[3]},
                       kFromKey)) ||
      failed(checkDims("value", v, vDims, kFromValue)) ||
      failed(checkDims("out", o, oDims, kFromOut)) ||
      failed(checkDims("grad_out", dO, oDims, kFromOut)) ||
      failed(checkDims("lse", lse, ArrayRef<int64_t>(qDims).take_front(3),
                       kFromQuery)))
    return failure();

  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (failed(checkHeadGrouping(hq, hkv)))
    return failure();
  if (failed(checkMask(op.getMask(), q, "key", k.getDimSize(2))))
    return failure();
  if (op.getMask() && op.isVarlen())
    return op.emitOpError() << "varlen with a mask operand is not supported";

  // The gradients have exactly the types of what they differentiate.
  for (auto [name, result, operand] :
       {std::tuple<StringRef, Type, Type>{"grad_query", op.getGradQuery().getType(), q},
        {"grad_key", op.getGradKey().getType(), k},
        {"grad_value", op.getGradValue().getType(), v}})
    if (result != operand)
      return op.emitOpError() << name << " type " << result
                              << " must be the type of "
                              << name.drop_front(5) << " (" << operand << ")";

  if (failed(verifyScoreAttributes(op, op.getScale(), op.getSoftcap(),
                                   op.getWindow(), op.getCausal())) ||
      failed(verifyCaptureGrads()))
    return failure();
  return verifyGradModifierRegions(op);
}

LogicalResult AttentionGradVerifier::verifyCaptureGrads() {
  OperandRange captures = op.getGradCaptures();
  ResultRange grads = op.getCaptureGrads();
  if (captures.size() != grads.size())
    return op.emitOpError()
           << "has " << captures.size() << " grad_captures but " << grads.size()
           << " capture gradient results (one per capture)";
  for (auto [pos, capture, grad] : llvm::enumerate(captures, grads)) {
    auto type = cast<RankedTensorType>(capture.getType());
    Type elt = type.getElementType();
    if (!(elt.isF16() || elt.isBF16() || elt.isF32()))
      return op.emitOpError()
             << "grad_captures #" << pos
             << " must have a float element type (f16, bf16 or f32), got "
             << elt;
    auto want = RankedTensorType::get(type.getShape(),
                                      Float32Type::get(op.getContext()));
    if (grad.getType() != want)
      return op.emitOpError()
             << "the gradient of grad_captures #" << pos << " must be " << want
             << " (its shape, f32), got " << grad.getType();
    if (llvm::is_contained(captures.take_front(pos), capture))
      return op.emitOpError()
             << "grad_captures #" << pos << " repeats an earlier capture";
  }
  if (!captures.empty() && !op.getScoreMod())
    return op.emitOpError() << "grad_captures needs the score_mod that reads "
                               "them (only score_mod's values are "
                               "differentiated)";
  if (!captures.empty() && op.isVarlen())
    return op.emitOpError() << "grad_captures with varlen is not supported";
  if (std::optional<ArrayRef<int64_t>> terms = op.getCaptureGradTerms()) {
    if (!op.getScoreModGrad())
      return op.emitOpError()
             << "capture_grad_terms describes score_mod_grad's values: it "
                "needs that region";
    for (int64_t term : *terms)
      if (term < 0 || term >= static_cast<int64_t>(captures.size()))
        return op.emitOpError()
               << "capture_grad_terms entry " << term
               << " is not a grad_captures position (there are "
               << captures.size() << ")";
  } else if (!captures.empty() && op.getScoreModGrad()) {
    return op.emitOpError()
           << "has grad_captures and a score_mod_grad without "
              "capture_grad_terms (run fa-differentiate-score-mod on the op "
              "without score_mod_grad, or list the terms the region yields)";
  }
  return success();
}

LogicalResult AttentionGradOp::verify() {
  return AttentionGradVerifier{{*this}}.verify();
}

//===----------------------------------------------------------------------===//
// OnlineAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult OnlineAttentionOp::verify() {
  auto rankIs = [&](StringRef name, Value value,
                    int64_t rank) -> LogicalResult {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == rank)
      return success();
    return emitOpError() << name << " must be a rank-" << rank
                         << " tensor, got " << type;
  };
  if (failed(rankIs("query", getQuery(), 2)) ||
      failed(rankIs("key", getKey(), 2)) ||
      failed(rankIs("value", getValue(), 2)) ||
      failed(rankIs("max", getMax(), 1)) || failed(rankIs("acc", getAcc(), 2)))
    return failure();
  if (getMask() && failed(rankIs("mask", getMask(), 2)))
    return failure();

  auto q = getQueryType(), k = cast<RankedTensorType>(getKey().getType()),
       v = cast<RankedTensorType>(getValue().getType()), acc = getAccType();
  auto m = cast<RankedTensorType>(getMax().getType());
  Type elt = q.getElementType();
  if (!isInputElementType(elt) || k.getElementType() != elt ||
      v.getElementType() != elt)
    return emitOpError() << "query, key and value must share one element type "
                            "among f16, bf16, f32, f8E4M3FN";
  if (!m.getElementType().isF32() || !acc.getElementType().isF32())
    return emitOpError() << "the running max, sum and acc must be f32";

  auto sameDim = [&](StringRef what, int64_t a, int64_t b) -> LogicalResult {
    if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
      return success();
    return emitOpError() << what << " disagree (" << a << " vs " << b << ")";
  };
  if (failed(sameDim("query and key head dims", q.getDimSize(1),
                     k.getDimSize(1))) ||
      failed(sameDim("key and value block lengths", k.getDimSize(0),
                     v.getDimSize(0))) ||
      failed(sameDim("query rows and max rows", q.getDimSize(0),
                     m.getDimSize(0))) ||
      failed(sameDim("query rows and acc rows", q.getDimSize(0),
                     acc.getDimSize(0))) ||
      failed(sameDim("value and acc head dims", v.getDimSize(1),
                     acc.getDimSize(1))) ||
      // With dynamic query rows, the state must still agree with itself.
      failed(sameDim("max rows and acc rows", m.getDimSize(0),
                     acc.getDimSize(0))))
    return failure();
  if (Value mask = getMask()) {
    auto mt = cast<RankedTensorType>(mask.getType());
    Type me = mt.getElementType();
    if (!(me.isInteger(1) || me.isF16() || me.isBF16() || me.isF32()))
      return emitOpError() << "mask element type must be i1, f16, bf16 or f32";
    // A static single row broadcasts over the query rows (a per-key mask).
    bool oneRow = mt.getDimSize(0) == 1;
    if ((!oneRow &&
         (failed(sameDim("mask rows and query rows", mt.getDimSize(0),
                         q.getDimSize(0))) ||
          // With dynamic query rows, the other operands decide.
          failed(sameDim("mask rows and max rows", mt.getDimSize(0),
                         m.getDimSize(0))) ||
          failed(sameDim("mask rows and acc rows", mt.getDimSize(0),
                         acc.getDimSize(0))))) ||
        failed(sameDim("mask columns and key rows", mt.getDimSize(1),
                       k.getDimSize(0))) ||
        // With dynamic key rows, the other operands decide.
        failed(sameDim("mask columns and value rows", mt.getDimSize(1),
                       v.getDimSize(0))))
      return failure();
  }
  if (isa<Float8E4M3FNType>(elt) != static_cast<bool>(getDescale()))
    return emitOpError() << "a descale factor is required with, and only "
                            "with, f8E4M3FN inputs";
  if (getDescales().size() > 2)
    return emitOpError() << "descale takes the score descale and an optional "
                            "value descale, got "
                         << getDescales().size() << " values";
  if (!getScale().isFinite())
    return emitOpError() << "scale must be finite";
  if (std::optional<APFloat> softcap = getSoftcap())
    if (!softcap->isFinite() || !(softcap->convertToDouble() > 0.0))
      return emitOpError() << "softcap must be a finite value > 0";
  bool hasPositions = getRow0() && getCol0() && getDiagonal();
  if (!hasPositions && (getRow0() || getCol0() || getDiagonal()))
    return emitOpError() << "positions need all of row0, col0 and diagonal";
  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    if (window->size() != 2 || (*window)[0] < -1 || (*window)[1] < -1)
      return emitOpError() << "window must be [left, right], each >= -1";
    if (!hasPositions)
      return emitOpError() << "a window needs positions(%row0, %col0, "
                              "%diagonal)";
  } else if (hasPositions) {
    return emitOpError() << "positions are only meaningful with a window";
  }
  Value coords[] = {getCoordBatch(), getCoordHead(), getCoordRow(),
                    getCoordCol()};
  int numCoords = llvm::count_if(coords, [](Value v) { return !!v; });
  if (numCoords != 0 && numCoords != 4)
    return emitOpError() << "coords need all of batch, head, row0 and col0";
  bool hasRegions = hasModifiers();
  if (hasRegions && numCoords == 0)
    return emitOpError() << "a score_mod or mask_mod region needs "
                            "coords(%b, %h, %row0, %col0)";
  if (!hasRegions && numCoords != 0)
    return emitOpError() << "coords are only meaningful with a score_mod or "
                            "mask_mod region";
  return verifyModifierRegions(*this);
}

//===----------------------------------------------------------------------===//
// KVBlockRangeOp
//===----------------------------------------------------------------------===//

LogicalResult KVBlockRangeOp::verify() {
  // I64Attr's accessor is unsigned (getBlockKv() returns uint64_t), so a
  // negative block would pass `<= 0`: read the attribute as signed.
  int64_t blockKV = getBlockKvAttr().getInt();
  if (blockKV <= 0)
    return emitOpError() << "block_kv must be positive, got " << blockKV;
  ArrayRef<int64_t> window = getWindow();
  if (window.size() != 2 || window[0] < -1 || window[1] < -1)
    return emitOpError() << "window must be [left, right], each >= -1";
  return success();
}

#define GET_OP_CLASSES
#include "fa/Dialect/Attention/IR/AttentionOps.cpp.inc"
