//===- HostLaunch.cpp - the launch of a built kernel, as host IR ----------===//
//
// The host side of convert-fa-to-nvgpu{host-launch}, in two steps around
// bufferization (whose buffer deallocation rejects the GPU ops, which declare
// no memory effects):
//
// 1. buildHostLaunch (convert-fa-to-nvgpu, tensors): the function's body
//    becomes a call of `@<function>_launch`, a private declaration on
//    memrefs (inputs, then outputs allocated by the caller) that records the
//    kernel, its argument types and its launch manifest in attributes.
// 2. fa-emit-host-launch (memrefs, after bufferization): gives each such
//    declaration its body by interpreting the manifest (docs/Manifest.md; the
//    data python/fa_runtime reads): device buffers and copies (gpu.alloc,
//    gpu.memcpy) on one stream of async tokens, tensor maps
//    (nvgpu.tma.create.descriptor), the grid from the runtime sizes,
//    gpu.launch_func. Upstream gpu-to-llvm lowers it to the mgpu* calls
//    that lib/Runtime provides.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/HostLaunch.h"
#include "fa/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/JSON.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAEMITHOSTLAUNCHPASS
#include "fa/Conversion/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;
namespace json = llvm::json;

/// Attributes of a launch declaration.
static constexpr llvm::StringLiteral kKernelAttr = "fa.launch.kernel";
static constexpr llvm::StringLiteral kManifestAttr = "fa.launch.manifest";
static constexpr llvm::StringLiteral kArgTypesAttr = "fa.launch.kernel_arg_types";
static constexpr llvm::StringLiteral kTensorsAttr = "fa.launch.tensors";

namespace {
/// Bytes of one element of `t` in memory (i1: one byte).
int64_t elementBytes(Type t) {
  return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
}

/// The CUtensorMapDataType that upstream's lowering of
/// nvgpu.tma.create.descriptor derives from `t`, or -1.
int64_t tensorMapDataType(Type t) {
  if (t.isF16())
    return 6;
  if (t.isF32())
    return 7;
  if (t.isBF16())
    return 9;
  return -1;
}

bool isOutput(StringRef tensor) { return tensor == "out" || tensor == "lse"; }

/// A tensor the launch makes itself: the tile counter of a kernel with
/// dynamic tiles ([2] i32, zeroed; docs/Manifest.md).
bool isWorkspace(StringRef tensor) { return tensor == "tile_counter"; }

/// Evaluates the manifest's size expressions (docs/Manifest.md) as index
/// arithmetic over the launch sizes.
class SizeEvaluator {
public:
  /// `who` starts the diagnostics (the pass that evaluates).
  SizeEvaluator(OpBuilder &b, Location loc, Operation *anchor, StringRef who)
      : b(b), loc(loc), anchor(anchor), who(who) {}

  llvm::StringMap<Value> symbols;

  InFlightDiagnostic error() {
    return mlir::emitError(loc) << who << ": ";
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  Value product(ArrayRef<Value> values) {
    Value acc = index(1);
    for (Value v : values)
      acc = arith::MulIOp::create(b, loc, acc, v);
    return acc;
  }

  FailureOr<Value> size(const json::Value &expr) {
    if (std::optional<int64_t> n = expr.getAsInteger())
      return index(*n);
    if (std::optional<StringRef> name = expr.getAsString()) {
      if (*name == "num_sms")
        return multiprocessorCount();
      auto it = symbols.find(*name);
      if (it == symbols.end())
        return error() << "the manifest names an unknown size '" << *name
                       << "'";
      return it->second;
    }
    const json::Object *o = expr.getAsObject();
    if (!o || o->size() != 1)
      return error() << "malformed size expression in the manifest";
    const auto &[key, value] = *o->begin();
    FailureOr<SmallVector<Value>> operands = sizes(value.getAsArray());
    if (failed(operands) || operands->empty())
      return failure();
    Value acc = (*operands)[0];
    for (Value v : ArrayRef<Value>(*operands).drop_front()) {
      if (key == "ceil_div")
        acc = arith::CeilDivUIOp::create(b, loc, acc, v);
      else if (key == "mul")
        acc = arith::MulIOp::create(b, loc, acc, v);
      else if (key == "min")
        acc = arith::MinUIOp::create(b, loc, acc, v);
      else
        return error() << "unknown size operator '" << key.str()
                       << "' in the manifest";
    }
    return acc;
  }

  FailureOr<SmallVector<Value>> sizes(const json::Array *exprs) {
    if (!exprs)
      return error() << "malformed size list in the manifest";
    SmallVector<Value> values;
    for (const json::Value &e : *exprs) {
      FailureOr<Value> v = size(e);
      if (failed(v))
        return failure();
      values.push_back(*v);
    }
    return values;
  }

private:
  /// `num_sms`: a call of the runtime's faCudaMultiprocessorCount.
  Value multiprocessorCount() {
    auto module = anchor->getParentOfType<ModuleOp>();
    auto fnType = b.getFunctionType({}, {b.getI32Type()});
    if (!module.lookupSymbol(kMultiprocessorCountFunction)) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(b, loc, kMultiprocessorCountFunction, fnType)
          .setPrivate();
    }
    Value n = func::CallOp::create(b, loc, kMultiprocessorCountFunction,
                                   TypeRange{b.getI32Type()}, ValueRange{})
                  .getResult(0);
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), n);
  }

  OpBuilder &b;
  Location loc;
  Operation *anchor;
  StringRef who;
};

/// The memref of `type` over the bytes of `buffer` (identity layout).
Value viewOf(OpBuilder &b, Location loc, Value buffer, MemRefType type,
             ArrayRef<Value> dims) {
  SmallVector<Value> dynamic;
  for (auto [extent, dim] : llvm::zip(type.getShape(), dims))
    if (ShapedType::isDynamic(extent))
      dynamic.push_back(dim);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return memref::ViewOp::create(b, loc, type, buffer, zero, dynamic);
}

/// The tensor names the kernel's parameters take, in first-use order, but
/// the workspace the launch makes itself.
SmallVector<StringRef> getLaunchTensors(const json::Object &manifest) {
  SmallVector<StringRef> names;
  if (const json::Array *params = manifest.getArray("params"))
    for (const json::Value &p : *params)
      if (const json::Object *o = p.getAsObject())
        if (std::optional<StringRef> t = o->getString("tensor"))
          if (!isWorkspace(*t) && !llvm::is_contained(names, *t))
            names.push_back(*t);
  return names;
}
} // namespace

//===----------------------------------------------------------------------===//
// Step 1: the function calls its launch (tensors)
//===----------------------------------------------------------------------===//

/// The function argument that tensor `name` of the manifest is, if any.
static std::optional<unsigned> getTensorArgument(const TiledAttention &attn,
                                                 StringRef name) {
  if (name == "q")
    return attn.queryArg;
  if (name == "k")
    return attn.keyArg;
  if (name == "v")
    return attn.valueArg;
  if (name == "mask" && attn.modifiers.mask)
    return attn.modifiers.mask->arg;
  unsigned n;
  func::FuncOp func = attn.func;
  if (name.consume_front("arg") && !name.getAsInteger(10, n) &&
      n < func.getNumArguments())
    return n;
  return std::nullopt;
}

/// Declares @<function>_launch: memrefs of the tensors the kernel reads (any
/// layout), then of its outputs (identity); the kernel, its argument types,
/// its manifest and the tensor names in attributes. Fills `tensors` (the
/// names, in argument order).
static FailureOr<func::FuncOp>
declareLaunch(const TiledAttention &attn, gpu::GPUFuncOp kernel,
              StringAttr text, const json::Object &manifest,
              SmallVectorImpl<StringRef> &tensors) {
  func::FuncOp func = attn.func;
  Location loc = func.getLoc();
  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder b(func.getContext());
  tensors = getLaunchTensors(manifest);
  SmallVector<Type> memrefTypes;
  SmallVector<Attribute> tensorNames;
  for (StringRef t : tensors) {
    Type type;
    if (isOutput(t)) {
      type = func.getResultTypes()[t == "out" ? 0 : 1];
    } else if (std::optional<unsigned> arg = getTensorArgument(attn, t)) {
      type = func.getArgumentTypes()[*arg];
    } else {
      return mlir::emitError(loc, "convert-fa-to-nvgpu{host-launch}: the "
                                  "kernel takes a tensor '")
             << t
             << "' that the host launch cannot provide (fp8 kernels take v "
                "transposed and descales: launch them through "
                "python/fa_runtime)";
    }
    // Inputs in any layout: bufferization may hand over a strided view
    // under an identity type (a slice cast across a call), whose real strides
    // only the descriptor knows; the launch copies them to contiguous memory.
    auto tensorType = cast<RankedTensorType>(type);
    MemRefLayoutAttrInterface layout;
    if (!isOutput(t)) {
      SmallVector<int64_t> strides(tensorType.getRank(), ShapedType::kDynamic);
      layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                      strides);
    }
    memrefTypes.push_back(MemRefType::get(
        tensorType.getShape(), tensorType.getElementType(), layout));
    tensorNames.push_back(b.getStringAttr(t));
  }
  b.setInsertionPoint(func);
  auto launch = func::FuncOp::create(
      b, loc, (func.getSymName() + "_launch").str(),
      b.getFunctionType(memrefTypes, {}));
  launch.setPrivate();
  auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
  launch->setAttr(kKernelAttr,
                  SymbolRefAttr::get(gpuModule.getSymNameAttr(),
                                     {FlatSymbolRefAttr::get(kernel)}));
  launch->setAttr(kManifestAttr, text);
  launch->setAttr(kArgTypesAttr,
                  b.getTypeArrayAttr(kernel.getArgumentTypes()));
  launch->setAttr(kTensorsAttr, b.getArrayAttr(tensorNames));
  SymbolTable(module).insert(launch);
  return launch;
}

/// Replaces the body of `attn.func` by: the size check, its tensors as
/// buffers, the outputs allocated, the call of `launch`, the results.
static LogicalResult callLaunch(const TiledAttention &attn,
                                func::FuncOp launch,
                                ArrayRef<StringRef> tensors,
                                const json::Object &manifest) {
  func::FuncOp func = attn.func;
  Location loc = func.getLoc();
  OpBuilder b(func.getContext());
  SmallVector<Type> memrefTypes(launch.getArgumentTypes());
  Block &body = func.getBody().front();
  SmallVector<Operation *> old;
  for (Operation &op : body)
    old.push_back(&op);
  b.setInsertionPointToStart(&body);
  SizeEvaluator sizes(b, loc, func, "convert-fa-to-nvgpu{host-launch}");
  Value q = func.getArgument(attn.queryArg), k = func.getArgument(attn.keyArg);
  sizes.symbols["B"] = tensor::DimOp::create(b, loc, q, 0);
  sizes.symbols["Hq"] = tensor::DimOp::create(b, loc, q, 1);
  sizes.symbols["Nq"] = tensor::DimOp::create(b, loc, q, 2);
  sizes.symbols["Hkv"] = tensor::DimOp::create(b, loc, k, 1);
  sizes.symbols["Nk"] = tensor::DimOp::create(b, loc, k, 2);
  sizes.symbols["D"] = sizes.index(attn.headDim);
  // The kernels read at least one key per row: no rows, or some keys.
  Value zero = sizes.index(0);
  Value rows = sizes.product(
      {sizes.symbols["B"], sizes.symbols["Hq"], sizes.symbols["Nq"]});
  Value ok = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rows, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                            sizes.symbols["Nk"], zero));
  cf::AssertOp::create(b, loc, ok,
                       "fa: the GPU kernel needs at least one key (Nk > 0) "
                       "when there are query rows");
  SmallVector<Value> operands;
  SmallVector<Value> results(func.getNumResults());
  for (auto [t, type] : llvm::zip(tensors, memrefTypes)) {
    auto memrefType = cast<MemRefType>(type);
    if (!isOutput(t)) {
      Value arg = func.getArgument(*getTensorArgument(attn, t));
      operands.push_back(bufferization::ToBufferOp::create(
          b, loc, memrefType, arg, /*read_only=*/true));
      continue;
    }
    // The output's shape, from the manifest parameter that writes it.
    const json::Object *param = nullptr;
    for (const json::Value &p : *manifest.getArray("params"))
      if (p.getAsObject() && p.getAsObject()->getString("tensor") == t)
        param = p.getAsObject();
    FailureOr<SmallVector<Value>> dims =
        sizes.sizes(param ? param->getArray("shape") : nullptr);
    if (failed(dims))
      return failure();
    SmallVector<Value> dynamic;
    for (auto [extent, dim] : llvm::zip(memrefType.getShape(), *dims))
      if (ShapedType::isDynamic(extent))
        dynamic.push_back(dim);
    Value alloc = memref::AllocOp::create(b, loc, memrefType, dynamic);
    operands.push_back(alloc);
    results[t == "out" ? 0 : 1] = alloc;
  }
  func::CallOp::create(b, loc, launch, operands);
  for (auto [i, host] : llvm::enumerate(results)) {
    if (!host)
      return mlir::emitError(loc, "convert-fa-to-nvgpu{host-launch}: the "
                                  "kernel writes no result #")
             << i;
    results[i] = bufferization::ToTensorOp::create(
        b, loc, func.getResultTypes()[i], host, /*restrict=*/true,
        /*writable=*/true);
  }
  func::ReturnOp::create(b, loc, results);
  for (Operation *op : llvm::reverse(old)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}

LogicalResult mlir::fa::buildHostLaunch(const TiledAttention &attn,
                                        StringRef gpuModuleName) {
  func::FuncOp func = attn.func;
  auto module = func->getParentOfType<ModuleOp>();
  auto entry = module->getAttrOfType<DictionaryAttr>(
      ("fa.manifest." + gpuModuleName).str());
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(gpuModuleName);
  auto kernelName = entry ? entry.getAs<StringAttr>("kernel") : StringAttr();
  auto text = entry ? entry.getAs<StringAttr>("json") : StringAttr();
  gpu::GPUFuncOp kernel =
      gpuModule && kernelName
          ? gpuModule.lookupSymbol<gpu::GPUFuncOp>(kernelName.getValue())
          : gpu::GPUFuncOp();
  if (!kernel || !text)
    return func.emitError("convert-fa-to-nvgpu{host-launch}: no kernel or "
                          "launch manifest for gpu.module @")
           << gpuModuleName;
  llvm::Expected<json::Value> parsed = json::parse(text.getValue());
  if (!parsed || !parsed->getAsObject()) {
    llvm::consumeError(parsed.takeError());
    return func.emitError("convert-fa-to-nvgpu{host-launch}: the launch "
                          "manifest is not a JSON object");
  }
  const json::Object &manifest = *parsed->getAsObject();

  SmallVector<StringRef> tensors;
  FailureOr<func::FuncOp> launch =
      declareLaunch(attn, kernel, text, manifest, tensors);
  if (failed(launch))
    return failure();
  return callLaunch(attn, *launch, tensors, manifest);
}

//===----------------------------------------------------------------------===//
// Step 2: the launch's body (memrefs)
//===----------------------------------------------------------------------===//

namespace {
class LaunchBodyBuilder {
public:
  LaunchBodyBuilder(func::FuncOp launch, const json::Object &manifest)
      : launch(launch), manifest(manifest), b(launch.getContext()),
        loc(launch.getLoc()), sizes(b, loc, launch, "fa-emit-host-launch"),
        tokenType(gpu::AsyncTokenType::get(launch.getContext())) {}

  LogicalResult build();

private:
  InFlightDiagnostic error() { return sizes.error(); }
  Value deviceBuffer(StringRef tensor);
  FailureOr<Value> kernelOperand(const json::Object &param, Type type);
  FailureOr<Value> tensorMap(const json::Object &param, Value buffer,
                             Type type);

  func::FuncOp launch;
  const json::Object &manifest;
  OpBuilder b;
  Location loc;
  SizeEvaluator sizes;
  Type tokenType;
  /// The stream: each async op waits on the previous one.
  Value token;
  /// The host memref of each tensor (the launch's arguments).
  llvm::StringMap<Value> hostBuffers;
  /// Device buffers (memref<?xi8>) by tensor name, in allocation order.
  llvm::MapVector<StringRef, Value> buffers;
  /// Contiguous host copies of the inputs, freed once the stream is done.
  SmallVector<Value> stagingBuffers;
  /// The tensor maps' device copies (!llvm.ptr), freed then too.
  SmallVector<Value> tensorMaps;
};
} // namespace

/// The memref's sizes.
static SmallVector<Value> getDims(OpBuilder &b, Location loc, Value memref) {
  SmallVector<Value> dims;
  for (int64_t i = 0, e = cast<MemRefType>(memref.getType()).getRank(); i < e;
       ++i)
    dims.push_back(memref::DimOp::create(b, loc, memref, i));
  return dims;
}

Value LaunchBodyBuilder::deviceBuffer(StringRef tensor) {
  auto cached = buffers.find(tensor);
  if (cached != buffers.end())
    return cached->second;
  Value host = hostBuffers.lookup(tensor);
  auto type = cast<MemRefType>(host.getType());
  SmallVector<Value> dims = getDims(b, loc, host);
  Value bytes = arith::MulIOp::create(
      b, loc, sizes.product(dims),
      sizes.index(elementBytes(type.getElementType())));
  auto alloc = gpu::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
      tokenType, ValueRange{token}, ValueRange{bytes}, ValueRange{});
  token = alloc.getAsyncToken();
  if (!isOutput(tensor)) {
    // Through contiguous host memory: the argument may be strided.
    auto contiguous = MemRefType::get(type.getShape(), type.getElementType());
    SmallVector<Value> dynamic;
    for (auto [extent, dim] : llvm::zip(type.getShape(), dims))
      if (ShapedType::isDynamic(extent))
        dynamic.push_back(dim);
    Value staging = memref::AllocOp::create(b, loc, contiguous, dynamic);
    memref::CopyOp::create(b, loc, host, staging);
    stagingBuffers.push_back(staging);
    Value view = viewOf(b, loc, alloc.getMemref(), contiguous, dims);
    token = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token}, view,
                                  staging)
                .getAsyncToken();
  }
  return buffers[tensor] = alloc.getMemref();
}

FailureOr<Value> LaunchBodyBuilder::tensorMap(const json::Object &param,
                                              Value buffer, Type type) {
  std::optional<StringRef> name = param.getString("name");
  const json::Array *maps = manifest.getArray("tensor_maps");
  const json::Object *spec = nullptr;
  if (maps)
    for (const json::Value &m : *maps)
      if (m.getAsObject() && m.getAsObject()->getString("param") == name)
        spec = m.getAsObject();
  if (!spec)
    return error() << "no tensor map for parameter '" << name.value_or("")
                   << "' in the manifest";
  Value host = hostBuffers.lookup(*param.getString("tensor"));
  Type elt = cast<MemRefType>(host.getType()).getElementType();
  const json::Object *enums = spec->getObject("cuda_enums");
  const json::Array *box = spec->getArray("box");
  const json::Array *elementStrides = spec->getArray("element_strides");
  if (!enums || !box || !elementStrides)
    return error() << "malformed tensor map in the manifest";
  if (enums->getInteger("tensorDataType") != tensorMapDataType(elt))
    return error() << "the tensor map of '" << *name << "' has a data type ("
                   << enums->getInteger("tensorDataType").value_or(-1)
                   << ") that nvgpu.tma.create.descriptor does not derive "
                      "from "
                   << elt;
  for (const json::Value &s : *elementStrides)
    if (s.getAsInteger() != 1)
      return error() << "the tensor map of '" << *name
                     << "' has element strides other than 1, which "
                        "nvgpu.tma.create.descriptor cannot express";
  // dims and byte strides are innermost first; the memref is outermost first.
  FailureOr<SmallVector<Value>> dims = sizes.sizes(spec->getArray("dims"));
  FailureOr<SmallVector<Value>> strides =
      sizes.sizes(spec->getArray("strides_bytes"));
  if (failed(dims) || failed(strides))
    return failure();
  if (strides->size() + 1 != dims->size() || box->size() != dims->size())
    return error() << "malformed tensor map in the manifest";
  int64_t rank = dims->size();
  Value eltBytes = sizes.index(elementBytes(elt));
  SmallVector<OpFoldResult> memrefSizes, memrefStrides;
  SmallVector<int64_t> boxShape;
  SmallVector<Value> boxValues;
  for (int64_t i = rank - 1; i >= 0; --i) {
    memrefSizes.push_back((*dims)[i]);
    memrefStrides.push_back(
        i == 0 ? OpFoldResult(b.getIndexAttr(1))
               : OpFoldResult(arith::DivUIOp::create(b, loc, (*strides)[i - 1],
                                                     eltBytes)
                                  .getResult()));
    int64_t extent = (*box)[i].getAsInteger().value_or(0);
    boxShape.push_back(extent);
    boxValues.push_back(sizes.index(extent));
  }
  Value flat = viewOf(b, loc, buffer,
                      MemRefType::get({ShapedType::kDynamic}, elt),
                      {sizes.product(*dims)});
  SmallVector<int64_t> dynamic(rank, ShapedType::kDynamic);
  SmallVector<int64_t> dynamicStrides(rank, ShapedType::kDynamic);
  dynamicStrides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(b.getContext(), /*offset=*/0, dynamicStrides);
  Value strided = memref::ReinterpretCastOp::create(
      b, loc, MemRefType::get(dynamic, elt, layout), flat, b.getIndexAttr(0),
      memrefSizes, memrefStrides);
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(elt, /*memorySpace=*/0), strided);
  auto enumOf = [&](StringRef key) {
    return static_cast<uint32_t>(enums->getInteger(key).value_or(0));
  };
  auto swizzle = nvgpu::symbolizeTensorMapSwizzleKind(enumOf("swizzle"));
  auto l2 = nvgpu::symbolizeTensorMapL2PromoKind(enumOf("l2Promotion"));
  auto oob = nvgpu::symbolizeTensorMapOOBKind(enumOf("oobFill"));
  auto interleave =
      nvgpu::symbolizeTensorMapInterleaveKind(enumOf("interleave"));
  if (!swizzle || !l2 || !oob || !interleave)
    return error() << "the tensor map of '" << *name
                   << "' has an encoding nvgpu cannot express";
  auto descType = nvgpu::TensorMapDescriptorType::get(
      b.getContext(),
      MemRefType::get(boxShape, elt, MemRefLayoutAttrInterface(),
                      b.getI64IntegerAttr(3)),
      *swizzle, *l2, *oob, *interleave);
  Value desc = nvgpu::TmaCreateDescriptorOp::create(b, loc, descType, unranked,
                                                    boxValues);
  // The kernel takes the descriptor as a pointer to device memory: the
  // type upstream lowers the descriptor to.
  Value pointer =
      UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
  tensorMaps.push_back(pointer);
  return pointer;
}

FailureOr<Value> LaunchBodyBuilder::kernelOperand(const json::Object &param,
                                                  Type type) {
  std::optional<StringRef> kind = param.getString("type");
  std::optional<StringRef> name = param.getString("name");
  if (kind == "i32") {
    auto it = name ? sizes.symbols.find(*name) : sizes.symbols.end();
    if (it == sizes.symbols.end())
      return error() << "unknown size parameter '" << name.value_or("")
                     << "' in the manifest";
    return Value(arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                              it->second));
  }
  std::optional<StringRef> tensor = param.getString("tensor");
  if (tensor && isWorkspace(*tensor)) {
    // The tile counter: 8 zeroed bytes of its own for this launch (freed
    // with the other buffers).
    auto counterType = MemRefType::get({2}, b.getI32Type());
    auto alloc = gpu::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
        tokenType, ValueRange{token}, ValueRange{sizes.index(8)},
        ValueRange{});
    Value counter = viewOf(b, loc, alloc.getMemref(), counterType, {});
    token = gpu::MemsetOp::create(
                b, loc, tokenType, ValueRange{alloc.getAsyncToken()}, counter,
                arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0))
                .getAsyncToken();
    buffers[*tensor] = alloc.getMemref();
    if (auto memref = dyn_cast<MemRefType>(type))
      return viewOf(b, loc, alloc.getMemref(), memref, {});
    return error() << "kernel parameter '" << name.value_or("")
                   << "' has a type the host launch cannot pass: " << type;
  }
  if (!tensor || !hostBuffers.count(*tensor))
    return error() << "kernel parameter '" << name.value_or("")
                   << "' names no tensor of the launch";
  Value buffer = deviceBuffer(*tensor);
  if (kind == "tensormap")
    return tensorMap(param, buffer, type);
  if (auto memref = dyn_cast<MemRefType>(type))
    return viewOf(b, loc, buffer, memref, {});
  if (isa<LLVM::LLVMPointerType>(type)) {
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
    return Value(LLVM::IntToPtrOp::create(b, loc, type, i64));
  }
  return error() << "kernel parameter '" << name.value_or("")
                 << "' has a type the host launch cannot pass: " << type;
}

LogicalResult LaunchBodyBuilder::build() {
  auto kernel = launch->getAttrOfType<SymbolRefAttr>(kKernelAttr);
  auto argTypes = launch->getAttrOfType<ArrayAttr>(kArgTypesAttr);
  auto tensors = launch->getAttrOfType<ArrayAttr>(kTensorsAttr);
  if (!kernel || !argTypes || !tensors ||
      tensors.size() != launch.getNumArguments())
    return launch.emitError("fa-emit-host-launch: malformed launch "
                            "declaration");
  Block *body = launch.addEntryBlock();
  b.setInsertionPointToStart(body);
  for (auto [name, arg] : llvm::zip(tensors, body->getArguments()))
    hostBuffers[cast<StringAttr>(name).getValue()] = arg;
  Value q = hostBuffers.lookup("q"), k = hostBuffers.lookup("k");
  if (!q || !k)
    return launch.emitError("fa-emit-host-launch: the launch takes no q or k");
  auto dim = [&](Value m, int64_t i) -> Value {
    return memref::DimOp::create(b, loc, m, i);
  };
  sizes.symbols["B"] = dim(q, 0);
  sizes.symbols["Hq"] = dim(q, 1);
  sizes.symbols["Nq"] = dim(q, 2);
  sizes.symbols["D"] = dim(q, 3);
  sizes.symbols["Hkv"] = dim(k, 1);
  sizes.symbols["Nk"] = dim(k, 2);

  token = gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  const json::Array *params = manifest.getArray("params");
  if (!params || params->size() != argTypes.size())
    return error() << "the manifest's parameters do not match the kernel's";
  SmallVector<Value> operands;
  for (auto [param, type] : llvm::zip(*params, argTypes)) {
    const json::Object *p = param.getAsObject();
    if (!p)
      return error() << "malformed parameter in the manifest";
    FailureOr<Value> v =
        kernelOperand(*p, cast<TypeAttr>(type).getValue());
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<SmallVector<Value>> grid = sizes.sizes(manifest.getArray("grid"));
  const json::Array *block = manifest.getArray("block");
  if (failed(grid) || grid->size() != 3 || !block || block->size() != 3)
    return error() << "the manifest needs a 3-D grid and block";
  SmallVector<Value> threads;
  for (const json::Value &t : *block)
    threads.push_back(sizes.index(t.getAsInteger().value_or(1)));
  Value smem = arith::ConstantIntOp::create(
      b, loc, b.getI32Type(),
      manifest.getInteger("dynamic_shared_memory_bytes").value_or(0));
  token = gpu::LaunchFuncOp::create(
              b, loc, kernel,
              gpu::KernelDim3{(*grid)[0], (*grid)[1], (*grid)[2]},
              gpu::KernelDim3{threads[0], threads[1], threads[2]}, smem,
              operands, tokenType, ValueRange{token})
              .getAsyncToken();

  // Outputs back to the caller's memrefs, buffers freed, the stream drained.
  for (auto &[tensor, buffer] : buffers) {
    if (!isOutput(tensor))
      continue;
    Value host = hostBuffers.lookup(tensor);
    Value view = viewOf(b, loc, buffer, cast<MemRefType>(host.getType()),
                        getDims(b, loc, host));
    token = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token}, host,
                                  view)
                .getAsyncToken();
  }
  for (auto &entry : buffers)
    token = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token},
                                   entry.second)
                .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
  for (Value staging : stagingBuffers)
    memref::DeallocOp::create(b, loc, staging);
  if (!tensorMaps.empty()) {
    auto module = launch->getParentOfType<ModuleOp>();
    if (!module.lookupSymbol(kFreeTensorMapFunction)) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(
          b, loc, kFreeTensorMapFunction,
          b.getFunctionType({tensorMaps.front().getType()}, {}))
          .setPrivate();
    }
    for (Value map : tensorMaps)
      func::CallOp::create(b, loc, kFreeTensorMapFunction, TypeRange{},
                           ValueRange{map});
  }
  func::ReturnOp::create(b, loc);
  for (StringRef attr : {kKernelAttr, kManifestAttr, kArgTypesAttr,
                         kTensorsAttr})
    launch->removeAttr(attr);
  return success();
}

namespace {
struct FAEmitHostLaunchPass
    : public fa::impl::FAEmitHostLaunchPassBase<FAEmitHostLaunchPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> launches;
    getOperation().walk([&](func::FuncOp f) {
      if (f.isExternal() && f->hasAttr(kKernelAttr))
        launches.push_back(f);
    });
    for (func::FuncOp launch : launches) {
      auto text = launch->getAttrOfType<StringAttr>(kManifestAttr);
      llvm::Expected<json::Value> parsed =
          text ? json::parse(text.getValue())
               : llvm::Expected<json::Value>(json::Value(nullptr));
      if (!parsed || !parsed->getAsObject()) {
        if (!parsed)
          llvm::consumeError(parsed.takeError());
        launch.emitError("fa-emit-host-launch: the launch manifest is not "
                         "a JSON object");
        return signalPassFailure();
      }
      json::Object manifest = std::move(*parsed->getAsObject());
      if (failed(LaunchBodyBuilder(launch, manifest).build()))
        return signalPassFailure();
    }
  }
};
} // namespace
