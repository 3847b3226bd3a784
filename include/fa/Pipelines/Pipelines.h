//===- Pipelines.h - named fa pass pipelines --------------------*- C++ -*-===//
#ifndef FA_PIPELINES_PIPELINES_H
#define FA_PIPELINES_PIPELINES_H

#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.h"
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
};

/// fa.attention on tensors, in func.func, to the LLVM dialect for the CPU
/// (runnable with mlir-runner).
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Options of `fa-to-ptx`.
struct PTXPipelineOptions : public PassPipelineOptions<PTXPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target chip (sm_80 or sm_90a)"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features for nvvm-attach-target"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<int> optLevel{
      *this, "O", llvm::cl::desc("LLVM optimization level of the NVPTX backend"),
      llvm::cl::init(3)};
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("Query rows per thread block (0: the chip's default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("Keys per step (0: the chip's default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> rowsPerWarp{
      *this, "rows-per-warp",
      llvm::cl::desc("Query rows per warp (0: the chip's default)"),
      llvm::cl::init(0)};
  // Every sm_90a schedule switch of SM90/Schedule.def, as for
  // convert-fa-to-nvgpu (block-kv is the option above, shared with sm_80).
#include "fa/Conversion/AttentionToNVGPU/SM90/ScheduleOptions.inc"
};

/// fa.attention in func.func to a module holding gpu.binary ops with PTX
/// (fa-tile-attention with the chip's block sizes, convert-fa-to-nvgpu, then the nvgpu/gpu -> nvvm lowering and
/// gpu-module-to-binary{format=isa}).
void buildPTXPipeline(OpPassManager &pm, const PTXPipelineOptions &options);

/// Registers every named fa pipeline with the pass registry.
void registerPipelines();

} // namespace mlir::fa

#endif // FA_PIPELINES_PIPELINES_H
