//===- LaunchManifest.h - the launch contract of a generated kernel -*- C++ -*-===//
//
// One schema for what a host needs to launch an fa kernel without MLIR: the
// kernel's parameters in launch order (with the tensors they point to), the
// grid as typed expressions, the block, shared memory, the TMA tensor maps
// with their CUDA enum values, and the kernel's schedule. Both chips' builders
// fill a LaunchManifest; fa-dump-kernel writes its toJSON() next to the PTX;
// python/fa_runtime reads it (docs/Manifest.md describes the format).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_LAUNCHMANIFEST_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_LAUNCHMANIFEST_H

#include "fa/Conversion/AttentionToNVGPU/Common/CudaEnums.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Types.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::fa {

/// The manifest format written by LaunchManifest::toJSON. A runtime refuses
/// a manifest of a version it does not know: bump this on any change that an
/// older runtime would misread (a new key it may ignore is not one).
constexpr int64_t kLaunchManifestSchemaVersion = 1;

/// A name a size expression may use: the launch sizes (the kernel's i32
/// parameters; a paged kernel's also num_pages and max_pages), the head dim
/// (D, fixed by the kernel) and the multiprocessor count of the device the
/// kernel is launched on (num_sms).
enum class SizeSymbol {
  B,
  Hq,
  Hkv,
  Nq,
  Nk,
  D,
  NumSMs,
  NumPages,
  MaxPages,
  MaxSeqlenQ,
  NumSplits,
  MaxSeqlenK
};

/// The symbol's name in the manifest ("B", ..., "D", "num_sms").
StringRef getSizeSymbolName(SizeSymbol symbol);

/// An integer expression over the size symbols, written as JSON data that the
/// runtime interprets without evaluating code. The whole grammar:
///   expr := integer | symbol
///         | {"ceil_div": [expr, expr]}
///         | {"mul": [expr, expr, ...]}
///         | {"min": [expr, expr, ...]}
///         | {"add": [expr, expr, ...]}
///         | {"floor_div": [expr, expr]}
///         | {"max": [expr, expr, ...]}
///   symbol := "B" | "Hq" | "Hkv" | "Nq" | "Nk" | "D" | "num_sms"
///           | "num_pages" | "max_pages" | "max_seqlen_q" | "num_splits"
///           | "max_seqlen_k"
class SizeExpr {
public:
  SizeExpr(int64_t value);     // NOLINT: an integer literal
  SizeExpr(SizeSymbol symbol); // NOLINT: a symbol
  static SizeExpr ceilDiv(SizeExpr numerator, SizeExpr denominator);
  static SizeExpr mul(ArrayRef<SizeExpr> factors);
  static SizeExpr min(ArrayRef<SizeExpr> operands);
  static SizeExpr add(ArrayRef<SizeExpr> terms);
  static SizeExpr floorDiv(SizeExpr numerator, SizeExpr denominator);
  static SizeExpr max(ArrayRef<SizeExpr> operands);

  llvm::json::Value toJSON() const;

private:
  enum class Kind { Literal, Symbol, CeilDiv, Mul, Min, Add, FloorDiv, Max };
  SizeExpr(Kind kind, ArrayRef<SizeExpr> operands);

  Kind kind;
  int64_t value = 0;
  SizeSymbol symbol = SizeSymbol::B;
  std::vector<SizeExpr> operands;
};

/// How a kernel parameter is passed: a device pointer to a tensor ("ptr"), a
/// device pointer to a 128-byte CUtensorMap of a tensor ("tensormap"), or a
/// 32-bit size whose name is a SizeSymbol ("i32").
enum class ParamKind { Pointer, TensorMap, I32 };

/// What the tensor behind a pointer parameter must be: its name in the
/// runtime's call (q, k, v, out, lse), its element type, its shape, and the
/// alignment of its address (the widest access the kernel makes to it);
/// always contiguous (row-major).
struct TensorContract {
  std::string name;
  std::string dtype;
  SmallVector<SizeExpr, 4> shape;
  int64_t alignBytes = 16;
};

/// One kernel parameter: the gpu.func argument type and the manifest entry
/// come from this one description.
struct KernelParam {
  std::string name;
  ParamKind kind;
  Type type; ///< the gpu.func argument type
  std::string meaning;
  std::optional<TensorContract> tensor; ///< set iff kind != I32

  /// A device pointer to a contiguous tensor, the parameter named as the
  /// tensor.
  static KernelParam pointer(StringRef name, Type type, StringRef dtype,
                             ArrayRef<SizeExpr> shape, int64_t alignBytes,
                             const Twine &meaning);

  llvm::json::Value toJSON() const;
};

/// The gpu.func argument types of an attention kernel: `input` for q, k and v
/// (a global memref, or !llvm.ptr to a CUtensorMap), `out`, `lse` (used when
/// the kernel writes one) and `size` (i32) for the sizes.
struct AttentionArgTypes {
  Type input, out, lse, size;
};

/// The parameters of an fa attention kernel in launch order: q, k, v (device
/// pointers, or with `tensorMaps` pointers to their CUtensorMaps, named
/// q_map, k_map, v_map), out, lse when `hasLse`, then B, Hq, Hkv, Nq, Nk.
/// `dtype` is the element type of q, k, v and out ("f16", "bf16").
std::vector<KernelParam>
getAttentionKernelParams(const AttentionArgTypes &types, StringRef dtype,
                         bool tensorMaps, bool hasLse);

/// Appends the launch sizes B, Hq, Hkv, Nq, Nk as i32 parameters of type
/// `sizeType` (every fa kernel ends with them).
void appendLaunchSizeParams(std::vector<KernelParam> &params, Type sizeType);

/// The parameters of per-sequence key lengths and a paged K/V pool
/// (docs/Attention.md): `kv_lens` [B] i32 and, paged, `page_table`
/// [B, max_pages] i32 (pointers of type `pointerType`) before the sizes; a
/// paged kernel also takes the sizes num_pages and max_pages (after Nk, which
/// is then the capacity max_pages * page_size), and its q/k/v contracts
/// describe k and v as pools [num_pages, Hkv, page_size, D].
void insertKVCacheParams(std::vector<KernelParam> &params, bool kvLens,
                         int64_t pageSize, Type pointerType, Type sizeType);

/// Whether a tensor parameter is one a modifier adds
/// (insertScoreModifierParams: the mask operand, captured arguments argN, their
/// gradients grad_argN), whose shape is its own (not the packed sequences').
inline bool isScoreModifierTensor(llvm::StringRef name) {
  if (name == "mask")
    return true;
  llvm::StringRef rest = name;
  if (!rest.consume_front("arg") && !rest.consume_front("grad_arg"))
    return false;
  return !rest.empty() &&
         llvm::all_of(rest, [](char c) { return c >= '0' && c <= '9'; });
}

/// The parameters of packed variable-length sequences (fa.attention's
/// varlen, docs/Attention.md): `cu_seqlens_q` and `cu_seqlens_k` ([B + 1]
/// i32 pointers of type `pointerType`) before the sizes and the size
/// `longest` after them (the forward's grid runs over max_seqlen_q's query
/// blocks, the backward's over max_seqlen_k's key blocks); B counts
/// sequences and N is the packed length. q, k, v and out are [N, H, D] with
/// `tokenMajor` (FlashAttention's varlen layout) and lse [Hq, Nq]; else all
/// are the batch-1 tensors [1, H, N, ...].
void insertVarlenParams(std::vector<KernelParam> &params, Type pointerType,
                        Type sizeType, bool tokenMajor,
                        SizeSymbol longest = SizeSymbol::MaxSeqlenQ);

/// The token-major shape of a packed plane tensor (FlashAttention's varlen
/// layout): [B or 1, H, N, D] -> [N, H, D], a row tensor [B or 1, H, N] ->
/// [H, N].
SmallVector<SizeExpr, 4> tokenMajorShape(ArrayRef<SizeExpr> planeShape);

/// The parameters of an in-kernel split-KV kernel (the sm_90a split-kv
/// schedule): the workspaces `split_o` [num_splits, B, Hq, Nq, D] and
/// `split_lse` [num_splits, B, Hq, Nq] (f32 pointers) and the arrival
/// counters `split_counter` [B, Hq, ceil(Nq / blockQ)] (i32, zero at launch,
/// left zero) before the sizes, and the size `num_splits` after them.
void insertSplitKVParams(std::vector<KernelParam> &params,
                         Type f32PointerType, Type i32PointerType,
                         Type sizeType, int64_t blockQ);

/// The parameter of a kernel with dynamic tiles: `tile_counter` [2] i32 (a
/// pointer of type `pointerType`) before the sizes. Zero at launch; the
/// kernel leaves it zero. A runtime keeps one per stream (launches that run
/// at the same time must not share one) and zeroes it once, when it
/// allocates it.
void insertTileCounterParam(std::vector<KernelParam> &params,
                            Type pointerType);

/// The shape of the fp8 kernels' descales: [1], [B, H] or [B, H, blocks].
enum class FP8DescaleShape { Tensor, Head, Block };

/// The parameters of the fp8 (f8E4M3FN) sm_90a kernel: as
/// getAttentionKernelParams with tensor maps, but v's map describes v_t
/// (v transposed to [B, Hkv, D, Nk padded to 32], LaunchManifest::vKeyOrder;
/// unless `vAsStored`: the kernel transposes v itself), out is `outDtype`
/// (f16 / bf16), and q_descale, k_descale, v_descale (f32 device pointers of
/// `descaleShape`, blocks of blockQ query rows and blockKV keys) follow out
/// (and lse).
std::vector<KernelParam>
getFP8AttentionKernelParams(const AttentionArgTypes &types, StringRef outDtype,
                            bool hasLse, FP8DescaleShape descaleShape,
                            int64_t blockQ, int64_t blockKV,
                            bool vAsStored = false);

/// The gpu.func argument types of `params`, in order.
SmallVector<Type> getKernelArgumentTypes(ArrayRef<KernelParam> params);

/// cuTensorMapEncodeTiled's arguments for one tensor, as the kernel's TMA
/// loads expect them. Sizes are expressions (innermost dimension first).
struct TensorMapSpec {
  std::string param;  ///< the tensormap parameter that receives it
  std::string tensor; ///< the tensor it describes (a name of the runtime's call)
  std::string layout; ///< human-readable ("q [B, Hq, Nq, D] contiguous")
  std::string dtype;
  cuda::TensorMapDataType dataType;
  SmallVector<SizeExpr, 3> dims;
  SmallVector<SizeExpr, 2> stridesBytes; ///< of dims 1 .. rank-1
  SmallVector<int64_t, 3> box, elementStrides;
  cuda::TensorMapInterleave interleave = cuda::TensorMapInterleave::None;
  cuda::TensorMapSwizzle swizzle = cuda::TensorMapSwizzle::None;
  cuda::TensorMapL2Promotion l2Promotion = cuda::TensorMapL2Promotion::None;
  cuda::TensorMapFloatOOBFill oobFill = cuda::TensorMapFloatOOBFill::None;

  llvm::json::Value toJSON() const;

  /// The map of a contiguous [B, `heads`, `length`, D] tensor as the 3-D
  /// (D, `length`, B * `heads`) one the TMA kernels here read and add to,
  /// with elements of `dataType` (`dtype`, `elementBytes`) and boxes
  /// (`boxColumns`, `boxRows`, 1); parameter `<tensor>_map`. Swizzle, L2
  /// promotion and fill are left to the caller (none).
  static TensorMapSpec headMajor(StringRef tensor, StringRef dtype,
                                 cuda::TensorMapDataType dataType,
                                 int64_t elementBytes, SizeSymbol heads,
                                 SizeSymbol length, int64_t boxColumns,
                                 int64_t boxRows);
};

/// A kernel of the same PTX module that a launch of the manifest's kernel
/// runs before or after it ("auxiliary_kernels"; the backward's preprocess
/// and postprocess, docs/Backward.md; an fp8 kernel's quantization,
/// docs/FP8.md): its own entry, parameters, grid and block, no dynamic
/// shared memory.
struct AuxiliaryKernel {
  /// What it computes ("op"): attention_grad_preprocess,
  /// attention_grad_postprocess, attention_fp8_quantize_q / _k / _v.
  std::string op;
  std::string kernel; ///< the gpu.func (and PTX entry) name
  std::vector<KernelParam> params;
  SmallVector<SizeExpr, 3> grid;
  std::array<int64_t, 3> block = {0, 0, 0};

  llvm::json::Value toJSON() const;
};

/// The launch contract of one kernel.
struct LaunchManifest {
  /// The op the kernel computes when it is not fa.attention ("op";
  /// "attention_grad": the backward kernel, docs/Backward.md).
  std::string op;
  std::string kernel; ///< the gpu.func (and PTX entry) name; PTX in <kernel>.ptx
  std::string chip;   ///< sm_80, sm_90a
  /// The func.func the kernel was compiled from, as written (the kernel's
  /// name is its PTX identifier: invalid characters replaced by '_').
  std::string function;
  // The attention it computes.
  std::string dtype; ///< of q, k, v and (unless outDtype) out
  std::string outDtype; ///< out's dtype when it differs ("out_dtype"; fp8)
  /// fp8: the order of the keys in each 32-key group of v_t ("v_key_order";
  /// kFP8VKeyOrder): v_t[b, h, d, 32g + c] = v[b, h, 32g + order[c], d].
  std::vector<int64_t> vKeyOrder;
  int64_t headDim = 0;
  bool causal = false;
  int64_t windowLeft = -1, windowRight = -1; ///< -1: unbounded
  double scale = 1.0;
  bool lse = false;
  int64_t blockQ = 0, blockKV = 0;
  /// The kernel reads per-sequence key lengths ("kv_lens": true).
  bool kvLens = false;
  /// Rows per page of a paged K/V pool ("page_size"; 0: not paged).
  int64_t pageSize = 0;
  /// Packed variable-length sequences ("varlen": true) and their layout
  /// ("varlen_layout": "thd" or "htd").
  bool varlen = false;
  std::string varlenLayout;
  // How to launch it.
  std::vector<KernelParam> params;
  SmallVector<SizeExpr, 3> grid;  ///< x, y, z
  std::optional<SizeExpr> tiles;  ///< persistent kernels: the work tiles
  /// split-kv kernels: the measured num_splits for the launch sizes and the
  /// device's SM count ("num_splits_plan"; a runtime's default).
  std::optional<SizeExpr> numSplitsPlan;
  std::array<int64_t, 3> block = {0, 0, 0};
  int64_t dynamicSharedMemoryBytes = 0, staticSharedMemoryBytes = 0;
  std::vector<TensorMapSpec> tensorMaps;
  /// Kernels a launch also runs, in the order listed (in the same PTX).
  std::vector<AuxiliaryKernel> auxiliaryKernels;
  /// Chip-specific schedule keys (switches, stages, rows per warp), written
  /// as top-level keys; not read by the runtime.
  SmallVector<std::pair<std::string, llvm::json::Value>> schedule;

  /// Checks that the manifest is well formed (parameter names unique and
  /// sizes named by size symbols, each tensormap parameter with one tensor
  /// map, ranks consistent, grid and block of 3, schedule keys not shadowing
  /// a schema key) and that `kernel`'s argument types are the parameters'
  /// types in order, and the same of each auxiliary kernel (a gpu.func of
  /// `kernel`'s module); emits an error at `kernel` otherwise.
  LogicalResult verify(FunctionOpInterface kernel) const;

  llvm::json::Object toJSON() const;
  /// toJSON() indented by 2, as fa-dump-kernel writes it.
  std::string toJSONString() const;
};

/// Records a kernel's manifest JSON on `module` (attribute
/// fa.manifest.<gpuModuleName> = {kernel, json}), where fa-dump-kernel finds it.
void attachLaunchManifest(ModuleOp module, StringRef gpuModuleName,
                          StringRef kernelName, StringRef json);

} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_LAUNCHMANIFEST_H
