//===- SM90FlashAttention.cpp - the sm_90a kernel's entry point -----------===//
//
// convert-fa-to-nvgpu{chip=sm_90a}: the SM90AttentionDesc of a matched tiled
// attention (defaults, measured per-head-dim choices, fa.sm90.* overrides),
// its fit check, and the replacement of the function by the kernel that
// SM90/Kernel.cpp composes. See docs/SM90.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Conversion/AttentionToNVGPU/Common/LaunchManifest.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/SharedMemoryPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

#include <numeric>

using namespace mlir;
using namespace mlir::fa;

int64_t SM90AttentionDesc::kvBoxRows() const {
  return kvCache.paged() ? std::gcd(blockKV, kvCache.pageSize) : blockKV;
}

std::string mlir::fa::checkSM90AttentionDesc(const SM90AttentionDesc &d) {
  if (!d.elementType || !(d.elementType.isF16() || d.elementType.isBF16() ||
                          d.isFP8()))
    return "sm_90a kernel needs f16, bf16 or f8E4M3FN inputs";
  if (d.isFP8()) {
    // The V^T tile is one 128-byte swizzle row of keys per head-dim row; a
    // Q/K row is one 128-byte swizzle row (or two), or at head dim 64 one
    // 64-byte swizzle row (the head dims are the 16-bit kernel's).
    if (d.blockKV != 128 && d.blockKV != 256)
      return "sm_90a fp8 kernel needs block-kv 128 or 256 (whole 128-byte "
             "V^T rows), got " +
             std::to_string(d.blockKV);
    if (!d.pFromRegisters)
      return "sm_90a fp8 kernel needs p-from-registers (P goes to the P V "
             "wgmma as e4m3 registers)";
    Type out = d.getOutputType();
    if (!out.isF16() && !out.isBF16())
      return "sm_90a fp8 kernel needs an f16 or bf16 output";
    if (!d.modifiers.empty())
      return "sm_90a fp8 kernel does not support softcap, a mask operand or "
             "score_mod / mask_mod yet";
  }
  if (d.headDim != 64 && d.headDim != 128 && d.headDim != 256)
    return "sm_90a kernel supports head dim 64, 128 or 256, got " +
           std::to_string(d.headDim);
  if (d.consumerWarpgroups != kSM90Warpgroups) {
    // Three consumer warpgroups share the registers four ways (160 each):
    // O, S and P of 64 rows fit at head dim 64 only.
    if (d.consumerWarpgroups != kSM90MaxWarpgroups)
      return "sm_90a kernel supports 2 or 3 consumer warpgroups (block-q 128 "
             "or 192), got " +
             std::to_string(d.consumerWarpgroups);
    if (d.headDim != 64)
      return "sm_90a kernel with 3 consumer warpgroups (block-q 192) needs "
             "head dim 64 (160 registers per consumer thread), got " +
             std::to_string(d.headDim);
    if (d.isFP8())
      return "sm_90a kernel with 3 consumer warpgroups (block-q 192) does "
             "not support fp8 inputs (their descale blocks are 128 rows)";
    if (d.splitKV)
      return "sm_90a split-kv kernel needs 2 consumer warpgroups (block-q "
             "128)";
    if (!d.warpSpecialized)
      return "sm_90a kernel with 3 consumer warpgroups (block-q 192) needs "
             "warp-specialize (setmaxnreg shares the registers)";
  }
  int64_t kBN = d.blockKV;
  if (kBN < 16 || kBN > 256 || kBN % 16 || (!d.pFromRegisters && kBN % 64))
    return "sm_90a kernel supports K/V tiles of 16 to 256 keys in steps of 16 "
           "(of 64 with P through shared memory), got " +
           std::to_string(kBN);
  if (d.exp2PolyEvery < 0)
    return "sm_90a kernel needs exp2-poly-every >= 0, got " +
           std::to_string(d.exp2PolyEvery);
  if (d.windowLeft < -1 || d.windowRight < -1)
    return "sm_90a kernel needs window edges >= -1, got [" +
           std::to_string(d.windowLeft) + ", " + std::to_string(d.windowRight) +
           "]";
  if (d.kvCache.any() && d.persistent)
    return "sm_90a persistent kernel does not support kv_lens or pages yet "
           "(persistent=false)";
  if (d.varlen && d.dynamicTiles)
    return "sm_90a kernel with dynamic tiles does not support varlen yet "
           "(dynamic-tiles=false)";
  if (d.splitKV && d.persistent)
    return "sm_90a split-kv kernel runs one tile per CTA (persistent=false)";
  if (d.splitKV && d.isFP8())
    return "sm_90a split-kv kernel does not support fp8 inputs yet "
           "(split-kv=false)";
  if (d.splitKV && d.varlen)
    return "sm_90a split-kv kernel does not support varlen yet "
           "(split-kv=false)";
  if (d.persistent && !d.warpSpecialized)
    return "sm_90a persistent kernel needs warp-specialize";
  if (d.stages < 1 || d.stages > 4)
    return "sm_90a kernel supports 1 to 4 K/V stages, got " +
           std::to_string(d.stages);
  // The pipelined consumers hold block j-1's stage (P V in flight) while they
  // wait for block j: with one stage that wait never ends.
  if (d.warpSpecialized && d.overlap && d.stages < 2)
    return "sm_90a pipelined schedule (overlap) needs at least 2 K/V stages, "
           "got 1 (or overlap=false)";
  if (d.transposeV) {
    // The producer warpgroup transposes each V tile: it must exist, stay one
    // tile per CTA (its loop is the one-tile stream), and run a block ahead
    // of the consumers (the staging buffer of block j + S - 1 is block j -
    // 1's).
    if (!d.isFP8())
      return "sm_90a kernel transposes V in shared memory (transpose-v) only "
             "for fp8 inputs (16-bit wgmma reads V as stored)";
    if (!d.warpSpecialized)
      return "sm_90a transpose-v needs warp-specialize (the producer "
             "warpgroup transposes V)";
    if (d.persistent || d.splitKV || d.varlen || d.kvCache.any())
      return "sm_90a transpose-v supports one tile per CTA over contiguous "
             "K/V (not persistent, split-kv, varlen, kv_lens or pages)";
    if (d.blockKV != 128)
      return "sm_90a transpose-v needs block-kv 128 (one V^T tile of 128 "
             "keys per stage), got " +
             std::to_string(d.blockKV);
    if (d.stages < 2)
      return "sm_90a transpose-v needs at least 2 K/V stages (the producer "
             "transposes block j while block j + 1 loads), got " +
             std::to_string(d.stages);
  }
  int64_t bytes = sm90::planSharedMemory(d).dynamicBytes;
  if (bytes > sm90::kSharedMemoryLimitBytes)
    return "sm_90a kernel with " + std::to_string(d.stages) + " stages" +
           (d.persistent && d.qBuffers > 1
                ? " and " + std::to_string(d.qBuffers) + " Q tiles"
                : std::string()) +
           " needs " + std::to_string(bytes) +
           " bytes of shared memory (at most " +
           std::to_string(sm90::kSharedMemoryLimitBytes) + ") at head dim " +
           std::to_string(d.headDim) + " with " + std::to_string(kBN) +
           "-key K/V tiles" +
           (d.transposeV ? std::string(" and a V staging tile per stage "
                                       "(transpose-v)")
                         : std::string()) +
           ": use fewer stages or a smaller block-kv";
  return "";
}

LogicalResult
mlir::fa::buildSM90FlashAttention(const TiledAttention &attn,
                                  const NVGPUKernelOptions &options) {
  Operation *anchor = attn.forall;
  if (attn.blockQ != kSM90BlockQ &&
      attn.blockQ != kSM90MaxWarpgroups * kSM90RowsPerWarpgroup) {
    InFlightDiagnostic diag =
        anchor->emitOpError(
            "sm_90a kernel needs the tiled form with block-q = ")
        << kSM90BlockQ << " (2 consumer warpgroups) or "
        << kSM90MaxWarpgroups * kSM90RowsPerWarpgroup
        << " (3, at head dim 64), got " << attn.blockQ;
    if (attn.descaleRank == 3)
      diag << " (fp8 per-block descales: fa-tile-attention tiles with "
              "descale_block; the kernel needs descale_block = ["
           << kSM90BlockQ << ", " << kSM90BlockKV << "])";
    return diag;
  }
  func::FuncOp func = attn.func;
  SM90AttentionDesc desc;
  desc.kernelName = (func.getSymName() + "_kernel").str();
  desc.moduleName = (func.getSymName() + "_kernels").str();
  desc.sourceName =
      attn.sourceName.empty() ? func.getSymName().str() : attn.sourceName;
  desc.elementType = attn.elementType;
  desc.outputType = attn.outputType;
  using G = SM90AttentionDesc::DescaleGranularity;
  desc.descaleGranularity = attn.descaleRank == 3   ? G::Block
                            : attn.descaleRank == 2 ? G::Head
                                                    : G::Tensor;
  desc.headDim = attn.headDim;
  desc.consumerWarpgroups = attn.blockQ / kSM90RowsPerWarpgroup;
  desc.windowLeft = attn.windowLeft;
  desc.windowRight = attn.windowRight;
  desc.scale = attn.scale;
  desc.hasLse = attn.hasLse;
  desc.modifiers = attn.modifiers;
  desc.kvCache.kvLens = attn.kvLensArg.has_value();
  desc.kvCache.pageSize = attn.pageSize;
  desc.varlen = attn.isVarlen();
  desc.varlenTokenMajor = desc.varlen && options.varlenTokenMajor;
  // The schedule: measured defaults, options, fa.sm90.* attributes, checked
  // (SM90/Schedule.cpp).
  FailureOr<SM90Schedule> schedule = resolveSM90Schedule(func, attn, options);
  if (failed(schedule))
    return failure();
  static_cast<SM90Schedule &>(desc) = *schedule;
  std::string why = checkSM90AttentionDesc(desc);
  if (!why.empty())
    return anchor->emitOpError(why);
  // The host launch has no num_splits to pass nor workspaces to allocate.
  if (desc.splitKV && options.hostLaunch)
    return anchor->emitOpError(
        "convert-fa-to-nvgpu{host-launch} does not support split-kv yet "
        "(fa-to-gpu); compile the attention with fa-to-ptx and launch it "
        "through the manifest");

  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder b(func);
  std::string json = buildSM90AttentionKernel(b, anchor->getLoc(), desc);
  if (json.empty())
    return failure(); // the manifest did not verify (reported)
  attachLaunchManifest(module, desc.moduleName, desc.kernelName, json);
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return success();
}
