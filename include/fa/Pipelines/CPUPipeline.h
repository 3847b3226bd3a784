//===- CPUPipeline.h - fa-to-cpu --------------------------------*- C++ -*-===//
//
// The CPU pipeline alone (library FAPipelinesCPU): nothing here or in its
// library refers to the GPU conversion or to a GPU target, so a CPU-only
// compiler can take it without the NVGPU/NVVM side (docs/Embedding.md).
//
//===----------------------------------------------------------------------===//
#ifndef FA_PIPELINES_CPUPIPELINE_H
#define FA_PIPELINES_CPUPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::fa {

/// Options of `fa-to-cpu`.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> reference{
      *this, "reference",
      llvm::cl::desc("Lower fa.attention with the reference decomposition "
                     "(materialized scores) instead of the tiled form"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q", llvm::cl::desc("Query rows per tile (tiled form)"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("Keys per online-softmax step (tiled form)"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> maskModSparsity{
      *this, "mask-mod-sparsity",
      llvm::cl::desc("Skip the key blocks a mask_mod region hides and drop it "
                     "where it hides nothing (tiled form; fa-tile-attention's "
                     "option)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> raiseAttention{
      *this, "raise-attention",
      llvm::cl::desc("Run fa-raise-attention on every function first (attention "
                     "written in linalg becomes fa.attention)"),
      llvm::cl::init(false)};
};

/// fa.attention on tensors, in func.func, to the LLVM dialect for the CPU
/// (runnable with mlir-runner).
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `fa-to-cpu` with the global pass pipeline registry. Registers
/// once however often it is called.
void registerCPUPipeline();

/// The host half of fa-to-cpu, after the fa ops are lowered, shared with
/// fa-to-gpu: elementwise ops to linalg, one-shot-bufferize across function
/// boundaries (identity layouts), buffer deallocation, linalg to loops, scf to
/// cf, fp8/bf16/math expansions. Leaves arith/cf/func/memref/... ops.
void addHostBufferizationPasses(OpPassManager &pm);

/// convert-to-llvm, reconcile-unrealized-casts, canonicalize: the last steps
/// of fa-to-cpu and fa-to-gpu.
void addHostToLLVMPasses(OpPassManager &pm);

} // namespace mlir::fa

#endif // FA_PIPELINES_CPUPIPELINE_H
