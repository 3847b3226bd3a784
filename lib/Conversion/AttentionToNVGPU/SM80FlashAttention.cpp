//===- SM80FlashAttention.cpp - the sm_80 kernel's entry point ------------===//
//
// convert-fa-to-nvgpu{chip=sm_80}: checks a matched tiled attention against
// what the FlashAttention-2 kernel supports, has SM80/Kernel.cpp build the
// kernel, attaches the launch manifest and replaces the function. See
// Passes.td for the contract and docs/SM80.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Conversion/AttentionToNVGPU/Common/OnlineSoftmax.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/Kernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::fa;

LogicalResult
mlir::fa::buildSM80FlashAttention(const TiledAttention &attn, StringRef chip,
                                  const NVGPUKernelOptions &options) {
  func::FuncOp func = attn.func;
  Operation *at = attn.forall;
  Type elt = attn.elementType;
  if (!elt.isF16() && !elt.isBF16())
    return at->emitOpError("sm_80 kernel needs f16 or bf16 inputs, got ")
           << elt;
  int64_t headDim = attn.headDim;
  if (headDim != 64 && headDim != 128)
    return at->emitOpError("sm_80 kernel supports head dim 64 or 128, got ")
           << headDim;
  int64_t blockQ = attn.blockQ, blockKV = attn.blockKV;
  if ((blockKV != 32 && blockKV != 64) || (blockQ != 64 && blockQ != 128))
    return at->emitOpError("sm_80 kernel needs block-q 64 or 128 and "
                           "block-kv 32 or 64, got block-q ")
           << blockQ << ", block-kv " << blockKV;
  // Each warp owns rowsPerWarp query rows (mTiles m16 tiles: every K and V
  // fragment read from shared memory feeds mTiles mma); at least 4 warps.
  // Default: 32 rows (fewer shared-memory reads per mma) when that still
  // leaves 4 warps, else 16.
  int64_t rowsPerWarp = options.rowsPerWarp ? options.rowsPerWarp
                        : blockQ >= 128     ? 32
                                            : 16;
  if ((rowsPerWarp != 16 && rowsPerWarp != 32) || blockQ / rowsPerWarp < 4)
    return at->emitOpError("sm_80 kernel needs rows-per-warp 16 or 32 with "
                           "at least 4 warps, got rows-per-warp ")
           << rowsPerWarp << " for block-q " << blockQ;
  // Conditional rescaling (the rescale-threshold option, declared with the
  // sm_90a schedule; 0: the measured default). Measured on the H200
  // (bench/results/rescale_h200_2026-12-03_s25): threshold 8 is 1.04-1.05x
  // at D = 64 and 1.04-1.15x at D = 128 (the 32-key steps rescale O's 128
  // accumulators every 32 keys).
  int64_t rescaleThreshold = options.sm90.rescaleThreshold
                                 ? options.sm90.rescaleThreshold
                                 : kernel::kDefaultRescaleThreshold;
  if (rescaleThreshold < kernel::kRescaleEveryStep ||
      rescaleThreshold > kernel::kMaxRescaleThreshold)
    return at->emitOpError("sm_80 kernel: option rescale-threshold must be 0 "
                           "(auto), -1 (every step) or in [1, ")
           << kernel::kMaxRescaleThreshold << "], got " << rescaleThreshold;
  sm80::KernelConfig cfg;
  cfg.kernelName = (func.getSymName() + "_kernel").str();
  cfg.moduleName = (func.getSymName() + "_kernels").str();
  cfg.elementType = elt;
  cfg.headDim = headDim;
  cfg.blockQ = blockQ;
  cfg.blockKV = blockKV;
  cfg.rowsPerWarp = rowsPerWarp;
  cfg.windowLeft = attn.windowLeft;
  cfg.windowRight = attn.windowRight;
  cfg.scale = attn.scale;
  cfg.hasLse = attn.hasLse;
  cfg.rescaleThreshold = rescaleThreshold;
  cfg.modifiers = attn.modifiers;
  cfg.kvCache.kvLens = attn.kvLensArg.has_value();
  cfg.kvCache.pageSize = attn.pageSize;
  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder b(func);
  std::vector<KernelParam> params = sm80::getKernelParams(b.getContext(), cfg);
  gpu::GPUFuncOp kfn = sm80::buildKernel(b, at->getLoc(), cfg, params);
  sm80::SharedMemoryPlan plan = sm80::SharedMemoryPlan::of(cfg);
  bool dynamicSmem = plan.dynamic;
  int64_t smemBytes = plan.bytes, threads = cfg.threads();
  bool hasLse = cfg.hasLse;
  double scale = cfg.scale;
  int64_t winLeft = attn.windowLeft, winRight = attn.windowRight;
  std::string kernelName = cfg.kernelName, modName = cfg.moduleName;

  // The launch manifest, for code without MLIR.
  using Sym = fa::SizeSymbol;
  fa::LaunchManifest manifest;
  manifest.kernel = kernelName;
  manifest.chip = chip.str();
  manifest.function =
      attn.sourceName.empty() ? func.getSymName().str() : attn.sourceName;
  manifest.dtype = elt.isF16() ? "f16" : "bf16";
  manifest.headDim = headDim;
  manifest.causal = attn.isCausal();
  manifest.windowLeft = winLeft;
  manifest.windowRight = winRight;
  manifest.scale = scale;
  manifest.lse = hasLse;
  manifest.blockQ = blockQ;
  manifest.blockKV = blockKV;
  manifest.kvLens = cfg.kvCache.kvLens;
  manifest.pageSize = cfg.kvCache.pageSize;
  manifest.params = std::move(params);
  manifest.grid = {fa::SizeExpr::ceilDiv(Sym::Nq, blockQ), Sym::Hq, Sym::B};
  manifest.block = {threads, 1, 1};
  // The lowering declares the dynamic buffer as a 1-byte .shared symbol (in
  // the static window); 128 bytes of slack keep every access inside the
  // block's allocation.
  manifest.dynamicSharedMemoryBytes = dynamicSmem ? smemBytes + 128 : 0;
  manifest.staticSharedMemoryBytes = dynamicSmem ? 0 : smemBytes;
  manifest.schedule = {{"rows_per_warp", rowsPerWarp},
                       {"rescale_threshold", rescaleThreshold}};
  if (failed(manifest.verify(kfn)))
    return failure();
  fa::attachLaunchManifest(module, modName, kernelName,
                           manifest.toJSONString());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return success();
}

