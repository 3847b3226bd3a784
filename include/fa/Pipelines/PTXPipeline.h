//===- PTXPipeline.h - fa-to-ptx --------------------------------*- C++ -*-===//
//
// The GPU pipeline (library FAPipelinesGPU: fa's NVGPU conversion and the
// upstream GPU, NVVM and NVVM-target libraries).
//
//===----------------------------------------------------------------------===//
#ifndef FA_PIPELINES_PTXPIPELINE_H
#define FA_PIPELINES_PTXPIPELINE_H

#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::fa {

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
  PassOptions::Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("Backward kernels add dQ in a fixed order (bitwise "
                     "reproducible dq; convert-fa-to-nvgpu's option)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> varlenLayout{
      *this, "varlen-layout",
      llvm::cl::desc("Packed q, k, v, out of varlen kernels: thd ([T, H, D]) "
                     "or htd ([H, T, D]) (convert-fa-to-nvgpu's option)"),
      llvm::cl::init("thd")};
  PassOptions::Option<bool> raiseAttention{
      *this, "raise-attention",
      llvm::cl::desc("Run fa-raise-attention on every function first (attention "
                     "written in linalg becomes fa.attention)"),
      llvm::cl::init(false)};
  // Every sm_90a schedule switch of SM90/Schedule.def, as for
  // convert-fa-to-nvgpu (block-kv is the option above, shared with sm_80).
#include "fa/Conversion/AttentionToNVGPU/SM90/ScheduleOptions.inc"
};

/// fa.attention in func.func to a module holding gpu.binary ops with PTX
/// (fa-tile-attention with the chip's block sizes, convert-fa-to-nvgpu, then the nvgpu/gpu -> nvvm lowering and
/// gpu-module-to-binary{format=isa}).
void buildPTXPipeline(OpPassManager &pm, const PTXPipelineOptions &options);

/// Why `options` cannot be compiled with, or "" (values that upstream passes
/// would abort on or ignore with a warning); the message names `pipeline`.
std::string checkPTXPipelineOptions(const PTXPipelineOptions &options,
                                    StringRef pipeline);

/// The kernels' lowering after convert-fa-to-nvgpu: nvgpu and gpu to NVVM,
/// nvvm-attach-target{chip, features, O}, gpu-module-to-binary{format=isa}
/// (PTX). With `onlyGPUModules` the passes that fa-to-ptx runs on the whole
/// module run inside the gpu.modules only (fa-to-gpu: the host stays as is).
void addKernelToBinaryPasses(OpPassManager &pm,
                             const PTXPipelineOptions &options,
                             bool onlyGPUModules);

/// Registers `fa-to-ptx` with the global pass pipeline registry. Registers
/// once however often it is called.
void registerPTXPipeline();

} // namespace mlir::fa

#endif // FA_PIPELINES_PTXPIPELINE_H
