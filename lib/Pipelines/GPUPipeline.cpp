//===- GPUPipeline.cpp - fa-to-gpu ----------------------------------------===//
//
//   a program with fa.attention anywhere in its functions
//     -> fa-tile-attention-for-chip{chip}     the tiled form, chip's blocks
//     -> fa-outline-attention                 each attention a function
//     -> convert-fa-to-nvgpu{chip, host-launch, schedule}
//                                             kernel in gpu.module + the
//                                             function's body = its launch
//     -> (in gpu.modules) the kernels' lowering of fa-to-ptx,
//        gpu-module-to-binary{format=isa}     gpu.binary with PTX
//     -> fa-to-cpu's host passes              one-shot-bufferize, ...
//     -> fa-emit-host-launch                  the launches' bodies: copies,
//                                             tensor maps, gpu.launch_func
//     -> convert-nvgpu-to-nvvm                the tensor maps: runtime calls
//     -> gpu-to-llvm{kernel-bare-ptr}         launches, copies: mgpu* calls
//     -> convert-to-llvm, reconcile-unrealized-casts
//
//===----------------------------------------------------------------------===//
#include "fa/Pipelines/GPUPipeline.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Pipelines/CPUPipeline.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fa::buildGPUPipeline(OpPassManager &pm,
                                const PTXPipelineOptions &options) {
  std::string invalid = checkPTXPipelineOptions(options, "fa-to-gpu");
  if (!invalid.empty()) {
    pm.addPass(createFAReportPipelineErrorPass({invalid}));
    return;
  }
  if (options.raiseAttention)
    pm.addNestedPass<func::FuncOp>(createFARaiseAttentionPass());
  pm.addPass(createFATileAttentionForChipPass(FATileAttentionForChipPassOptions{
      options.chip, options.blockQ, options.blockKV}));
  pm.addPass(createFAOutlineAttentionPass());
  ConvertFAToNVGPUPassOptions convert{options.chip, options.rowsPerWarp,
                                      options.deterministic,
                                      /*hostLaunch=*/true};
  pm.addPass(createConvertFAToNVGPUPass(
      convert, getSM90ScheduleOptions(options, "fa-to-gpu")));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addKernelToBinaryPasses(pm, options, /*onlyGPUModules=*/true);
  addHostBufferizationPasses(pm);
  pm.addPass(createFAEmitHostLaunchPass());
  pm.addPass(createConvertNVGPUToNVVMPass());
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  addHostToLLVMPasses(pm);
  // What was not lowered fails here, at the op (the binaries and their
  // launches are what mlir-translate takes).
  FACheckLoweredToLLVMPassOptions check;
  check.pipeline = "fa-to-gpu";
  check.gpuLaunches = true;
  pm.addPass(createFACheckLoweredToLLVMPass(check));
}

void mlir::fa::registerGPUPipeline() {
  static const bool registered = [] {
    PassPipelineRegistration<PTXPipelineOptions>(
        "fa-to-gpu",
        "Compile a program holding fa.attention to the LLVM dialect: each "
        "attention a PTX kernel (gpu.binary) launched from the host through "
        "the mgpu* runtime (lib/Runtime); fa-to-ptx's options",
        buildGPUPipeline);
    return true;
  }();
  (void)registered;
}
