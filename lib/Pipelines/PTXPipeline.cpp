//===- PTXPipeline.cpp - fa-to-ptx ----------------------------------------===//
//
//   fa.attention in func.func
//     -> fa-tile-attention{block-q block-kv}  the tiled form (sizes per chip)
//     -> convert-fa-to-nvgpu{chip}        gpu.module + FlashAttention-2 gpu.func
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
#include "fa/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fa::buildPTXPipeline(OpPassManager &pm,
                                const PTXPipelineOptions &options) {
  // The chip's block sizes (an unknown chip tiles 64 x 64, and
  // convert-fa-to-nvgpu then names the chip in its diagnostic).
  NVGPUTileSizes sizes = getNVGPUTileSizes(options.chip);
  FATileAttentionPassOptions tile;
  tile.blockQ = options.blockQ ? options.blockQ
                               : (sizes.blockQ ? sizes.blockQ : 64);
  tile.blockKV = options.blockKV ? options.blockKV
                                 : (sizes.blockKV ? sizes.blockKV : 64);
  pm.addPass(createFATileAttentionPass(tile));
  pm.addPass(createConvertFAToNVGPUPass(
      ConvertFAToNVGPUPassOptions{options.chip}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertVectorToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}
