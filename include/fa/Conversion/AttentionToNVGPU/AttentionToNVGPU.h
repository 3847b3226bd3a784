//===- AttentionToNVGPU.h - the tiled form to an nvgpu kernel ---*- C++ -*-===//
//
// convert-fa-to-nvgpu in two halves: a chip-independent match of the tiled
// form that fa-tile-attention produces (TiledAttention), and one kernel
// builder per chip that consumes it (SM80 today; an SM90 builder reuses the
// same description).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_ATTENTIONTONVGPU_H
#define FA_CONVERSION_ATTENTIONTONVGPU_ATTENTIONTONVGPU_H

#include "fa/Conversion/AttentionToNVGPU/Common/ScoreModifiers.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::fa {

/// One attention in the tiled form (fa-tile-attention), as a kernel builder
/// needs it. Read off the IR: the scf.forall over (batch, head, query block)
/// gives the grid, the tensor.extract_slices of the function arguments give
/// the global tensors and the GQA head mapping, fa.kv_block_range and the
/// fa.online_attention ops give the key/value loops, scale and window, the
/// tensor.parallel_insert_slices give the outputs.
struct TiledAttention {
  func::FuncOp func;
  /// The function's name as written (buildNVGPUKernel renames `func` to its
  /// PTX identifier before a builder runs; the manifest records this one).
  std::string sourceName;
  scf::ForallOp forall;
  /// Function argument numbers of the query, key and value tensors
  /// ([B, Hq, Nq, D], [B, Hkv, Nk, D], [B, Hkv, Nk, D]).
  unsigned queryArg = 0, keyArg = 1, valueArg = 2;
  /// Element type of query, key and value.
  Type elementType;
  /// Element type of out: elementType, or f16/bf16 with f8E4M3FN inputs.
  Type outputType;
  /// f8E4M3FN inputs: the function argument numbers of the three descales
  /// (the steps' descale is q_descale * k_descale, elements of them; the
  /// normalization, or with per-block descales each step, applies
  /// v_descale) and their rank: 0 (f32 scalars, per tensor), 2 ([B, H], per
  /// head) or 3 ([B, H, blocks], per block of the tiles' rows: the tiled
  /// form's tiles are the descale blocks).
  std::optional<std::array<unsigned, 3>> descaleArgs;
  int64_t descaleRank = 0;
  /// Head dim of query/key and value (equal).
  int64_t headDim = 0;
  /// Query rows per forall iteration and keys per fa.online_attention step.
  int64_t blockQ = 0, blockKV = 0;
  /// The positional window of the masked steps, relative to the bottom-right
  /// diagonal Nk - Nq (causal: left = -1, right = 0); -1 is unbounded.
  int64_t windowLeft = -1, windowRight = -1;
  /// Softmax scale, natural units (the kernel folds log2(e)).
  double scale = 1.0;
  /// Whether the log-sum-exp is a second result.
  bool hasLse = false;
  /// softcap, the mask operand, score_mod / mask_mod (Common/ScoreModifiers).
  ScoreModifierSpec modifiers;
  /// fa.attention's kv_lens: the function argument of the per-sequence key
  /// counts ([B] i32), read once per tile (`tensor.extract %lens[batch]`).
  std::optional<unsigned> kvLensArg;
  /// fa.attention's pages: the function argument of the page table
  /// ([B, max_pages] i32) and the rows per page of the key/value pools
  /// [P, Hkv, pageSize, D]; the steps then read one page (or part of one)
  /// each, blockKV = gcd(the chip's block-kv, pageSize) keys.
  std::optional<unsigned> pageTableArg;
  int64_t pageSize = 0;
  /// fa.attention's varlen: the function arguments of the cumulative query
  /// and key offsets ([B + 1] i32); the forall's batch is the sequence, the
  /// planes are batch 0's, rows and keys count from the sequence's starts.
  std::optional<unsigned> cuSeqlensQArg, cuSeqlensKArg;
  bool isVarlen() const { return cuSeqlensQArg.has_value(); }

  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool isCausal() const { return windowLeft < 0 && windowRight == 0; }
};

/// Matches the tiled form in `func`: exactly one scf.forall holding
/// fa.online_attention ops, whose results are the function's results (out,
/// then lse when present). Emits a diagnostic and fails on anything a kernel
/// cannot take (fa.attention not tiled yet, a diagonal operand, a modifier
/// region the kernel cannot evaluate, another shape of loops or slices).
FailureOr<TiledAttention> matchTiledAttention(func::FuncOp func);

/// `name` as a PTX identifier: each character other than [A-Za-z0-9_$]
/// becomes '_', and a '_' goes before an empty name or a leading digit. A
/// valid name is returned unchanged.
std::string getPTXIdentifier(StringRef name);

/// Replaces `attn.func` by a gpu.module holding the kernel for `chip`
/// (inserted before it) and attaches the launch manifest to the enclosing
/// module; dispatches to the chip's builder. The kernel is named after the
/// function's getPTXIdentifier (`<id>_kernel` in gpu.module `<id>_kernels`).
/// Emits a diagnostic and fails, leaving the IR untouched, when the chip or
/// the attention is unsupported, the function is still referenced (it would
/// be erased), or a kernel name collides with an existing symbol.
/// Knobs of the kernel builders that the tiled form does not fix (0: the
/// chip's default).
struct NVGPUKernelOptions {
  /// Query rows per warp (sm_80: 16 or 32; default 32 when block-q >= 128).
  int64_t rowsPerWarp = 0;
  /// sm_90a schedule switches as the options ask for them (SM90/Schedule.def;
  /// resolveSM90Schedule applies them over the measured defaults, and a
  /// function's `fa.sm90.*` attributes over them).
  SM90ScheduleOptions sm90;
  /// Keep the function and make its body the kernel's launch on the host
  /// (Common/HostLaunch.h) instead of erasing it.
  bool hostLaunch = false;
  /// Backward kernels add dQ in a fixed order (BackwardConfig::deterministic).
  bool deterministic = false;
  /// varlen kernels read and write packed tensors token-major, [T, H, D]
  /// (varlen-layout=thd), else [H, T, D].
  bool varlenTokenMajor = true;
};
LogicalResult buildNVGPUKernel(const TiledAttention &attn, StringRef chip,
                               const NVGPUKernelOptions &options = {});

/// Replaces `func`, which must compute exactly `op` from its arguments, by a
/// gpu.module holding the backward kernel (AttentionGradToNVGPU.cpp; the
/// same mma.sync kernel for sm_80 and sm_90a) and attaches its manifest.
/// Emits a diagnostic and fails on what the kernel does not support.
LogicalResult buildAttentionGradKernel(func::FuncOp func, AttentionGradOp op,
                                       StringRef chip,
                                       const NVGPUKernelOptions &options);

/// Checks that `func` may become a kernel and renames it to its PTX
/// identifier (the kernels' names derive from it); see
/// AttentionToNVGPU.cpp. Returns the original name.
FailureOr<std::string> prepareKernelFunction(func::FuncOp func,
                                             bool hostLaunch);

/// The SM80 (mma.sync) FlashAttention-2 builder, SM80FlashAttention.cpp.
LogicalResult buildSM80FlashAttention(const TiledAttention &attn,
                                      StringRef chip,
                                      const NVGPUKernelOptions &options);

/// The SM90 (TMA + mbarrier + wgmma) builder, SM90FlashAttention.cpp.
LogicalResult buildSM90FlashAttention(const TiledAttention &attn,
                                      const NVGPUKernelOptions &options);

/// The block sizes fa-to-ptx tiles with for `chip` and head dim `headDim`
/// (fa-tile-attention-for-chip); 64 x 64 for an unknown chip, whose
/// diagnostic then comes from convert-fa-to-nvgpu. `maskBand`: the attention
/// is causal or has a sliding window (its mask compares cost registers).
/// `fp8`: f8E4M3FN inputs.
struct NVGPUTileSizes {
  int64_t blockQ, blockKV;
};
NVGPUTileSizes getNVGPUTileSizes(StringRef chip, int64_t headDim,
                                 bool maskBand = false, bool fp8 = false);

} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_ATTENTIONTONVGPU_H
