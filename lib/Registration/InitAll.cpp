//===- InitAll.cpp - register fa and what its pipelines need --------------===//
//
// The curated registry of fa's pipelines: the CPU part (InitCPU.cpp, library
// FARegistrationCPU) and, here, the GPU side of fa-to-ptx:
//   dialects             what fa-to-ptx produces (gpu, nvgpu, nvvm);
//   convert-to-llvm      the ConvertToLLVMPatternInterface of nvvm, inside
//                        the gpu.module;
//   GPU target           #nvvm.target's serializeToObject and the translations
//                        to LLVM IR that gpu-module-to-binary runs (without
//                        them: "Failed creating the llvm::Module", or a crash
//                        in gpu::TargetAttrInterface::serializeToObject).
//
//===----------------------------------------------------------------------===//
#include "fa/Registration/InitAll.h"

#include "fa/Conversion/Passes.h"
#include "fa/Pipelines/GPUPipeline.h"
#include "fa/Pipelines/PTXPipeline.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;

void mlir::fa::registerPipelineDependencies(DialectRegistry &registry) {
  registerCPUPipelineDependencies(registry);

  // Dialects of the GPU side (fa-to-ptx).
  registry.insert<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>();

  // convert-to-llvm inside the gpu.module (fa-to-ptx).
  registerConvertNVVMToLLVMInterface(registry);

  // The GPU target: #nvvm.target serialization and the translations that
  // gpu-module-to-binary runs (fa-to-ptx).
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

void mlir::fa::registerAllPassesAndPipelines() {
  registerCPUPassesAndPipelines();
  // The registries abort on a pipeline registered twice: register once.
  static const bool registered = [] {
    registerFAConversionPasses();
    registerPTXPipeline();
    registerGPUPipeline();
    return true;
  }();
  (void)registered;
}

void mlir::fa::registerAll(DialectRegistry &registry) {
  registerDialects(registry);
  registerPipelineDependencies(registry);
  registerAllPassesAndPipelines();
}
