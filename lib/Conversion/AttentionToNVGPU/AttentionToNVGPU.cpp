//===- AttentionToNVGPU.cpp - the conversion passes, dispatch per chip ----===//
//
// convert-fa-to-nvgpu and fa-tile-attention-for-chip: the passes, the
// placement and option checks, the kernel names, and the dispatch of a
// TiledAttention (read by Common/TiledAttentionMatcher.cpp) to the chip's
// kernel builder. See Passes.td for the contract and docs/GPUBackend.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Conversion/AttentionToNVGPU/Common/HostLaunch.h"
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"

#include <optional>

namespace mlir::fa {
#define GEN_PASS_DEF_CONVERTFATONVGPUPASS
#define GEN_PASS_DEF_FATILEATTENTIONFORCHIPPASS
#include "fa/Conversion/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

NVGPUTileSizes mlir::fa::getNVGPUTileSizes(StringRef chip, int64_t headDim,
                                           bool maskBand, bool fp8) {
  // sm_80: 128 query rows (4 warps x 32 rows) per block; 64 keys per step,
  // but 32 at head dim 128, where 64 spill registers (S and the 32 x 128 f32
  // accumulators of a warp no longer fit 255 registers).
  if (chip == "sm_80")
    return {128, headDim == 128 ? 32 : 64};
  // sm_90a: two consumer warpgroups of 64 rows; 128-key TMA tiles, but 80 at
  // head dim 256 (FlashAttention-3's tile: 2 stages fit shared memory), and
  // 64 there with a causal band or a window (80 spills registers).
  if (chip == "sm_90a") {
    // fp8: a 128-key tile is one 128-byte swizzle row of V^T; Q, K and V
    // take half the bytes, so it fits at head dim 256 too.
    if (headDim != 256 || fp8)
      return {kSM90BlockQ, kSM90BlockKV};
    return {kSM90BlockQ, maskBand ? kSM90BlockKVD256Band : kSM90BlockKVD256};
  }
  return {64, 64};
}

std::string mlir::fa::getPTXIdentifier(StringRef name) {
  // PTX: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+. The kernel names add
  // a suffix, so a lone leading '_' is fine.
  std::string id;
  if (name.empty() || llvm::isDigit(name.front()))
    id.push_back('_');
  for (char c : name)
    id.push_back(llvm::isAlnum(c) || c == '_' || c == '$' ? c : '_');
  return id;
}

/// The function's kernel names must be PTX identifiers that are free in its
/// module, and the function itself must be unused (the builders erase it)
/// unless its body becomes the host launch (`hostLaunch`: callers keep
/// calling it, under its new name). Renames `func` to its PTX identifier,
/// which the builders derive the kernel's names from; returns the name to
/// restore if they fail.
FailureOr<std::string> mlir::fa::prepareKernelFunction(func::FuncOp func,
                                                      bool hostLaunch) {
  Operation *symbolTable = SymbolTable::getNearestSymbolTable(func->getParentOp());
  if (!symbolTable)
    return func.emitError("convert-fa-to-nvgpu: the function must be in a "
                          "module (the kernel's gpu.module goes next to it)");
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, symbolTable);
  if (!hostLaunch && uses && !uses->empty()) {
    InFlightDiagnostic diag =
        func.emitError("convert-fa-to-nvgpu: @")
        << func.getSymName()
        << " is still referenced; the conversion replaces the function by a "
           "GPU kernel (launch it from the host through its manifest instead "
           "of calling it)";
    diag.attachNote(uses->begin()->getUser()->getLoc()) << "referenced here";
    return failure();
  }
  std::string original = func.getSymName().str();
  std::string id = getPTXIdentifier(original);
  // The builders name the gpu.module <id>_kernels and the kernel <id>_kernel
  // (inside it); the renamed function itself must not shadow another symbol.
  auto checkFree = [&](const std::string &name,
                       StringRef what) -> LogicalResult {
    Operation *other = SymbolTable::lookupSymbolIn(symbolTable, name);
    if (!other || other == func.getOperation())
      return success();
    InFlightDiagnostic diag = func.emitError("convert-fa-to-nvgpu: ")
                              << what << " '" << name << "' of @" << original
                              << " collides with an existing symbol; rename "
                                 "one of them";
    diag.attachNote(other->getLoc()) << "'" << name << "' is defined here";
    return failure();
  };
  if (id != original &&
      failed(checkFree(id, "the PTX identifier (invalid characters replaced "
                           "by '_')")))
    return failure();
  if (failed(checkFree(id + "_kernels", "the kernel module name")))
    return failure();
  if (id != original) {
    if (hostLaunch &&
        failed(SymbolTable::replaceAllSymbolUses(
            func, StringAttr::get(func.getContext(), id), symbolTable)))
      return func.emitError("convert-fa-to-nvgpu: cannot rename @")
             << original << " to its PTX identifier '" << id << "'";
    func.setSymName(id);
  }
  return original;
}

/// What the kernels do not take with varlen yet.
static LogicalResult checkVarlenSupport(const TiledAttention &attn,
                                        StringRef chip,
                                        const NVGPUKernelOptions &options) {
  if (!attn.isVarlen())
    return success();
  if (options.hostLaunch)
    return attn.forall->emitOpError("convert-fa-to-nvgpu{host-launch} does "
                                    "not support varlen yet (fa-to-gpu); "
                                    "compile the attention with fa-to-ptx and "
                                    "launch it through the manifest");
  if (chip != "sm_90a")
    return attn.forall->emitOpError("the ")
           << chip << " kernel does not support varlen yet (sm_90a does)";
  if (attn.modifiers.mask)
    return attn.forall->emitOpError("the ")
           << chip
           << " kernel does not support varlen together with a mask "
              "operand";
  return success();
}

/// What the kernels do not take with kv_lens or pages yet.
static LogicalResult checkKVCacheSupport(const TiledAttention &attn,
                                         StringRef chip,
                                         const NVGPUKernelOptions &options) {
  if (!attn.kvLensArg && !attn.pageTableArg)
    return success();
  StringRef what = attn.pageTableArg ? "pages" : "kv_lens";
  if (options.hostLaunch)
    return attn.forall->emitOpError("convert-fa-to-nvgpu{host-launch} does "
                                    "not support ")
           << what << " yet (fa-to-gpu); compile the attention with fa-to-ptx "
                      "and launch it through the manifest";
  const ScoreModifierSpec &m = attn.modifiers;
  if (m.mask || m.scoreMod || m.maskMod || attn.descaleArgs)
    return attn.forall->emitOpError("the ")
           << chip << " kernel does not support " << what
           << " together with a mask operand, score_mod / mask_mod or fp8 "
              "descales yet";
  if (attn.pageSize % 16)
    return attn.forall->emitOpError("the ")
           << chip << " kernel needs pages of a multiple of 16 rows, got "
           << attn.pageSize;
  return success();
}

LogicalResult mlir::fa::buildNVGPUKernel(const TiledAttention &attn,
                                         StringRef chip,
                                         const NVGPUKernelOptions &options) {
  if (chip != "sm_80" && chip != "sm_90a")
    return attn.forall->emitOpError("unsupported chip '")
           << chip << "' for convert-fa-to-nvgpu (supported: sm_80, sm_90a)";
  if (failed(checkKVCacheSupport(attn, chip, options)) ||
      failed(checkVarlenSupport(attn, chip, options)))
    return failure();
  func::FuncOp func = attn.func;
  FailureOr<std::string> original =
      prepareKernelFunction(func, options.hostLaunch);
  if (failed(original))
    return failure();
  TiledAttention named = attn;
  named.sourceName = *original;
  // A paged tiled form steps through one page (or part of one) at a time;
  // the kernels keep their own key blocks and load the pages of each.
  if (named.pageSize)
    named.blockKV =
        getNVGPUTileSizes(chip, named.headDim, named.hasWindow()).blockKV;
  LogicalResult built = chip == "sm_80"
                            ? buildSM80FlashAttention(named, chip, options)
                            : buildSM90FlashAttention(named, options);
  if (succeeded(built)) {
    // The function either becomes the launch or goes (the manifest and
    // fa-dump-kernel's PTX are what launches the kernel).
    if (options.hostLaunch)
      return buildHostLaunch(named, (func.getSymName() + "_kernels").str());
    func.erase();
    return success();
  }
  // A builder that fails leaves the function in place: give its name back.
  if (func.getSymName() != *original) {
    if (options.hostLaunch)
      (void)SymbolTable::replaceAllSymbolUses(
          func, StringAttr::get(func.getContext(), *original),
          SymbolTable::getNearestSymbolTable(func->getParentOp()));
    func.setSymName(*original);
  }
  return built;
}


namespace {
struct ConvertFAToNVGPUPass
    : public fa::impl::ConvertFAToNVGPUPassBase<ConvertFAToNVGPUPass> {
  using Base::Base;
  ConvertFAToNVGPUPass(const ConvertFAToNVGPUPass &other)
      : Base(other), pipelineSchedule(other.pipelineSchedule) {}

  // The sm_90a schedule options, one per switch of SM90/Schedule.def.
#include "fa/Conversion/AttentionToNVGPU/SM90/ScheduleOptions.inc"

  /// Set when a pipeline (fa-to-ptx) created the pass: its schedule options,
  /// with the pipeline named as their source in diagnostics.
  std::optional<SM90ScheduleOptions> pipelineSchedule;

  /// The integer options the chip builders read: a negative rows-per-warp
  /// (0 is the chip's default) and options of the other chip, which its
  /// builder would ignore, are rejected on `f` naming the option. The
  /// builders and the schedule resolution check the ranges they support.
  LogicalResult checkOptions(func::FuncOp f) {
    auto check = [&](StringRef name, int64_t value,
                     StringRef onlyChip) -> LogicalResult {
      if (value < 0)
        return f.emitError("convert-fa-to-nvgpu: option ")
               << name << " must be >= 0 (0: the chip's default), got "
               << value;
      if (value != 0 && chip != onlyChip && (chip == "sm_80" || chip == "sm_90a"))
        return f.emitError("convert-fa-to-nvgpu: option ")
               << name << " applies to chip=" << onlyChip << " only, got "
               << name << "=" << value << " with chip=" << chip;
      return success();
    };
    if (varlenLayout != "thd" && varlenLayout != "htd")
      return f.emitError("convert-fa-to-nvgpu: option varlen-layout must be "
                         "thd or htd, got '")
             << varlenLayout << "'";
    // On sm_90a the range of stages is checked with the other schedule
    // switches (resolveSM90Schedule).
    return success(succeeded(check("rows-per-warp", rowsPerWarp, "sm_80")) &&
                   (chip == "sm_90a" || succeeded(check("stages", stages,
                                                        "sm_90a"))));
  }

  void runOnOperation() override {
    if (failed(checkAttentionPlacement(getOperation(), "convert-fa-to-nvgpu")))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs;
    SmallVector<std::pair<func::FuncOp, AttentionGradOp>> gradFuncs;
    getOperation().walk([&](func::FuncOp f) {
      // A function with an fa.attention_grad becomes the backward kernel
      // (buildAttentionGradKernel checks it holds nothing else).
      f.walk([&](AttentionGradOp op) {
        if (gradFuncs.empty() || gradFuncs.back().first != f)
          gradFuncs.push_back({f, op});
      });
      if (!gradFuncs.empty() && gradFuncs.back().first == f)
        return;
      if (f.walk([](Operation *op) {
             // A stray fa.kv_block_range is no kernel either: the matcher
             // reports it rather than leaving it in the output.
             return isa<AttentionOp, OnlineAttentionOp, KVBlockRangeOp>(op)
                        ? WalkResult::interrupt()
                        : WalkResult::advance();
           }).wasInterrupted())
        funcs.push_back(f);
    });
    if (!funcs.empty() && mlir::failed(checkOptions(funcs.front())))
      return signalPassFailure();
    bool failed = false;
    for (auto [f, op] : gradFuncs) {
      NVGPUKernelOptions options;
      options.rowsPerWarp = rowsPerWarp;
      options.hostLaunch = hostLaunch;
      options.deterministic = deterministic;
      options.varlenTokenMajor = varlenLayout == "thd";
      failed |= mlir::failed(buildAttentionGradKernel(f, op, chip, options));
    }
    for (func::FuncOp f : funcs) {
      FailureOr<TiledAttention> attn = matchTiledAttention(f);
      NVGPUKernelOptions options;
      options.rowsPerWarp = rowsPerWarp;
      options.hostLaunch = hostLaunch;
      options.varlenTokenMajor = varlenLayout == "thd";
      options.sm90 = pipelineSchedule
                         ? *pipelineSchedule
                         : getSM90ScheduleOptions(*this, getArgument());
      failed |= mlir::failed(attn) ||
                mlir::failed(buildNVGPUKernel(*attn, chip, options));
    }
    if (failed)
      signalPassFailure();
  }
};
} // namespace

namespace {
struct FATileAttentionForChipPass
    : public fa::impl::FATileAttentionForChipPassBase<
          FATileAttentionForChipPass> {
  using Base::Base;
  void runOnOperation() override {
    // Nested modules and non-function regions would be left untiled.
    // fa.attention_grad is left as it is: convert-fa-to-nvgpu builds the
    // backward kernel from the op (its tiling is the kernel's).
    if (failed(checkAttentionPlacement(getOperation(),
                                       "fa-tile-attention-for-chip")))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      SmallVector<AttentionOp> ops;
      f.walk([&](AttentionOp op) { ops.push_back(op); });
      if (ops.empty())
        continue;
      NVGPUTileSizes sizes = getNVGPUTileSizes(
          chip, ops.front().getQueryType().getDimSize(3),
          ops.front().hasPositionalMask(),
          ops.front().getQueryType().getElementType().isFloat(8));
      FATileAttentionPassOptions tile;
      tile.blockQ = blockQ ? blockQ : sizes.blockQ;
      tile.blockKV = blockKV ? blockKV : sizes.blockKV;
      // A function's fa.sm90.block_kv (like the other fa.sm90.* schedule
      // attributes, all checked here) wins over the option for its kernel.
      if (chip == "sm_90a") {
        FailureOr<std::optional<int64_t>> override = getSM90BlockKVOverride(f);
        if (failed(override))
          return signalPassFailure();
        if (*override)
          tile.blockKV = **override;
      }
      OpPassManager pm(func::FuncOp::getOperationName());
      pm.addPass(createFATileAttentionPass(tile));
      if (failed(runPipeline(pm, f)))
        return signalPassFailure();
    }
  }
};
} // namespace

std::unique_ptr<Pass>
mlir::fa::createConvertFAToNVGPUPass(const ConvertFAToNVGPUPassOptions &options,
                                     const SM90ScheduleOptions &schedule) {
  auto pass = std::make_unique<ConvertFAToNVGPUPass>(options);
  setSM90ScheduleOptions(*pass, schedule);
  pass->pipelineSchedule = schedule;
  return pass;
}
