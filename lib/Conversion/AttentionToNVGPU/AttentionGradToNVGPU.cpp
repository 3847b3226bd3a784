//===- AttentionGradToNVGPU.cpp - fa.attention_grad to the backward kernel ===//
//
// convert-fa-to-nvgpu on a function that computes one fa.attention_grad:
// checks what the backward kernel supports, builds it (SM80/BackwardKernel,
// mma.sync, for sm_80; SM90/BackwardKernel, wgmma, for sm_90a),
// attaches its launch manifest and erases the function. The kernel tiles as fa-tile-attention-grad does
// (a key block per CTA, query blocks streamed); it is built from the op
// itself, whose attributes say all the kernel needs. See docs/Backward.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Conversion/AttentionToNVGPU/Common/BackwardRowKernels.h"
#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Conversion/AttentionToNVGPU/SM80/BackwardKernel.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/BackwardKernel.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::fa;

/// Keys per CTA unless the function's fa.grad.block_kv says otherwise
/// (measured on the H200: bench/results/backward_h200_2026-12-01).
static constexpr int64_t kDefaultGradBlockKV = 128;

/// The function must be exactly `return fa.attention_grad(args...)`: the
/// kernel replaces it, and its manifest says how to call the kernel instead.
/// Arguments after the op's six operands are tensors its regions read
/// (checked by gradModifiers).
static LogicalResult checkGradFunction(func::FuncOp func, AttentionGradOp op) {
  auto fail = [&]() {
    return op.emitOpError(
        "convert-fa-to-nvgpu: the backward kernel replaces the whole "
        "function: it must take q, k, v, out, lse, do (then the mask, or "
        "with varlen cu_seqlens_q, cu_seqlens_k) as its first arguments (in "
        "that order, "
        "then only tensors its regions read), compute only this "
        "fa.attention_grad and return dq, dk, dv (then the grad_captures' "
        "gradients)");
  };
  Block &body = func.getBody().front();
  // grad_captures are among the tensors the regions read (gradModifiers).
  unsigned leading = op->getNumOperands() - op.getGradCaptures().size();
  if (body.getOperations().size() != 2 || op->getBlock() != &body ||
      body.getNumArguments() < leading)
    return fail();
  for (auto [i, operand] :
       llvm::enumerate(op->getOperands().take_front(leading)))
    if (operand != body.getArgument(i))
      return fail();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || ret.getOperands() != op->getResults())
    return fail();
  return success();
}

/// grad_captures as the kernels form them: the captured arguments (function
/// arguments the regions read, in spec.captures) and score_mod_grad's terms,
/// whose coefficients and indices must not depend on the score (the kernels
/// evaluate them where dS is formed, without it).
static LogicalResult captureGradSpec(AttentionGradOp op,
                                     ScoreModifierSpec &spec) {
  if (op.getGradCaptures().empty())
    return success();
  for (Value capture : op.getGradCaptures()) {
    auto arg = dyn_cast<BlockArgument>(capture);
    const ScoreModifierSpec::Capture *read =
        arg ? llvm::find_if(spec.captures,
                            [&](const ScoreModifierSpec::Capture &c) {
                              return c.arg == arg.getArgNumber();
                            })
            : spec.captures.end();
    if (read == spec.captures.end())
      return op.emitOpError("convert-fa-to-nvgpu: a grad_captures tensor "
                            "must be a function argument score_mod reads");
    spec.captureGrads.push_back(*read);
  }
  ArrayRef<int64_t> terms =
      op.getCaptureGradTerms().value_or(ArrayRef<int64_t>());
  Block &body = op.getScoreModGrad()->front();
  BlockArgument score = body.getArgument(0), row = body.getArgument(3),
                col = body.getArgument(4);
  ValueRange yielded = body.getTerminator()->getOperands();
  size_t at = 2;
  for (int64_t term : terms) {
    int64_t rank = spec.captureGrads[term].type.getRank();
    for (Value v : yielded.slice(at, 1 + rank))
      if (dependsOnRegionArgument(v, score))
        return op.emitOpError(
                   "convert-fa-to-nvgpu: the backward kernels form the "
                   "gradient of a captured tensor only where its coefficient "
                   "and indices do not depend on the score (score_mod adds "
                   "the captured values: s + bias[...], s + slope[h] * (j - "
                   "i)); capture_grad_terms entry ")
               << term << " does (fa-to-cpu forms it)";
    ValueRange indices = yielded.slice(at + 1, rank);
    spec.captureGradTerms.push_back(
        {term, llvm::none_of(indices, [&](Value index) {
           return dependsOnRegionArgument(index, row) ||
                  dependsOnRegionArgument(index, col);
         })});
    at += 1 + rank;
  }
  return success();
}

/// The op's softcap and regions as the kernels apply them: score_mod through
/// its derivative region, mask_mod, and the tensors they read (every
/// argument after the op's operands must be one).
static FailureOr<ScoreModifierSpec> gradModifiers(func::FuncOp func,
                                                  AttentionGradOp op,
                                                  std::optional<double> softcap) {
  ScoreModifierSpec spec;
  if (op.getScoreMod() && !op.getScoreModGrad())
    return op.emitOpError(
        "convert-fa-to-nvgpu: the backward kernel needs score_mod's "
        "derivative (the score_mod_grad region): run "
        "fa-differentiate-score-mod first (fa-to-ptx does)");
  spec.scoreModGrad = op.getScoreModGrad();
  spec.maskMod = op.getMaskMod();
  if (spec.maskMod)
    spec.maskModBound = boundMaskMod(*spec.maskMod);
  if (Value mask = op.getMask()) {
    // The forward's mask operand: argument 6 (checkGradFunction); a dim of
    // static size 1 broadcasts.
    auto type = cast<RankedTensorType>(mask.getType());
    ScoreModifierSpec::Mask m;
    m.arg = 6;
    m.elementType = type.getElementType();
    m.batchBroadcast = type.getDimSize(0) == 1;
    m.headBroadcast = type.getDimSize(1) == 1;
    m.rowBroadcast = type.getDimSize(2) == 1;
    spec.mask = m;
  }
  if (spec.hasRegions() || spec.mask)
    spec.softcap = softcap;
  for (Region *r : {spec.scoreModGrad, spec.maskMod})
    if (r && failed(checkModifierRegionForKernel(op, *r, func, spec.captures)))
      return failure();
  // Kernel parameters follow the argument order: exactly the arguments
  // after the operands (distinct, so a full count means all of them).
  llvm::sort(spec.captures, [](const auto &a, const auto &b) {
    return a.arg < b.arg;
  });
  unsigned operands = op->getNumOperands() - op.getGradCaptures().size();
  for (const ScoreModifierSpec::Capture &capture : spec.captures)
    if (capture.arg < operands)
      return op.emitOpError("convert-fa-to-nvgpu: the backward kernel's "
                            "regions may read only the function arguments "
                            "after q, k, v, out, lse, do, got argument ")
             << capture.arg;
  if (spec.captures.size() != func.getNumArguments() - operands)
    return op.emitOpError("convert-fa-to-nvgpu: every function argument "
                          "after q, k, v, out, lse, do must be a tensor the "
                          "op's regions read (the kernel takes no other)");
  if (failed(captureGradSpec(op, spec)))
    return failure();
  return spec;
}

/// The launch manifest of a backward kernel.
static LaunchManifest gradManifest(const kernel::BackwardConfig &cfg,
                                   StringRef chip, StringRef function,
                                   std::vector<KernelParam> params,
                                   int64_t dynamicBytes, int64_t threads) {
  using Sym = SizeSymbol;
  LaunchManifest manifest;
  manifest.op = "attention_grad";
  manifest.kernel = cfg.kernelName;
  manifest.chip = chip.str();
  manifest.function = function.str();
  manifest.dtype = cfg.elementType.isF16() ? "f16" : "bf16";
  manifest.headDim = cfg.headDim;
  manifest.causal = cfg.windowLeft < 0 && cfg.windowRight == 0;
  manifest.windowLeft = cfg.windowLeft;
  manifest.windowRight = cfg.windowRight;
  manifest.scale = cfg.scale;
  manifest.lse = true; // read, not written
  manifest.blockQ = cfg.blockQ;
  manifest.blockKV = cfg.blockKV;
  manifest.params = std::move(params);
  // varlen: the key blocks of the longest sequence, B sequences.
  manifest.grid = {
      SizeExpr::ceilDiv(cfg.varlen ? Sym::MaxSeqlenK : Sym::Nk, cfg.blockKV),
      Sym::Hkv, Sym::B};
  if (cfg.varlen) {
    manifest.varlen = true;
    manifest.varlenLayout = cfg.varlenTokenMajor ? "thd" : "htd";
  }
  manifest.block = {threads, 1, 1};
  manifest.dynamicSharedMemoryBytes = dynamicBytes;
  if (cfg.softcap)
    manifest.schedule.push_back({"softcap", *cfg.softcap});
  if (cfg.deterministic)
    manifest.schedule.push_back({"deterministic", 1});
  if (cfg.tensorMaps) {
    if (cfg.stages != sm90::kGradDefaultStages)
      manifest.schedule.push_back({"stages", cfg.stages});
    // In the parameters' order.
    manifest.tensorMaps = {
        sm90::gradInputTensorMap("q", cfg), sm90::gradInputTensorMap("k", cfg),
        sm90::gradInputTensorMap("v", cfg), sm90::gradInputTensorMap("do", cfg),
        sm90::gradQueryTensorMap(cfg)};
  }
  return manifest;
}

LogicalResult mlir::fa::buildAttentionGradKernel(
    func::FuncOp func, AttentionGradOp op, StringRef chip,
    const NVGPUKernelOptions &options) {
  if (chip != "sm_80" && chip != "sm_90a")
    return op.emitOpError("unsupported chip '")
           << chip << "' for convert-fa-to-nvgpu (supported: sm_80, sm_90a)";
  if (options.hostLaunch)
    return op.emitOpError(
        "convert-fa-to-nvgpu{host-launch}: the backward kernel has no host "
        "launch yet (fa-to-gpu); compile it with fa-to-ptx and launch it "
        "through its manifest (docs/Backward.md)");
  if (op.isVarlen()) {
    // The wgmma kernel's CTAs read their sequence from cu_seqlens; the
    // mma.sync kernel, the deterministic turns (per batch and query block)
    // and the regions' (b, i, j) do not know sequences yet.
    auto unsupported = [&](StringRef what) {
      return op.emitOpError("convert-fa-to-nvgpu: the backward kernel for "
                            "packed variable-length sequences (varlen) ")
             << what << "; the CPU pipeline (fa-to-cpu) lowers it";
    };
    if (chip != "sm_90a")
      return unsupported("is sm_90a's (chip=sm_90a)");
    if (options.deterministic)
      return unsupported("has no deterministic dQ yet");
  }
  if (failed(checkGradFunction(func, op)))
    return failure();
  RankedTensorType qTy = op.getQueryType();
  Type elt = qTy.getElementType();
  if (!elt.isF16() && !elt.isBF16())
    return op.emitOpError("backward kernel needs f16 or bf16 inputs, got ")
           << elt;
  int64_t headDim = qTy.getDimSize(3);
  if (headDim != 64 && headDim != 128)
    return op.emitOpError("backward kernel supports head dim 64 or 128, got ")
           << headDim;
  if (options.rowsPerWarp)
    return op.emitOpError("convert-fa-to-nvgpu: option rows-per-warp does "
                          "not apply to the backward kernel");
  if (options.deterministic && !op.getGradCaptures().empty())
    return op.emitOpError(
        "convert-fa-to-nvgpu{deterministic}: the gradients of grad_captures "
        "are added by atomics in no fixed order, so they would not be "
        "deterministic; compile without deterministic or without "
        "grad_captures");
  // Which kernel: on sm_90a the wgmma kernel (on the H200 1.2-1.25x the
  // mma.sync kernel at head dim 64, 1.6-1.8x at 128: run6 and run7 in
  // bench/results/backward_h200_2026-12-01), on sm_80 the mma.sync one.
  bool wgmma = chip == "sm_90a";
  // mma.sync: keys per CTA: 128 (8 warps) halves the Q/dO loads and dQ
  // atomics per FLOP of 64 (4 warps); a function's fa.grad.block_kv picks
  // either. wgmma: 128 (two warpgroups of 64 keys).
  int64_t blockKV = wgmma ? sm90::kGradBlockKV : kDefaultGradBlockKV;
  if (Attribute attr = func->getAttr("fa.grad.block_kv")) {
    if (wgmma)
      return func.emitError("convert-fa-to-nvgpu: fa.grad.block_kv applies to "
                            "the mma.sync backward kernel only (chip=sm_80; "
                            "the wgmma kernel of sm_90a takes 128 keys per "
                            "CTA)");
    auto i = dyn_cast<IntegerAttr>(attr);
    if (!i || (i.getInt() != 64 && i.getInt() != 128))
      return func.emitError("convert-fa-to-nvgpu: fa.grad.block_kv must be an "
                            "integer, 64 or 128, got ")
             << attr;
    blockKV = i.getInt();
  }
  int64_t stages = sm90::kGradDefaultStages;
  if (Attribute attr = func->getAttr("fa.grad.stages")) {
    if (!wgmma)
      return func.emitError("convert-fa-to-nvgpu: fa.grad.stages applies to "
                            "the wgmma backward kernel only (chip=sm_90a: its "
                            "Q / dO buffers; the mma.sync kernel has two)");
    auto i = dyn_cast<IntegerAttr>(attr);
    if (!i || (i.getInt() != 2 && i.getInt() != 3))
      return func.emitError("convert-fa-to-nvgpu: fa.grad.stages must be an "
                            "integer, 2 or 3, got ")
             << attr;
    stages = i.getInt();
  }
  FailureOr<std::string> original = prepareKernelFunction(func, false);
  if (failed(original))
    return failure();

  ScoreModifiers mods = ScoreModifiers::get(op);
  FailureOr<ScoreModifierSpec> regions = gradModifiers(func, op, mods.softcap);
  if (failed(regions))
    return failure();
  kernel::BackwardConfig cfg;
  cfg.kernelName = (func.getSymName() + "_kernel").str();
  cfg.moduleName = (func.getSymName() + "_kernels").str();
  cfg.elementType = elt;
  cfg.headDim = headDim;
  cfg.blockKV = blockKV;
  cfg.windowLeft = mods.left;
  cfg.windowRight = mods.right;
  cfg.scale = op.getEffectiveScale();
  cfg.softcap = mods.softcap;
  cfg.modifiers = std::move(*regions);
  cfg.deterministic = options.deterministic;
  cfg.tensorMaps = wgmma;
  cfg.stages = stages;
  cfg.varlen = op.isVarlen();
  cfg.varlenTokenMajor = cfg.varlen && options.varlenTokenMajor;
  OpBuilder b(func);
  std::vector<KernelParam> params =
      kernel::getBackwardKernelParams(b.getContext(), cfg);
  gpu::GPUFuncOp kfn =
      wgmma ? sm90::buildBackwardKernel(b, op.getLoc(), cfg, params)
            : sm80::buildBackwardKernel(b, op.getLoc(), cfg, params);
  // sm_80: 128 bytes of slack, as the forward kernel (the dynamic buffer's
  // symbol); sm_90a: the realignment to 1024 bytes is in the plan.
  int64_t dynamicBytes =
      wgmma ? sm90::BackwardSharedMemoryPlan::of(cfg).dynamicBytes
            : sm80::BackwardSharedMemoryPlan::of(cfg).bytes + 128;
  int64_t threads = wgmma ? sm90::kGradThreads : cfg.threads();

  LaunchManifest manifest =
      gradManifest(cfg, chip, *original, std::move(params), dynamicBytes,
                   threads);
  // delta and dq_accum's zeros before the kernel, dq after it: two small
  // kernels of the same module (Common/BackwardRowKernels).
  manifest.auxiliaryKernels = kernel::buildGradRowKernels(
      b, op.getLoc(), kfn->getParentOfType<gpu::GPUModuleOp>(), cfg);
  if (failed(manifest.verify(kfn)))
    return failure();
  auto module = func->getParentOfType<ModuleOp>();
  attachLaunchManifest(module, cfg.moduleName, cfg.kernelName,
                       manifest.toJSONString());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  func.erase();
  return success();
}
