//===- PTXPipeline.cpp - fa-to-ptx ----------------------------------------===//
//
//   fa.attention in func.func
//     -> fa-differentiate-score-mod        fa.attention_grad: score_mod_grad
//     -> fa-tile-attention-for-chip{chip}  fa-tile-attention per func.func with
//                                          the chip's block sizes for its head dim
//     -> convert-fa-to-nvgpu{chip, the sm_90a schedule options of
//        SM90/Schedule.def}               gpu.module + the chip's gpu.func
//     -> convert-nvgpu-to-nvvm, convert-scf-to-cf, nvvm-attach-target{chip,features,O}
//     -> (gpu.module) convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv},
//        convert-vector-to-llvm, canonicalize, cse, reconcile-unrealized-casts
//     -> gpu-module-to-binary{format=isa}   gpu.binary with PTX
//
// fa-dump-kernel{dir=...} afterwards writes the PTX and launch manifest.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Pipelines/PTXPipeline.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

std::string
mlir::fa::checkPTXPipelineOptions(const fa::PTXPipelineOptions &options,
                                  StringRef pipeline) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return pipeline.str() + " option 'O=" + std::to_string(options.optLevel) +
           "' must be 0, 1, 2 or 3 (the NVPTX optimization level)";
  SmallVector<StringRef> features;
  StringRef(options.features).split(features, ',', -1, /*KeepEmpty=*/false);
  for (StringRef f : features) {
    StringRef name = f.drop_front();
    if ((!f.starts_with("+") && !f.starts_with("-")) || name.empty() ||
        !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return pipeline.str() + " option 'features=" + options.features +
             "' must be a comma-separated list of +feature / -feature (e.g. "
             "+ptx80), got '" + f.str() + "'";
  }
  return "";
}

/// The CUDA toolkit whose nvvm/libdevice/libdevice.10.bc exists: CUDA_HOME,
/// CUDA_ROOT, CUDA_PATH, then /usr/local/cuda; empty if none has it (the
/// serializer's own lookup then applies).
static std::string findCUDAToolkitWithLibdevice() {
  SmallVector<std::string> candidates;
  for (const char *var : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *v = std::getenv(var))
      candidates.push_back(v);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &dir : candidates)
    if (llvm::sys::fs::exists(dir + "/nvvm/libdevice/libdevice.10.bc"))
      return dir;
  return "";
}

void mlir::fa::buildPTXPipeline(OpPassManager &pm,
                                const PTXPipelineOptions &options) {
  std::string invalid = checkPTXPipelineOptions(options, "fa-to-ptx");
  if (!invalid.empty()) {
    pm.addPass(fa::createFAReportPipelineErrorPass({invalid}));
    return;
  }
  if (options.raiseAttention)
    pm.addNestedPass<func::FuncOp>(createFARaiseAttentionPass());
  // The backward kernels read score_mod_grad, not score_mod.
  pm.addPass(createFADifferentiateScoreModPass());
  // fa-tile-attention with the chip's block sizes for each function's head
  // dim (an unknown chip tiles 64 x 64, and convert-fa-to-nvgpu then names the
  // chip in its diagnostic).
  pm.addPass(createFATileAttentionForChipPass(FATileAttentionForChipPassOptions{
      options.chip, options.blockQ, options.blockKV}));
  ConvertFAToNVGPUPassOptions convert{options.chip, options.rowsPerWarp,
                                      options.deterministic};
  convert.varlenLayout = options.varlenLayout;
  pm.addPass(createConvertFAToNVGPUPass(
      convert, getSM90ScheduleOptions(options, "fa-to-ptx")));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addKernelToBinaryPasses(pm, options, /*onlyGPUModules=*/false);
}

void mlir::fa::addKernelToBinaryPasses(OpPassManager &pm,
                                       const PTXPipelineOptions &options,
                                       bool onlyGPUModules) {
  // fa-to-ptx's module holds kernels only; fa-to-gpu's also holds the host
  // program, still on tensors, which these passes must leave alone.
  if (onlyGPUModules) {
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVGPUToNVVMPass());
    pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
  } else {
    pm.addPass(createConvertNVGPUToNVVMPass());
    pm.addPass(createSCFToControlFlowPass());
  }

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertVectorToLLVMPass());
  // nvvm ops built on inline PTX (mbarrier try_wait, wgmma): sm_90a kernels.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  // libdevice for the math of modifier regions (math.exp2 -> __nv_exp2f):
  // the serializer finds it through CUDA_HOME & co. only, so a clean
  // environment (lit, a compiler embedding fa) would leave the calls
  // unresolved; name the toolkit explicitly where one is installed.
  toBinary.toolkitPath = findCUDAToolkitWithLibdevice();
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}

void mlir::fa::registerPTXPipeline() {
  // The registry aborts on a pipeline registered twice: register once.
  static const bool registered = [] {
    PassPipelineRegistration<PTXPipelineOptions>(
        "fa-to-ptx",
        "Compile fa.attention in func.func to a gpu.binary holding PTX "
        "(FlashAttention-2 kernel for chip=sm_80)",
        buildPTXPipeline);
    return true;
  }();
  (void)registered;
}
