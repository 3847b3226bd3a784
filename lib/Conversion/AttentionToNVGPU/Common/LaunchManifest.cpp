//===- LaunchManifest.cpp - the launch contract of a generated kernel -----===//
#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>

using namespace mlir;
using namespace mlir::fa;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// SizeExpr
//===----------------------------------------------------------------------===//

StringRef mlir::fa::getSizeSymbolName(SizeSymbol symbol) {
  switch (symbol) {
  case SizeSymbol::B:
    return "B";
  case SizeSymbol::Hq:
    return "Hq";
  case SizeSymbol::Hkv:
    return "Hkv";
  case SizeSymbol::Nq:
    return "Nq";
  case SizeSymbol::Nk:
    return "Nk";
  case SizeSymbol::D:
    return "D";
  case SizeSymbol::NumSMs:
    return "num_sms";
  case SizeSymbol::NumPages:
    return "num_pages";
  case SizeSymbol::MaxPages:
    return "max_pages";
  case SizeSymbol::MaxSeqlenQ:
    return "max_seqlen_q";
  case SizeSymbol::NumSplits:
    return "num_splits";
  case SizeSymbol::MaxSeqlenK:
    return "max_seqlen_k";
  }
  llvm_unreachable("unknown SizeSymbol");
}

SizeExpr::SizeExpr(int64_t value) : kind(Kind::Literal), value(value) {}
SizeExpr::SizeExpr(SizeSymbol symbol) : kind(Kind::Symbol), symbol(symbol) {}
SizeExpr::SizeExpr(Kind kind, ArrayRef<SizeExpr> operands)
    : kind(kind), operands(operands.begin(), operands.end()) {}

SizeExpr SizeExpr::ceilDiv(SizeExpr numerator, SizeExpr denominator) {
  return SizeExpr(Kind::CeilDiv, {numerator, denominator});
}
SizeExpr SizeExpr::mul(ArrayRef<SizeExpr> factors) {
  assert(!factors.empty() && "mul of nothing");
  return SizeExpr(Kind::Mul, factors);
}
SizeExpr SizeExpr::min(ArrayRef<SizeExpr> operands) {
  assert(!operands.empty() && "min of nothing");
  return SizeExpr(Kind::Min, operands);
}
SizeExpr SizeExpr::add(ArrayRef<SizeExpr> terms) {
  assert(!terms.empty() && "add of nothing");
  return SizeExpr(Kind::Add, terms);
}
SizeExpr SizeExpr::floorDiv(SizeExpr numerator, SizeExpr denominator) {
  return SizeExpr(Kind::FloorDiv, {numerator, denominator});
}
SizeExpr SizeExpr::max(ArrayRef<SizeExpr> operands) {
  assert(!operands.empty() && "max of nothing");
  return SizeExpr(Kind::Max, operands);
}

json::Value SizeExpr::toJSON() const {
  auto apply = [&](StringRef op) {
    json::Array args;
    for (const SizeExpr &e : operands)
      args.push_back(e.toJSON());
    return json::Object{{op, std::move(args)}};
  };
  switch (kind) {
  case Kind::Literal:
    return value;
  case Kind::Symbol:
    return getSizeSymbolName(symbol);
  case Kind::CeilDiv:
    return apply("ceil_div");
  case Kind::Mul:
    return apply("mul");
  case Kind::Min:
    return apply("min");
  case Kind::Add:
    return apply("add");
  case Kind::FloorDiv:
    return apply("floor_div");
  case Kind::Max:
    return apply("max");
  }
  llvm_unreachable("unknown SizeExpr kind");
}

static json::Array toJSONArray(ArrayRef<SizeExpr> exprs) {
  json::Array a;
  for (const SizeExpr &e : exprs)
    a.push_back(e.toJSON());
  return a;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

static StringRef getParamKindName(ParamKind kind) {
  switch (kind) {
  case ParamKind::Pointer:
    return "ptr";
  case ParamKind::TensorMap:
    return "tensormap";
  case ParamKind::I32:
    return "i32";
  }
  llvm_unreachable("unknown ParamKind");
}

json::Value KernelParam::toJSON() const {
  json::Object o{{"name", name},
                 {"type", getParamKindName(kind)},
                 {"meaning", meaning}};
  if (tensor) {
    o["tensor"] = tensor->name;
    o["dtype"] = tensor->dtype;
    o["shape"] = toJSONArray(tensor->shape);
    o["align_bytes"] = tensor->alignBytes;
  }
  return o;
}

std::vector<KernelParam>
mlir::fa::getAttentionKernelParams(const AttentionArgTypes &types,
                                   StringRef dtype, bool tensorMaps,
                                   bool hasLse) {
  using S = SizeSymbol;
  SmallVector<SizeExpr, 4> qShape = {S::B, S::Hq, S::Nq, S::D};
  SmallVector<SizeExpr, 4> kvShape = {S::B, S::Hkv, S::Nk, S::D};
  std::string elt = dtype.str();
  std::vector<KernelParam> params;
  auto tensorParam = [&](StringRef name, ArrayRef<SizeExpr> shape,
                         StringRef meaning) {
    KernelParam p;
    p.name = tensorMaps ? (name + "_map").str() : name.str();
    p.kind = tensorMaps ? ParamKind::TensorMap : ParamKind::Pointer;
    p.type = types.input;
    p.meaning = meaning.str();
    // 16 bytes: the sm_80 kernel's cp.async and the TMA's global address.
    p.tensor =
        TensorContract{name.str(), elt, SmallVector<SizeExpr, 4>(shape), 16};
    return p;
  };
  if (tensorMaps) {
    params.push_back(tensorParam(
        "q", qShape,
        "pointer to the CUtensorMap of q (device memory, 64-byte aligned)"));
    params.push_back(
        tensorParam("k", kvShape, "pointer to the CUtensorMap of k"));
    params.push_back(
        tensorParam("v", kvShape, "pointer to the CUtensorMap of v"));
  } else {
    params.push_back(tensorParam(
        "q", qShape, "query [B, Hq, Nq, D], contiguous, " + elt));
    params.push_back(tensorParam(
        "k", kvShape, "key [B, Hkv, Nk, D], contiguous, " + elt));
    params.push_back(tensorParam(
        "v", kvShape, "value [B, Hkv, Nk, D], contiguous, " + elt));
  }
  params.push_back(KernelParam{
      "out", ParamKind::Pointer, types.out,
      "output [B, Hq, Nq, D], contiguous, " + elt,
      TensorContract{"out", elt, qShape, 16}}); // 16-byte vector stores
  if (hasLse)
    params.push_back(KernelParam{
        "lse", ParamKind::Pointer, types.lse,
        "log-sum-exp [B, Hq, Nq], contiguous, f32 (ln)",
        TensorContract{"lse", "f32", {S::B, S::Hq, S::Nq}, 4}}); // f32 stores
  appendLaunchSizeParams(params, types.size);
  return params;
}

void mlir::fa::appendLaunchSizeParams(std::vector<KernelParam> &params,
                                      Type sizeType) {
  using S = SizeSymbol;
  std::pair<S, StringRef> sizes[] = {{S::B, "batch"},
                                     {S::Hq, "query heads"},
                                     {S::Hkv, "key/value heads (divides Hq)"},
                                     {S::Nq, "query length"},
                                     {S::Nk, "key/value length"}};
  for (auto [symbol, meaning] : sizes)
    params.push_back(KernelParam{getSizeSymbolName(symbol).str(),
                                 ParamKind::I32, sizeType, meaning.str(),
                                 std::nullopt});
}

void mlir::fa::insertKVCacheParams(std::vector<KernelParam> &params,
                                   bool kvLens, int64_t pageSize,
                                   Type pointerType, Type sizeType) {
  using S = SizeSymbol;
  std::vector<KernelParam> pointers;
  if (kvLens)
    pointers.push_back(KernelParam{
        "kv_lens", ParamKind::Pointer, pointerType,
        "keys of each sequence [B] i32 (clamped to [0, Nk])",
        TensorContract{"kv_lens", "i32", {S::B}, 4}});
  if (pageSize) {
    pointers.push_back(KernelParam{
        "page_table", ParamKind::Pointer, pointerType,
        "pages of each sequence [B, max_pages] i32: key j of sequence b is "
        "row j % page_size of page page_table[b, j / page_size] (clamped to "
        "[0, num_pages))",
        TensorContract{"page_table", "i32", {S::B, S::MaxPages}, 4}});
    for (KernelParam &p : params) {
      if (!p.tensor || (p.tensor->name != "k" && p.tensor->name != "v"))
        continue;
      p.tensor->shape = {S::NumPages, S::Hkv, pageSize, S::D};
      if (p.kind == ParamKind::Pointer)
        p.meaning = p.tensor->name + " pool [num_pages, Hkv, " +
                    std::to_string(pageSize) + ", D], contiguous";
    }
  }
  auto firstSize = llvm::find_if(
      params, [](const KernelParam &p) { return p.kind == ParamKind::I32; });
  params.insert(firstSize, pointers.begin(), pointers.end());
  if (!pageSize)
    return;
  params.push_back(KernelParam{"num_pages", ParamKind::I32, sizeType,
                               "pages in the k and v pools", std::nullopt});
  params.push_back(KernelParam{"max_pages", ParamKind::I32, sizeType,
                               "page table entries per sequence (Nk is "
                               "max_pages * page_size)",
                               std::nullopt});
}

SmallVector<SizeExpr, 4>
mlir::fa::tokenMajorShape(ArrayRef<SizeExpr> planeShape) {
  assert((planeShape.size() == 3 || planeShape.size() == 4) &&
         "a plane tensor [B, H, N(, D)]");
  if (planeShape.size() == 4)
    return {planeShape[2], planeShape[1], planeShape[3]};
  return {planeShape[1], planeShape[2]};
}

void mlir::fa::insertVarlenParams(std::vector<KernelParam> &params,
                                  Type pointerType, Type sizeType,
                                  bool tokenMajor, SizeSymbol longest) {
  using S = SizeSymbol;
  for (KernelParam &p : params) {
    // The tensors of the packed sequences only: a region's captured tensors
    // (and their gradients) keep their own shapes.
    if (!p.tensor || p.tensor->shape.empty() ||
        isScoreModifierTensor(p.tensor->name))
      continue;
    SmallVector<SizeExpr, 4> &shape = p.tensor->shape;
    if (!tokenMajor) {
      shape.front() = 1;
      if (size_t at = p.meaning.find("[B, "); at != std::string::npos)
        p.meaning.replace(at, 4, "[1, ");
    } else {
      bool rows = shape.size() != 4;
      shape = tokenMajorShape(shape);
      p.meaning = rows ? "log-sum-exp [Hq, Nq], contiguous, f32 (ln)"
                       : p.tensor->name + " [" +
                             (p.tensor->name == "q" || p.tensor->name == "out"
                                  ? "Nq, Hq"
                                  : "Nk, Hkv") +
                             ", D], contiguous (packed sequences, token-major)";
    }
  }
  KernelParam offsets[] = {
      KernelParam{"cu_seqlens_q", ParamKind::Pointer, pointerType,
                  "cumulative query offsets [B + 1] i32: sequence s has the "
                  "packed query rows [cu_seqlens_q[s], cu_seqlens_q[s + 1]) "
                  "(clamped to [0, Nq])",
                  TensorContract{"cu_seqlens_q", "i32", {SizeExpr::add({S::B, 1})}, 4}},
      KernelParam{"cu_seqlens_k", ParamKind::Pointer, pointerType,
                  "cumulative key offsets [B + 1] i32 (clamped to [0, Nk])",
                  TensorContract{"cu_seqlens_k", "i32", {SizeExpr::add({S::B, 1})}, 4}}};
  auto firstSize = llvm::find_if(
      params, [](const KernelParam &p) { return p.kind == ParamKind::I32; });
  params.insert(firstSize, std::begin(offsets), std::end(offsets));
  for (KernelParam &p : params) {
    if (p.name == "B")
      p.meaning = "sequences (cu_seqlens_q and cu_seqlens_k hold B + 1 offsets)";
    else if (p.name == "Nq")
      p.meaning = "packed query rows of all sequences (Tq)";
    else if (p.name == "Nk")
      p.meaning = "packed keys of all sequences (Tk)";
  }
  assert((longest == S::MaxSeqlenQ || longest == S::MaxSeqlenK) &&
         "a varlen grid runs over query rows or keys");
  params.push_back(
      longest == S::MaxSeqlenQ
          ? KernelParam{"max_seqlen_q", ParamKind::I32, sizeType,
                        "the longest sequence's query rows (the grid; rows of "
                        "longer sequences are not written)",
                        std::nullopt}
          : KernelParam{"max_seqlen_k", ParamKind::I32, sizeType,
                        "the longest sequence's keys (the grid; keys of "
                        "longer sequences get no gradient)",
                        std::nullopt});
}

void mlir::fa::insertSplitKVParams(std::vector<KernelParam> &params,
                                   Type f32PointerType, Type i32PointerType,
                                   Type sizeType, int64_t blockQ) {
  using S = SizeSymbol;
  KernelParam workspaces[] = {
      KernelParam{"split_o", ParamKind::Pointer, f32PointerType,
                  "split-KV workspace: each key chunk's normalized output "
                  "[num_splits, B, Hq, Nq, D] f32 (read and written only "
                  "with num_splits > 1)",
                  TensorContract{"split_o",
                                 "f32",
                                 {S::NumSplits, S::B, S::Hq, S::Nq, S::D},
                                 16}},
      KernelParam{"split_lse", ParamKind::Pointer, f32PointerType,
                  "split-KV workspace: each key chunk's log-sum-exp "
                  "[num_splits, B, Hq, Nq] f32",
                  TensorContract{"split_lse",
                                 "f32",
                                 {S::NumSplits, S::B, S::Hq, S::Nq},
                                 4}},
      KernelParam{"split_counter", ParamKind::Pointer, i32PointerType,
                  "split-KV arrival counters, one per tile [B, Hq, "
                  "ceil(Nq / blockQ)] i32: zero at launch, left zero by the "
                  "kernel; one per stream",
                  TensorContract{"split_counter",
                                 "i32",
                                 {S::B, S::Hq, SizeExpr::ceilDiv(S::Nq, blockQ)},
                                 4}}};
  auto firstSize = llvm::find_if(
      params, [](const KernelParam &p) { return p.kind == ParamKind::I32; });
  params.insert(firstSize, std::begin(workspaces), std::end(workspaces));
  params.push_back(KernelParam{"num_splits", ParamKind::I32, sizeType,
                               "key chunks per tile (>= 1; 1: no split, the "
                               "workspaces untouched)",
                               std::nullopt});
}

void mlir::fa::insertTileCounterParam(std::vector<KernelParam> &params,
                                      Type pointerType) {
  auto firstSize = llvm::find_if(
      params, [](const KernelParam &p) { return p.kind == ParamKind::I32; });
  params.insert(firstSize,
                KernelParam{"tile_counter", ParamKind::Pointer, pointerType,
                            "the persistent CTAs' tile counter [2] i32: zero "
                            "at launch, left zero by the kernel; one per "
                            "stream",
                            TensorContract{"tile_counter", "i32", {2}, 4}});
}

std::vector<KernelParam> mlir::fa::getFP8AttentionKernelParams(
    const AttentionArgTypes &types, StringRef outDtype, bool hasLse,
    FP8DescaleShape descaleShape, int64_t blockQ, int64_t blockKV,
    bool vAsStored) {
  using S = SizeSymbol;
  std::vector<KernelParam> params =
      getAttentionKernelParams(types, "f8e4m3", /*tensorMaps=*/true, hasLse);
  // v goes in as V^T, its keys padded to whole 32-key groups.
  if (!vAsStored) {
    SizeExpr keys = SizeExpr::mul({SizeExpr::ceilDiv(S::Nk, 32), 32});
    params[2].meaning = "pointer to the CUtensorMap of v_t (v transposed, "
                        "see the tensor map)";
    params[2].tensor =
        TensorContract{"v_t", "f8e4m3", {S::B, S::Hkv, S::D, keys}, 16};
  }
  KernelParam &out = params[3];
  out.meaning = "output [B, Hq, Nq, D], contiguous, " + outDtype.str();
  out.tensor->dtype = outDtype.str();
  auto descale = [&](StringRef name, StringRef of, S heads, S length,
                     int64_t block) {
    SmallVector<SizeExpr, 4> shape = {1};
    std::string what = "[1] f32 (per tensor)";
    if (descaleShape == FP8DescaleShape::Head) {
      shape = {S::B, heads};
      what = "[B, " + getSizeSymbolName(heads).str() + "] f32 (per head)";
    } else if (descaleShape == FP8DescaleShape::Block) {
      shape = {S::B, heads, SizeExpr::ceilDiv(length, block)};
      what = "[B, " + getSizeSymbolName(heads).str() + ", ceil(" +
             getSizeSymbolName(length).str() + " / " + std::to_string(block) +
             ")] f32 (per block of " + std::to_string(block) + " rows)";
    }
    return KernelParam{name.str(), ParamKind::Pointer, types.lse,
                       ("descale of " + of + ": " + what).str(),
                       TensorContract{name.str(), "f32", shape, 4}};
  };
  auto at = params.begin() + (hasLse ? 5 : 4);
  params.insert(at, {descale("q_descale", "q", S::Hq, S::Nq, blockQ),
                     descale("k_descale", "k", S::Hkv, S::Nk, blockKV),
                     descale("v_descale", "v", S::Hkv, S::Nk, blockKV)});
  return params;
}

SmallVector<Type> mlir::fa::getKernelArgumentTypes(ArrayRef<KernelParam> params) {
  return llvm::map_to_vector(params, [](const KernelParam &p) { return p.type; });
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

static StringRef getDataTypeName(cuda::TensorMapDataType t) {
  switch (t) {
  case cuda::TensorMapDataType::UInt8:
    return "f8e4m3"; // the only byte type the kernels load: TMA moves bytes
  case cuda::TensorMapDataType::Float16:
    return "f16";
  case cuda::TensorMapDataType::Float32:
    return "f32";
  case cuda::TensorMapDataType::BFloat16:
    return "bf16";
  }
  llvm_unreachable("unknown TensorMapDataType");
}

static StringRef getSwizzleName(cuda::TensorMapSwizzle s) {
  switch (s) {
  case cuda::TensorMapSwizzle::None:
    return "none";
  case cuda::TensorMapSwizzle::B32:
    return "32B";
  case cuda::TensorMapSwizzle::B64:
    return "64B";
  case cuda::TensorMapSwizzle::B128:
    return "128B";
  }
  llvm_unreachable("unknown TensorMapSwizzle");
}

static StringRef getL2PromotionName(cuda::TensorMapL2Promotion p) {
  switch (p) {
  case cuda::TensorMapL2Promotion::None:
    return "none";
  case cuda::TensorMapL2Promotion::B64:
    return "64B";
  case cuda::TensorMapL2Promotion::B128:
    return "128B";
  case cuda::TensorMapL2Promotion::B256:
    return "256B";
  }
  llvm_unreachable("unknown TensorMapL2Promotion");
}

static StringRef getOOBFillName(cuda::TensorMapFloatOOBFill f) {
  switch (f) {
  case cuda::TensorMapFloatOOBFill::None:
    return "zero";
  case cuda::TensorMapFloatOOBFill::NanRequestZeroFma:
    return "nan";
  }
  llvm_unreachable("unknown TensorMapFloatOOBFill");
}

TensorMapSpec TensorMapSpec::headMajor(StringRef tensor, StringRef dtype,
                                       cuda::TensorMapDataType dataType,
                                       int64_t elementBytes, SizeSymbol heads,
                                       SizeSymbol length, int64_t boxColumns,
                                       int64_t boxRows) {
  using Sym = SizeSymbol;
  TensorMapSpec m;
  m.param = (tensor + "_map").str();
  m.tensor = tensor.str();
  m.layout = (tensor + " [B, " + getSizeSymbolName(heads) + ", " +
              getSizeSymbolName(length) + ", D] contiguous")
                 .str();
  m.dtype = dtype.str();
  m.dataType = dataType;
  m.dims = {Sym::D, length, SizeExpr::mul({Sym::B, heads})};
  m.stridesBytes = {SizeExpr::mul({Sym::D, elementBytes}),
                    SizeExpr::mul({length, Sym::D, elementBytes})};
  m.box = {boxColumns, boxRows, 1};
  m.elementStrides = {1, 1, 1};
  return m;
}

json::Value TensorMapSpec::toJSON() const {
  auto num = [](auto e) { return int64_t(static_cast<unsigned>(e)); };
  return json::Object{
      {"param", param},
      {"tensor", layout},
      {"dtype", dtype},
      {"rank", int64_t(dims.size())},
      {"dims", toJSONArray(dims)},
      {"strides_bytes", toJSONArray(stridesBytes)},
      {"box", json::Array(box)},
      {"element_strides", json::Array(elementStrides)},
      {"interleave", "none"},
      {"swizzle", getSwizzleName(swizzle)},
      {"l2_promotion", getL2PromotionName(l2Promotion)},
      {"oob_fill", getOOBFillName(oobFill)},
      // What cuTensorMapEncodeTiled takes, by its parameter names.
      {"cuda_enums", json::Object{{"tensorDataType", num(dataType)},
                                  {"interleave", num(interleave)},
                                  {"swizzle", num(swizzle)},
                                  {"l2Promotion", num(l2Promotion)},
                                  {"oobFill", num(oobFill)}}}};
}

//===----------------------------------------------------------------------===//
// LaunchManifest
//===----------------------------------------------------------------------===//

/// The top-level keys toJSON writes besides the schedule keys.
static constexpr StringLiteral kSchemaKeys[] = {"schema_version",
                                                "kernel",
                                                "ptx",
                                                "chip",
                                                "dtype",
                                                "head_dim",
                                                "causal",
                                                "window",
                                                "scale",
                                                "lse",
                                                "block_q",
                                                "block_kv",
                                                "params",
                                                "grid",
                                                "tiles",
                                                "block",
                                                "dynamic_shared_memory_bytes",
                                                "static_shared_memory_bytes",
                                                "tensor_maps",
                                                "out_dtype",
                                                "v_key_order",
                                                "op",
                                                "kv_lens",
                                                "page_size",
                                                "varlen",
                                                "varlen_layout",
                                                "num_splits_plan",
                                                "auxiliary_kernels"};

LogicalResult LaunchManifest::verify(FunctionOpInterface kernelOp) const {
  auto fail = [&](const Twine &why) {
    return kernelOp->emitOpError("launch manifest of '")
           << kernel << "': " << why;
  };
  // The rules every parameter list follows (the kernel's and each auxiliary
  // kernel's): unique names, a tensor contract iff a pointer, sizes that are
  // launch sizes.
  auto checkParams = [&](ArrayRef<KernelParam> list,
                         const Twine &whose) -> LogicalResult {
    llvm::StringSet<> names;
    for (const KernelParam &p : list) {
      if (!names.insert(p.name).second)
        return fail(whose + "parameter '" + p.name + "' appears twice");
      if ((p.kind == ParamKind::I32) == p.tensor.has_value())
        return fail(whose + "parameter '" + p.name +
                    "': a tensor contract iff it is a pointer");
      if (p.kind == ParamKind::I32 &&
          !llvm::is_contained(
              SmallVector<StringRef>{"B", "Hq", "Hkv", "Nq", "Nk", "num_pages",
                                     "max_pages", "max_seqlen_q", "num_splits",
                                     "max_seqlen_k"},
              p.name))
        return fail(whose + "size parameter '" + p.name +
                    "' is not a launch size");
    }
    return success();
  };
  if (failed(checkParams(params, "")))
    return failure();
  for (const KernelParam &p : params) {
    if (p.kind == ParamKind::TensorMap &&
        llvm::count_if(tensorMaps, [&](const TensorMapSpec &m) {
          return m.param == p.name;
        }) != 1)
      return fail("tensormap parameter '" + p.name +
                  "' needs exactly one tensor map");
  }
  for (const TensorMapSpec &m : tensorMaps) {
    auto it = llvm::find_if(
        params, [&](const KernelParam &p) { return p.name == m.param; });
    if (it == params.end() || it->kind != ParamKind::TensorMap)
      return fail("tensor map for '" + m.param +
                  "', which is no tensormap parameter");
    if (m.tensor != it->tensor->name || m.dtype != it->tensor->dtype ||
        m.dtype != getDataTypeName(m.dataType))
      return fail("tensor map '" + m.param +
                  "' disagrees with its parameter's tensor or dtype");
    size_t rank = m.dims.size();
    if (rank == 0 || m.box.size() != rank || m.elementStrides.size() != rank ||
        m.stridesBytes.size() != rank - 1)
      return fail("tensor map '" + m.param + "' has inconsistent ranks");
  }
  if (grid.size() != 3)
    return fail("the grid needs 3 dimensions");
  if (llvm::any_of(block, [](int64_t b) { return b <= 0; }))
    return fail("the block needs 3 positive dimensions");
  llvm::StringSet<> keys;
  for (const auto &kv : schedule)
    if (llvm::is_contained(kSchemaKeys, kv.first) ||
        !keys.insert(kv.first).second)
      return fail("schedule key '" + kv.first +
                  "' repeats a schema or schedule key");
  SmallVector<Type> want = getKernelArgumentTypes(params);
  if (!llvm::equal(kernelOp.getArgumentTypes(), want))
    return fail("the kernel's argument types are not its parameters' types");
  llvm::StringSet<> auxNames;
  for (const AuxiliaryKernel &aux : auxiliaryKernels) {
    if (aux.kernel == kernel || !auxNames.insert(aux.kernel).second)
      return fail("auxiliary kernel '" + aux.kernel + "' named twice");
    auto fn = dyn_cast_or_null<FunctionOpInterface>(
        SymbolTable::lookupNearestSymbolFrom(
            kernelOp, StringAttr::get(kernelOp->getContext(), aux.kernel)));
    if (!fn)
      return fail("auxiliary kernel '" + aux.kernel +
                  "' is no function of the kernel's module");
    if (aux.op.empty() || aux.grid.size() != 3 ||
        llvm::any_of(aux.block, [](int64_t b) { return b <= 0; }) ||
        llvm::any_of(aux.params, [](const KernelParam &p) {
          return p.kind == ParamKind::TensorMap;
        }))
      return fail("auxiliary kernel '" + aux.kernel +
                  "' needs an op, a grid and block of 3 and no tensor maps");
    if (!llvm::equal(fn.getArgumentTypes(), getKernelArgumentTypes(aux.params)))
      return fail("auxiliary kernel '" + aux.kernel +
                  "': argument types are not its parameters' types");
    if (failed(
            checkParams(aux.params, "auxiliary kernel '" + aux.kernel + "': ")))
      return failure();
  }
  return success();
}

KernelParam KernelParam::pointer(StringRef name, Type type, StringRef dtype,
                                 ArrayRef<SizeExpr> shape, int64_t alignBytes,
                                 const Twine &meaning) {
  return KernelParam{name.str(), ParamKind::Pointer, type, meaning.str(),
                     TensorContract{name.str(), dtype.str(),
                                    SmallVector<SizeExpr, 4>(shape),
                                    alignBytes}};
}

json::Value AuxiliaryKernel::toJSON() const {
  json::Array paramArray;
  for (const KernelParam &p : params)
    paramArray.push_back(p.toJSON());
  return json::Object{{"op", op},
                      {"kernel", kernel},
                      {"params", std::move(paramArray)},
                      {"grid", toJSONArray(grid)},
                      {"block", json::Array(block)}};
}

json::Object LaunchManifest::toJSON() const {
  json::Array paramArray, mapArray;
  for (const KernelParam &p : params)
    paramArray.push_back(p.toJSON());
  for (const TensorMapSpec &m : tensorMaps)
    mapArray.push_back(m.toJSON());
  json::Object o{
      {"schema_version", kLaunchManifestSchemaVersion},
      {"kernel", kernel},
      {"ptx", kernel + ".ptx"},
      {"chip", chip},
      {"function", function},
      {"dtype", dtype},
      {"head_dim", headDim},
      {"causal", causal},
      {"window", json::Array{windowLeft, windowRight}},
      {"scale", scale},
      {"lse", lse},
      {"block_q", blockQ},
      {"block_kv", blockKV},
      {"params", std::move(paramArray)},
      {"grid", toJSONArray(grid)},
      {"block", json::Array(block)},
      {"dynamic_shared_memory_bytes", dynamicSharedMemoryBytes},
      {"static_shared_memory_bytes", staticSharedMemoryBytes},
      {"tensor_maps", std::move(mapArray)}};
  if (!op.empty())
    o["op"] = op;
  if (!outDtype.empty())
    o["out_dtype"] = outDtype;
  if (!vKeyOrder.empty())
    o["v_key_order"] = json::Array(vKeyOrder);
  if (kvLens)
    o["kv_lens"] = true;
  if (pageSize)
    o["page_size"] = pageSize;
  if (varlen) {
    o["varlen"] = true;
    o["varlen_layout"] = varlenLayout;
  }
  if (tiles)
    o["tiles"] = tiles->toJSON();
  if (numSplitsPlan)
    o["num_splits_plan"] = numSplitsPlan->toJSON();
  if (!auxiliaryKernels.empty()) {
    json::Array aux;
    for (const AuxiliaryKernel &k : auxiliaryKernels)
      aux.push_back(k.toJSON());
    o["auxiliary_kernels"] = std::move(aux);
  }
  for (const auto &[key, value] : schedule)
    o[key] = value;
  return o;
}

std::string LaunchManifest::toJSONString() const {
  return llvm::formatv("{0:2}", json::Value(toJSON())).str();
}

void mlir::fa::attachLaunchManifest(ModuleOp module, StringRef gpuModuleName,
                                    StringRef kernelName, StringRef json) {
  Builder b(module.getContext());
  module->setAttr(("fa.manifest." + gpuModuleName).str(),
                  b.getDictionaryAttr(
                      {b.getNamedAttr("kernel", b.getStringAttr(kernelName)),
                       b.getNamedAttr("json", b.getStringAttr(json))}));
}
