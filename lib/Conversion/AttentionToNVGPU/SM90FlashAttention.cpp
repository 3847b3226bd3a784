//===- SM90FlashAttention.cpp - sm_90a FlashAttention-3 style kernel ------===//
//
// Builds, with builders, the Hopper forward kernel for one attention:
// grid (ceil(Nq/128), Hq, B), 2 consumer warpgroups of 64 query rows (+ a
// producer warpgroup when warp specialized); Q, K and V tiles brought by TMA
// (nvgpu.tma.async.load, 128-byte swizzle, zero fill out of bounds) into
// dynamic shared memory, a ring of `stages` K/V buffers guarded by mbarriers
// (expect_tx by the issuing thread, try_wait.parity by the consumers);
// S = Q K^T by nvvm.wgmma.mma_async (both operands in shared memory, f32
// accumulators in registers); online softmax in registers; O += P V with P
// from registers (inline-PTX wgmma with A in registers; optionally P through
// swizzled shared memory + fence.proxy.async and the descriptor form);
// deferred normalization; O staged in shared memory, 16-byte stores.
// See docs/SM90.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "KernelBuilderBase.h"
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;

static constexpr int64_t kGlobalExtent = int64_t(1) << 40;
static constexpr int64_t kWG = kSM90Warpgroups;
static constexpr int64_t kRows = kSM90RowsPerWarpgroup;
/// Elements per 128-byte swizzle row (16-bit types).
static constexpr int64_t kSwz = 64;

std::string mlir::fa::checkSM90AttentionDesc(const SM90AttentionDesc &d) {
  if (!d.elementType || !(d.elementType.isF16() || d.elementType.isBF16()))
    return "sm_90a kernel needs f16 or bf16 inputs";
  if (d.headDim != 64 && d.headDim != 128 && d.headDim != 256)
    return "sm_90a kernel supports head dim 64, 128 or 256, got " +
           std::to_string(d.headDim);
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
  int64_t bytes = kWG * kRows * d.headDim * 2 + 2 * d.stages * kBN * d.headDim * 2 +
                  (d.pFromRegisters ? 0 : kWG * kRows * kBN * 2) + 1024;
  if (bytes > 227 * 1024)
    return "sm_90a kernel with " + std::to_string(d.stages) +
           " stages needs " + std::to_string(bytes) +
           " bytes of shared memory (at most 232448) at head dim " +
           std::to_string(d.headDim) + " with " + std::to_string(kBN) +
           "-key K/V tiles: use fewer stages or a smaller block-kv";
  return "";
}

namespace {
struct SM90Builder : fa::detail::KernelBuilderBase {
  const SM90AttentionDesc &d;

  Value i64c(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value fmax(Value x, Value y) {
    Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
    return arith::SelectOp::create(b, loc, gt, x, y);
  }
  Value quadReduce(Value v, bool isMax) {
    for (int32_t off : {1, 2}) {
      Value o =
          gpu::ShuffleOp::create(b, loc, v, off, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      v = isMax ? fmax(v, o) : arith::AddFOp::create(b, loc, v, o).getResult();
    }
    return v;
  }
  Value toI64(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }
  /// wgmma shared-memory descriptor: `base` holds the start address >> 4
  /// (i64); adds `byteOff` (a multiple of 16) and the constant fields:
  /// leading byte offset, stride byte offset 1024 (8 rows of 128 bytes) and
  /// the 128-byte swizzle mode.
  Value desc(Value base, int64_t byteOff, int64_t lbo) {
    int64_t hi = ((lbo >> 4) << 16) | (int64_t(1024 >> 4) << 32) |
                 (int64_t(1) << 62);
    Value v = arith::AddIOp::create(b, loc, base, i64c(byteOff >> 4));
    return arith::OrIOp::create(b, loc, v, i64c(hi));
  }
  LLVM::LLVMStructType accType(int64_t n) {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(n / 2, b.getF32Type()));
  }
  NVVM::WGMMATypes wgType() {
    return d.elementType.isF16() ? NVVM::WGMMATypes::f16
                                 : NVVM::WGMMATypes::bf16;
  }
  /// One m64nNk16 wgmma; `transB` reads B MN-major.
  Value wgmma(Value acc, Value descA, Value descB, int64_t n, bool first,
              bool transB) {
    return NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, descA, descB,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16), wgType(), wgType(),
        NVVM::WGMMATypes::f32,
        first ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        transB ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        NVVM::MMAIntOverflowAttr());
  }
  /// One m64nNk16 wgmma with A (4 x b32: f16x2/bf16x2 pairs in the
  /// accumulator-fragment layout) in registers and B MN-major from shared
  /// memory (`tnspB`), accumulating into `acc`. The nvvm dialect only has the
  /// shared-memory-A form, so this is inline PTX; the accumulator is tied
  /// (outputs 0..N/2-1, inputs "0".."N/2-1").
  Value wgmmaRegA(Value acc, ArrayRef<Value> a, Value descB, int64_t n) {
    int64_t nAcc = n / 2;
    std::string ty = d.elementType.isF16() ? "f16" : "bf16";
    std::string str = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                      "wgmma.mma_async.sync.aligned.m64n" +
                      std::to_string(n) + "k16.f32." + ty + "." + ty + " {";
    std::string cons;
    for (int64_t i = 0; i < nAcc; ++i) {
      str += (i ? ", $" : "$") + std::to_string(i);
      cons += (i ? ",=f" : "=f");
    }
    for (int64_t i = 0; i < nAcc; ++i)
      cons += "," + std::to_string(i);
    str += "}, {";
    for (int64_t i = 0; i < 4; ++i) {
      str += (i ? ", $" : "$") + std::to_string(2 * nAcc + i);
      cons += ",r";
    }
    str += "}, $" + std::to_string(2 * nAcc + 4) + ", p, 1, 1, 1;\n}";
    cons += ",l";
    SmallVector<Value> ops;
    for (int64_t i = 0; i < nAcc; ++i)
      ops.push_back(extract(acc, i));
    ops.append(a.begin(), a.end());
    ops.push_back(descB);
    return LLVM::InlineAsmOp::create(
               b, loc, acc.getType(), ops, str, cons,
               /*has_side_effects=*/true, /*is_align_stack=*/false,
               LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr::get(b.getContext(),
                                         LLVM::AsmDialect::AD_ATT),
               ArrayAttr())
        .getResult(0);
  }
  /// Keeps the i32 `regs` alive (and unmodified) up to this point: an empty
  /// inline asm that "rewrites" them. Placed after the wgmma.wait_group of a
  /// register-A wgmma so that the next block's P cannot be assigned the
  /// registers that wgmma is still reading.
  SmallVector<Value> fenceRegs(ArrayRef<Value> regs) {
    std::string cons;
    SmallVector<Type> tys(regs.size(), b.getI32Type());
    for (size_t i = 0; i < regs.size(); ++i)
      cons += (i ? ",=r" : "=r");
    for (size_t i = 0; i < regs.size(); ++i)
      cons += "," + std::to_string(i);
    auto st = LLVM::LLVMStructType::getLiteral(b.getContext(), tys);
    Value r = LLVM::InlineAsmOp::create(
                  b, loc, st, regs, "", cons, /*has_side_effects=*/true,
                  /*is_align_stack=*/false,
                  LLVM::tailcallkind::TailCallKind::None,
                  LLVM::AsmDialectAttr::get(b.getContext(),
                                            LLVM::AsmDialect::AD_ATT),
                  ArrayAttr())
                  .getResult(0);
    SmallVector<Value> out;
    for (size_t i = 0; i < regs.size(); ++i)
      out.push_back(extract(r, i));
    return out;
  }
  Value extract(Value s, int64_t i) {
    return LLVM::ExtractValueOp::create(b, loc, s, ArrayRef<int64_t>{i});
  }
  Value insert(Value s, Value v, int64_t i) {
    return LLVM::InsertValueOp::create(b, loc, s, v, ArrayRef<int64_t>{i});
  }
  /// `v` (an index below 2^31) through an empty inline asm: the same value,
  /// but nothing derived from it can be hoisted above this point or merged
  /// with what was derived from `v` before.
  Value opaque(Value v) {
    Value x = arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
    Value y = LLVM::InlineAsmOp::create(
                  b, loc, b.getI32Type(), ValueRange{x}, "mov.u32 $0, $1;",
                  "=r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
                  LLVM::tailcallkind::TailCallKind::None,
                  LLVM::AsmDialectAttr::get(b.getContext(),
                                            LLVM::AsmDialect::AD_ATT),
                  ArrayAttr())
                  .getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), y);
  }
  template <typename Fn> void ifThen(Value cond, Fn fn) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    fn();
  }
};
} // namespace

std::string mlir::fa::buildSM90AttentionKernel(OpBuilder &b, Location loc,
                                               const SM90AttentionDesc &d) {
  MLIRContext *ctx = b.getContext();
  Type elt = d.elementType;
  bool ws = d.warpSpecialized;
  bool ov = ws && d.overlap; // the pipelined schedule needs the producer
  bool pr = d.pFromRegisters;
  const int64_t kBN = d.blockKV; // keys per K/V tile (wgmma N of S)
  // Scores stay unscaled until the exponent: exp2(s * c - m) as one FMA
  // (needs c > 0 so that the max commutes with the scaling).
  bool fast = d.fastSoftmax && d.scale > 0;
  bool early = ov && pr && d.rescaleBeforePV;
  bool warpArrive = ws && d.warpArrive;
  int64_t polyEvery = d.exp2PolyEvery;
  // Consumer warpgroups 0..kWG-1; with warp specialization, warpgroup kWG is
  // the producer (one thread issues every TMA).
  int64_t kThreads = 128 * (kWG + (ws ? 1 : 0));
  int64_t D = d.headDim, S = d.stages;
  int64_t subs = D / kSwz; // 64-column sub-tiles of a [rows x D] tile
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto gTy = MemRefType::get({kGlobalExtent}, elt);
  auto lseTy = MemRefType::get({kGlobalExtent}, f32);

  // Shared memory, bytes from a 1024-aligned base.
  int64_t subTileQ = kRows * kSwz * 2;  // one [64 x 64] sub-tile: 8 KiB
  int64_t subTileKV = kBN * kSwz * 2;   // one [BN x 64] sub-tile
  int64_t qOff = 0, qBytes = kWG * kRows * D * 2;
  int64_t stageBytes = kBN * D * 2;
  int64_t kOff = qOff + qBytes, vOff = kOff + S * stageBytes;
  int64_t pOff = vOff + S * stageBytes;
  int64_t pBytesPerWG = pr ? 0 : kRows * kBN * 2;
  int64_t total = pOff + kWG * pBytesPerWG;
  int64_t dynBytes = total + 1024;

  SmallVector<Type> inputs = {ptrTy, ptrTy, ptrTy, gTy};
  if (d.hasLse)
    inputs.push_back(lseTy);
  inputs.append(5, i32);

  auto gpuMod = gpu::GPUModuleOp::create(b, loc, d.moduleName);
  OpBuilder::InsertionGuard topGuard(b);
  b.setInsertionPointToStart(&gpuMod.getBodyRegion().front());
  auto kfn = gpu::GPUFuncOp::create(b, loc, d.kernelName,
                                    b.getFunctionType(inputs, {}));
  kfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kfn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(kThreads), 1, 1}));
  b.setInsertionPointToStart(&kfn.getBody().front());
  SM90Builder kb{{b, loc}, d};

  auto args = kfn.getArguments();
  Value oG = args[3];
  Value lseG = d.hasLse ? args[4] : Value();
  unsigned s0 = d.hasLse ? 5 : 4;
  auto asIndex = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  Value hq = asIndex(args[s0 + 1]), hkv = asIndex(args[s0 + 2]),
        nq = asIndex(args[s0 + 3]), nk = asIndex(args[s0 + 4]);

  // Tensor maps: 3-D (D, N, B*H) boxes (64, rows, 1); the kernel receives a
  // pointer to each 128-byte CUtensorMap in device memory.
  auto tmaTy = [&](int64_t rows) {
    return nvgpu::TensorMapDescriptorType::get(
        ctx, MemRefType::get({1, rows, kSwz}, elt, MemRefLayoutAttrInterface{}, wg),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  };
  auto castDesc = [&](Value ptr, Type ty) {
    return UnrealizedConversionCastOp::create(b, loc, ty, ptr).getResult(0);
  };
  Value qMap = castDesc(args[0], tmaTy(kRows));
  Value kMap = castDesc(args[1], tmaTy(kBN));
  Value vMap = castDesc(args[2], tmaTy(kBN));

  // Persistent: the tile values below (query block, head, batch and what
  // follows from them) are set per tile inside the producer's and the
  // consumers' tile loops; otherwise once per CTA from blockIdx.
  bool persistent = ws && d.persistent;
  bool splitRelease = ws && d.splitRelease;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  // With a right edge and no left one (causal) the work grows with the query
  // block: hand the longest ones out first (CTAs start in blockIdx order, x
  // fastest) so that the grid ends on short ones.
  bool longestFirst =
      d.longestFirst && d.windowLeft < 0 && d.windowRight >= 0;
  Value qBlock, head, bIdx;
  if (!persistent) {
    qBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    if (longestFirst)
      qBlock = arith::SubIOp::create(
          b, loc,
          arith::SubIOp::create(
              b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x),
              kb.idx(1)),
          qBlock);
    head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    bIdx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  }
  Value wgi = kb.div(tid, 128), ltid = kb.rem(tid, 128);
  Value warp = kb.div(ltid, 32), lane = kb.rem(ltid, 32);
  Value g = kb.div(lane, 4), t4 = kb.rem(lane, 4);
  Value kvHead, qPlane, kvPlane, q0;
  auto tilePlanes = [&] {
    kvHead = arith::DivUIOp::create(
        b, loc, head, arith::DivUIOp::create(b, loc, hq, hkv));
    qPlane = kb.add(kb.mul(bIdx, hq), head);
    kvPlane = kb.add(kb.mul(bIdx, hkv), kvHead);
    q0 = kb.mul(qBlock, kb.idx(kSM90BlockQ));
  };
  if (!persistent)
    tilePlanes();
  // The static tile scheduler: tiles = ceil(Nq/128) * Hq * B, CTA c takes
  // tiles c, c + gridDim.x, ...; tile t is (query block, head, batch) with
  // the query block fastest, or, longest first, the heads and batches of the
  // last query block first (query block = nqb - 1 - t / (Hq * B)).
  Value numQBlocks, numTiles;
  if (persistent) {
    numQBlocks = kb.div(kb.add(nq, kb.idx(kSM90BlockQ - 1)), kSM90BlockQ);
    numTiles = kb.mul(kb.mul(numQBlocks, hq), asIndex(args[s0]));
  }
  auto decodeTile = [&](Value tile) {
    auto divV = [&](Value x, Value y) -> Value {
      return arith::DivUIOp::create(b, loc, x, y);
    };
    auto remV = [&](Value x, Value y) -> Value {
      return arith::RemUIOp::create(b, loc, x, y);
    };
    Value rest;
    if (longestFirst) {
      Value planes = kb.mul(hq, asIndex(args[s0]));
      qBlock = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, numQBlocks, kb.idx(1)),
          divV(tile, planes));
      rest = remV(tile, planes);
    } else {
      qBlock = remV(tile, numQBlocks);
      rest = divV(tile, numQBlocks);
    }
    head = remV(rest, hq);
    bIdx = divV(rest, hq);
    tilePlanes();
  };
  Value isIssuer = kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0));

  // Dynamic shared memory, realigned to 1024 bytes (128-byte swizzle atoms).
  auto dynTy = MemRefType::get({ShapedType::kDynamic}, i8,
                               MemRefLayoutAttrInterface{}, wg);
  Value dyn = gpu::DynamicSharedMemoryOp::create(b, loc, dynTy);
  Value rawAddr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dyn);
  Value shift = kb.rem(
      arith::SubIOp::create(b, loc, kb.idx(1024), kb.rem(rawAddr, 1024)), 1024);
  Value smemAddr = kb.add(rawAddr, shift);
  Value descBase = kb.toI64(kb.div(smemAddr, 16));
  auto view = [&](Value byteOff, MemRefType ty) -> Value {
    return memref::ViewOp::create(b, loc, ty, dyn, kb.add(shift, byteOff),
                                  ValueRange{});
  };
  auto flatTy = MemRefType::get({total / 2}, elt, MemRefLayoutAttrInterface{}, wg);
  Value flat = view(kb.idx(0), flatTy);
  auto boxTy = [&](int64_t rows) {
    return MemRefType::get({1, rows, kSwz}, elt, MemRefLayoutAttrInterface{},
                           wg);
  };

  // mbarriers: 0 = Q, 1 + s = K stage s, 1 + S + s = V stage s; with warp
  // specialization 1 + 2S + s = stage s released by all consumer threads
  // (with splitRelease: K of stage s released, and 1 + 3S + s = V of stage s
  // released); persistent: then one more, the Q tile is free (every consumer
  // thread arrives after its epilogue has read O back from it).
  int64_t relKBar = 1 + 2 * S, relVBar = splitRelease ? 1 + 3 * S : relKBar;
  int64_t qFreeBar = 1 + (splitRelease ? 4 : 3) * S;
  int64_t numBars = ws ? qFreeBar + (persistent ? 1 : 0) : 1 + 2 * S;
  auto barTy = nvgpu::MBarrierGroupType::get(ctx, wg, numBars);
  Value bars = nvgpu::MBarrierCreateOp::create(b, loc, barTy);
  kb.ifThen(isIssuer, [&] {
    for (int64_t i = 0; i < numBars; ++i)
      nvgpu::MBarrierInitOp::create(
          b, loc, bars,
          kb.idx(i == qFreeBar ? kWG * 128
                 : i > 2 * S   ? kWG * (warpArrive ? 4 : 128)
                               : 1),
          kb.idx(i), Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  gpu::BarrierOp::create(b, loc);

  // Key blocks to visit, [kvBegin, kvEnd), as the tiled form's
  // fa.kv_block_range computes them for the CTA's rows [q0, min(q0 + 128, Nq))
  // (bottom-right diagonal Nk - Nq); blocks outside [fullBegin, fullEnd)
  // straddle a window edge and need per-score masks. Without a window that is
  // [0, ceil(Nk / BN)), computed as before the window support (same PTX).
  // Loops run over blocks j in [kvBegin, kvEnd); the ring stage and the
  // mbarrier parities come from the iteration count j - kvBegin.
  Value diag, kvBegin, kvEnd, fullBegin, fullEnd;
  auto tileRange = [&] {
    diag = arith::SubIOp::create(b, loc, nk, nq);
    if (d.hasWindow()) {
      Value qEnd = arith::MinSIOp::create(b, loc, kb.add(q0, kb.idx(kSM90BlockQ)),
                                          nq);
      KVBlockRange range = computeKVBlockRange(
          b, loc, q0, qEnd, nk, diag, kBN, d.windowLeft, d.windowRight);
      // Without a left edge range.begin is min(0, Nk) / BN, i.e. 0 (Nk >= 0),
      // which the folders cannot see: use the constant (causal loops as before).
      kvBegin = d.windowLeft >= 0 ? range.begin : kb.idx(0);
      kvEnd = range.end;
      fullBegin = range.fullBegin;
      fullEnd = range.fullEnd;
    } else {
      kvBegin = kb.idx(0);
      kvEnd = kb.div(kb.add(nk, kb.idx(kBN - 1)), kBN);
    }
  };
  if (!persistent)
    tileRange();
  // Persistent: the K/V blocks of the CTA's earlier tiles (the running block
  // counter carried by the tile loops), so that ring stages and parities run
  // on across tiles.
  Value kvBase;
  // The iteration count of block j, from which stages and parities follow.
  auto iterOf = [&](Value j) -> Value {
    Value it = arith::SubIOp::create(b, loc, j, kvBegin);
    return kvBase ? kb.add(kvBase, it) : it;
  };
  // Block kvBegin + k (a constant without a left edge).
  auto blockAt = [&](int64_t k) -> Value {
    return d.windowLeft >= 0 ? kb.add(kvBegin, kb.idx(k)) : kb.idx(k);
  };

  // TMA issue (thread 0 only).
  // K (kv = 0) and V (kv = 1) of `block` into ring stage `stage`, or only
  // the one `only` names.
  auto issueKV = [&](Value block, Value stage, int only = -1) {
    Value stageOff = kb.mul(stage, kb.idx(stageBytes));
    for (int kv = 0; kv < 2; ++kv) {
      if (only >= 0 && kv != only)
        continue;
      Value barId = kb.add(kb.idx(1 + kv * S), stage);
      nvgpu::MBarrierArriveExpectTxOp::create(b, loc, bars,
                                              kb.idx(stageBytes), barId,
                                              Value());
      for (int64_t s = 0; s < subs; ++s) {
        Value dst = view(kb.add(stageOff, kb.idx((kv ? vOff : kOff) +
                                                 s * subTileKV)),
                         boxTy(kBN));
        nvgpu::TmaAsyncLoadOp::create(
            b, loc, dst, bars, kv ? vMap : kMap,
            ValueRange{kb.idx(s * kSwz), kb.mul(block, kb.idx(kBN)), kvPlane},
            barId, Value(), Value());
      }
    }
  };
  auto issueQ = [&] {
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, bars, kb.idx(qBytes),
                                            kb.idx(0), Value());
    for (int64_t w = 0; w < kWG; ++w)
      for (int64_t s = 0; s < subs; ++s) {
        Value dst = view(kb.idx(qOff + (w * subs + s) * subTileQ), boxTy(kRows));
        nvgpu::TmaAsyncLoadOp::create(
            b, loc, dst, bars, qMap,
            ValueRange{kb.idx(s * kSwz), kb.add(q0, kb.idx(w * kRows)), qPlane},
            kb.idx(0), Value(), Value());
      }
  };
  Value ticks = kb.idx(10000000);
  auto waitBar = [&](Value barId, Value parity) {
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, bars, parity, ticks, barId);
  };
  auto parityOf = [&](Value round) {
    return arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        arith::IndexCastOp::create(b, loc, i32, kb.rem(round, 2)));
  };
  // The producer's step for ring iteration `it` (stage `stage`): wait until
  // the consumers released the stage's previous use, then `issue` the loads
  // (kv = 0: K, 1: V, -1: both). With splitRelease K and V are released and
  // refilled separately: K_j's buffer is free once S_j is done, half a step
  // before P V frees V's.
  auto streamBlock = [&](Value it, Value stage,
                         llvm::function_ref<void(int)> issue) {
    auto waitReleased = [&](int64_t bar) {
      kb.ifThen(kb.cmp(arith::CmpIPredicate::sge, it, kb.idx(S)), [&] {
        Value round = arith::SubIOp::create(b, loc, kb.div(it, S), kb.idx(1));
        waitBar(kb.add(kb.idx(bar), stage), parityOf(round));
      });
    };
    waitReleased(relKBar);
    if (!splitRelease)
      return issue(-1);
    issue(0);
    waitReleased(relVBar);
    issue(1);
  };
  if (!ws) {
    kb.ifThen(isIssuer, [&] {
      issueQ();
      for (int64_t s = 0; s < S; ++s) {
        Value block = blockAt(s);
        kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, block, kvEnd),
                  [&] { issueKV(block, kb.idx(s)); });
      }
    });
  } else {
    // Producer warpgroup: gives registers back, then one thread streams
    // every K/V block into the ring, waiting for a stage to be released.
    auto roleIf = scf::IfOp::create(
        b, loc, kb.cmp(arith::CmpIPredicate::eq, wgi, kb.idx(kWG)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&roleIf.getThenRegion().front());
      NVVM::SetMaxRegisterOp::create(b, loc, d.producerRegs,
                                     NVVM::SetMaxRegisterAction::decrease);
      kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, ltid, kb.idx(0)), [&] {
        if (!persistent) {
          issueQ();
          auto ploop = scf::ForOp::create(b, loc, kvBegin, kvEnd, kb.idx(1));
          OpBuilder::InsertionGuard g3(b);
          b.setInsertionPointToStart(ploop.getBody());
          Value j = ploop.getInductionVar();
          Value it = iterOf(j);
          Value stage = kb.rem(it, S);
          streamBlock(it, stage, [&](int kv) { issueKV(j, stage, kv); });
          return;
        }
        // The tile loop; carries the running block counter and the CTA's
        // tile count n. Q of tile n > 0 goes into the Q tile once the
        // consumers have freed it (Q-free phase n - 1), issued after the
        // first min(S, blocks) K/V blocks of the tile (which only need ring
        // stages, released before the previous epilogue), so the ring fills
        // under that epilogue; tile 0's Q goes first. The producer runs on
        // 24 registers: the K/V loop runs over the running count itself and
        // the Q coordinates are decoded again where Q is issued.
        auto tloop = scf::ForOp::create(
            b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
            numTiles, gpu::GridDimOp::create(b, loc, gpu::Dimension::x),
            ValueRange{kb.idx(0), kb.idx(0)});
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(tloop.getBody());
        Value tile = tloop.getInductionVar();
        decodeTile(tile);
        tileRange();
        Value base = tloop.getRegionIterArgs()[0];
        Value n = tloop.getRegionIterArgs()[1];
        Value count = arith::SubIOp::create(b, loc, kvEnd, kvBegin);
        Value first = kb.cmp(arith::CmpIPredicate::eq, n, kb.idx(0));
        Value qAt = arith::SelectOp::create(
            b, loc, first, kb.idx(0),
            arith::MinSIOp::create(b, loc, count, kb.idx(S)));
        Value itEnd = kb.add(base, count), qAtIt = kb.add(base, qAt);
        Value jOff = arith::SubIOp::create(b, loc, kvBegin, base);
        auto loadQ = [&] {
          kb.ifThen(kb.cmp(arith::CmpIPredicate::ne, n, kb.idx(0)), [&] {
            waitBar(kb.idx(qFreeBar),
                    parityOf(arith::SubIOp::create(b, loc, n, kb.idx(1))));
          });
          Value saved[] = {qBlock, head,    bIdx, kvHead,
                           qPlane, kvPlane, q0,   shift};
          decodeTile(kb.opaque(tile));
          shift = kb.opaque(shift);
          issueQ();
          std::tie(qBlock, head, bIdx, kvHead, qPlane, kvPlane, q0, shift) =
              std::tie(saved[0], saved[1], saved[2], saved[3], saved[4],
                       saved[5], saved[6], saved[7]);
        };
        {
          auto ploop = scf::ForOp::create(b, loc, base, itEnd, kb.idx(1));
          OpBuilder::InsertionGuard g4(b);
          b.setInsertionPointToStart(ploop.getBody());
          Value it = ploop.getInductionVar();
          kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, it, qAtIt), loadQ);
          Value stage = kb.rem(it, S);
          streamBlock(it, stage, [&](int kv) {
            Value savedShift = shift;
            shift = kb.opaque(shift); // addresses computed here, not hoisted
            issueKV(kb.add(it, jOff), stage, kv);
            shift = savedShift;
          });
        }
        kb.ifThen(kb.cmp(arith::CmpIPredicate::sle, itEnd, qAtIt), loadQ);
        scf::YieldOp::create(b, loc,
                             ValueRange{itEnd, kb.add(n, kb.idx(1))});
      });
    }
    // Consumers: everything below runs in the else branch.
    b.setInsertionPointToStart(&roleIf.getElseRegion().front());
    NVVM::SetMaxRegisterOp::create(b, loc, d.consumerRegs,
                                   NVVM::SetMaxRegisterAction::increase);
  }

  // Persistent consumers: the same tile loop as the producer's, carrying the
  // running block counter and the tile count n (the Q parity); it ends after
  // the epilogue (Q-free arrival).
  Value tileN, tileIdx;
  if (persistent) {
    auto tloop = scf::ForOp::create(
        b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), numTiles,
        gpu::GridDimOp::create(b, loc, gpu::Dimension::x),
        ValueRange{kb.idx(0), kb.idx(0)});
    b.setInsertionPointToStart(tloop.getBody());
    tileIdx = tloop.getInductionVar();
    decodeTile(tileIdx);
    tileRange();
    kvBase = tloop.getRegionIterArgs()[0];
    tileN = tloop.getRegionIterArgs()[1];
    // The thread index again, through an opaque read, so that what the tile
    // body derives from it (swizzled epilogue addresses, descriptors) stays
    // in the body instead of being hoisted out of the tile loop and held in
    // registers across the K/V loop (spills at the 168-register cap).
    tid = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        LLVM::InlineAsmOp::create(
            b, loc, i32, ValueRange{}, "mov.u32 $0, %tid.x;", "=r",
            /*has_side_effects=*/true, /*is_align_stack=*/false,
            LLVM::tailcallkind::TailCallKind::None,
            LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
            ArrayAttr())
            .getResult(0));
    wgi = kb.div(tid, 128);
    ltid = kb.rem(tid, 128);
    warp = kb.div(ltid, 32);
    lane = kb.rem(ltid, 32);
    g = kb.div(lane, 4);
    t4 = kb.rem(lane, 4);
    waitBar(kb.idx(0), parityOf(tileN));
  } else {
    waitBar(kb.idx(0),
            arith::ConstantOp::create(b, loc, b.getBoolAttr(false)));
  }

  // Per-warpgroup descriptor bases (address >> 4).
  Value qDescW = arith::AddIOp::create(
      b, loc, descBase, kb.toI64(kb.mul(wgi, kb.idx(subs * subTileQ / 16))));
  Value pDescW = arith::AddIOp::create(
      b, loc, descBase, kb.toI64(kb.mul(wgi, kb.idx(pBytesPerWG / 16))));

  double negInf = -std::numeric_limits<double>::infinity();
  LLVM::LLVMStructType sTy = kb.accType(kBN), oTy = kb.accType(D);
  Value oInit = LLVM::ZeroOp::create(b, loc, oTy);
  Value sUndef = LLVM::PoisonOp::create(b, loc, sTy);
  Value rowInWG[2], rowQ[2], rowDiag[2];
  rowInWG[0] = kb.add(kb.mul(warp, kb.idx(16)), g);
  rowInWG[1] = kb.add(rowInWG[0], kb.idx(8));
  Value wgRow0 = kb.add(q0, kb.mul(wgi, kb.idx(kRows)));
  for (int r = 0; r < 2; ++r) {
    rowQ[r] = kb.add(wgRow0, rowInWG[r]);
    rowDiag[r] = kb.add(rowQ[r], diag); // the row's diagonal key
  }
  Value pFlatW = kb.add(kb.idx(pOff / 2), kb.mul(wgi, kb.idx(pBytesPerWG / 2)));
  Value qFlatW = kb.add(kb.idx(qOff / 2), kb.mul(wgi, kb.idx(subs * subTileQ / 2)));
  Value t2 = kb.mul(t4, kb.idx(2));
  // Element index of (row, col) in a swizzled [64 x cols] tile at `base`,
  // for a row whose index mod 8 is g (all rows of this thread).
  auto swzIndex = [&](Value base, Value row, int64_t col) {
    int64_t sub = col / kSwz, chunk = (col % kSwz) / 8;
    Value phys = arith::XOrIOp::create(b, loc, kb.idx(chunk), g);
    return kb.add(kb.add(base, kb.idx(sub * kRows * kSwz)),
                  kb.add(kb.mul(row, kb.idx(kSwz)),
                         kb.add(kb.mul(phys, kb.idx(8)),
                                kb.add(t2, kb.idx(col % 8)))));
  };
  Value namedBarId = arith::IndexCastOp::create(b, loc, i32, kb.add(wgi, kb.idx(1)));
  Value wgThreads = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(128));
  auto wgBarrier = [&] {
    NVVM::BarrierOp::create(b, loc, Type(), namedBarId, wgThreads,
                            NVVM::BarrierReductionAttr(), Value());
  };

  // ---- Pieces of a consumer step (one K/V block) ----
  Value ninf = kb.f32(negInf), scaleC = kb.f32(d.scale * M_LOG2E);
  int64_t perRow = kBN / 4;
  // Stage and "full" parity of the block at iteration count `it`.
  auto stageOf = [&](Value it) { return kb.rem(it, S); };
  auto parityOfIter = [&](Value it) { return parityOf(kb.div(it, S)); };
  auto stageDescOf = [&](Value stage) -> Value {
    return arith::AddIOp::create(
        b, loc, descBase, kb.toI64(kb.mul(stage, kb.idx(stageBytes / 16))));
  };
  // Issues S = Q K^T for the block in `stage` (no commit, no wait).
  auto issueS = [&](Value kDescS) {
    Value s = sUndef;
    for (int64_t kk = 0; kk < D / 16; ++kk) {
      int64_t inner = (kk / 4), k32 = (kk % 4) * 32;
      Value da = kb.desc(qDescW, qOff + inner * subTileQ + k32, 16);
      Value db = kb.desc(kDescS, kOff + inner * subTileKV + k32, 16);
      s = kb.wgmma(s, da, db, kBN, kk == 0, /*transB=*/false);
    }
    return s;
  };
  // Issues O += P V for the block in `stage` (V read MN-major).
  auto issuePV = [&](Value acc, Value kDescS) {
    for (int64_t kc = 0; kc < kBN / 16; ++kc) {
      Value da =
          kb.desc(pDescW, pOff + (kc / 4) * subTileQ + (kc % 4) * 32, 16);
      Value dv = kb.desc(kDescS, vOff + kc * 16 * kSwz * 2, subTileKV);
      acc = kb.wgmma(acc, da, dv, D, false, /*transB=*/true);
    }
    return acc;
  };
  // Online softmax of S (block j): masks where needed, updates m and l,
  // returns alpha per row and P (f32) per row.
  struct Soft {
    Value newM[2], newL[2], alpha[2];
    SmallVector<Value> p[2];
  };
  auto softmax = [&](Value s, Value j, Value m[2], Value l[2]) {
    Value kv0 = kb.mul(j, kb.idx(kBN));
    Value kvNext = kb.add(kv0, kb.idx(kBN));
    Value colBase = kb.add(kv0, t2);
    auto scores = [&](bool masked) {
      // Column kv0 + 2t + o (o = 8n + c) of row r: the row's band.
      fa::detail::KernelBuilderBase::RowBand band[2];
      if (masked)
        for (int r = 0; r < 2; ++r)
          band[r] = kb.rowBand(rowDiag[r], colBase, nk, d.windowLeft,
                               d.windowRight);
      SmallVector<Value> out[2];
      for (int64_t n = 0; n < kBN / 8; ++n)
        for (int64_t c = 0; c < 2; ++c)
          for (int r = 0; r < 2; ++r) {
            Value v = kb.extract(s, 4 * n + 2 * r + c);
            if (!fast)
              v = arith::MulFOp::create(b, loc, v, scaleC);
            if (masked)
              v = arith::SelectOp::create(b, loc, kb.inBand(band[r], n * 8 + c),
                                          v, ninf);
            out[r].push_back(v);
          }
      SmallVector<Value> flatOut(out[0]);
      flatOut.append(out[1]);
      return flatOut;
    };
    // Masked: the block crossing Nk (TMA zero-filled its tail) and blocks
    // outside [fullBegin, fullEnd). Without a left edge fullBegin = kvBegin,
    // without a right edge fullEnd = kvEnd: those compares are never true.
    Value needMask = kb.cmp(arith::CmpIPredicate::sgt, kvNext, nk);
    if (d.windowLeft >= 0)
      needMask = arith::OrIOp::create(
          b, loc, needMask, kb.cmp(arith::CmpIPredicate::slt, j, fullBegin));
    if (d.windowRight >= 0)
      needMask = arith::OrIOp::create(
          b, loc, needMask, kb.cmp(arith::CmpIPredicate::sge, j, fullEnd));
    auto maskIf = scf::IfOp::create(b, loc, SmallVector<Type>(2 * perRow, f32),
                                    needMask, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&maskIf.getThenRegion().front());
      scf::YieldOp::create(b, loc, scores(true));
      b.setInsertionPointToStart(&maskIf.getElseRegion().front());
      scf::YieldOp::create(b, loc, scores(false));
    }
    Soft o;
    for (int64_t i = 0; i < perRow; ++i) {
      o.p[0].push_back(maskIf.getResult(i));
      o.p[1].push_back(maskIf.getResult(perRow + i));
    }
    for (int r = 0; r < 2; ++r) {
      Value mx;
      if (fast) {
        // Tree of max.f32 (no serial compare/select chain), then scaled.
        SmallVector<Value> lvl(o.p[r]);
        while (lvl.size() > 1) {
          SmallVector<Value> nxt;
          for (size_t i = 0; i + 1 < lvl.size(); i += 2)
            nxt.push_back(LLVM::MaxNumOp::create(b, loc, lvl[i], lvl[i + 1]));
          if (lvl.size() % 2)
            nxt.push_back(lvl.back());
          lvl.swap(nxt);
        }
        mx = lvl[0];
        for (int32_t off : {1, 2}) {
          Value o2 = gpu::ShuffleOp::create(b, loc, mx, off, 32,
                                            gpu::ShuffleMode::XOR)
                         .getShuffleResult();
          mx = LLVM::MaxNumOp::create(b, loc, mx, o2);
        }
        mx = arith::MulFOp::create(b, loc, mx, scaleC);
        o.newM[r] = LLVM::MaxNumOp::create(b, loc, m[r], mx);
      } else {
        mx = o.p[r][0];
        for (size_t i = 1; i < o.p[r].size(); ++i)
          mx = kb.fmax(mx, o.p[r][i]);
        mx = kb.quadReduce(mx, /*isMax=*/true);
        o.newM[r] = kb.fmax(m[r], mx);
      }
      Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          o.newM[r], ninf);
      Value mUse =
          arith::SelectOp::create(b, loc, isInf, kb.f32(0.0), o.newM[r]);
      o.alpha[r] = kb.exp2(arith::SubFOp::create(b, loc, m[r], mUse));
      Value sum = kb.f32(0.0);
      Value negM = arith::NegFOp::create(b, loc, mUse);
      for (int64_t i = 0, e = o.p[r].size(); i < e; ++i) {
        Value &v = o.p[r][i];
        Value x = fast ? LLVM::FMAOp::create(b, loc, v, scaleC, negM).getResult()
                       : arith::SubFOp::create(b, loc, v, mUse).getResult();
        // Every polyEvery-th exponent on the FMA pipes (see exp2PolyEvery).
        bool poly = polyEvery > 0 && i % polyEvery == polyEvery - 1;
        v = poly ? kb.exp2Poly(x) : kb.exp2(x);
        sum = arith::AddFOp::create(b, loc, sum, v);
      }
      o.newL[r] = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, o.alpha[r], l[r]), sum);
    }
    return o;
  };
  // P to shared memory (this warpgroup's [64 x BN] tile, 128-byte swizzle),
  // made visible to the async proxy.
  auto writeP = [&](Soft &o) {
    auto v2f32 = VectorType::get({2}, f32);
    auto v2elt = VectorType::get({2}, elt);
    for (int64_t n = 0; n < kBN / 8; ++n)
      for (int r = 0; r < 2; ++r) {
        Value pair = vector::FromElementsOp::create(
            b, loc, v2f32, ValueRange{o.p[r][2 * n], o.p[r][2 * n + 1]});
        Value h = arith::TruncFOp::create(b, loc, v2elt, pair);
        vector::StoreOp::create(
            b, loc, h, flat, ValueRange{swzIndex(pFlatW, rowInWG[r], n * 8)},
            false, llvm::MaybeAlign(4));
      }
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  };
  auto rescale = [&](Value acc, Value alpha[2]) {
    for (int64_t i = 0; i < D / 2; ++i) {
      int r = (i % 4) / 2;
      acc = kb.insert(
          acc, arith::MulFOp::create(b, loc, kb.extract(acc, i), alpha[r]), i);
    }
    return acc;
  };
  auto releaseBar = [&](int64_t bar, Value stage) {
    auto arrive = [&] {
      nvgpu::MBarrierArriveOp::create(b, loc,
                                      nvgpu::MBarrierTokenType::get(ctx), bars,
                                      kb.add(kb.idx(bar), stage));
    };
    if (warpArrive) // after the warp's wgmma.wait_group: lane 0 for the warp
      kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0)), arrive);
    else
      arrive();
  };
  // The stage's K (splitRelease: once S is done) and V (once P V is done);
  // without splitRelease one barrier, arrived on when P V is done.
  auto releaseK = [&](Value stage) {
    if (splitRelease)
      releaseBar(relKBar, stage);
  };
  auto release = [&](Value stage) {
    if (splitRelease)
      releaseBar(relVBar, stage);
    else
      releaseBar(relKBar, stage);
  };
  // P as the A operand of the register-A wgmma: per 16-key step kc, 4 x b32
  // = (row g, keys 16kc+2t..+1), (row g+8, same), (row g, keys 16kc+8+2t..+1),
  // (row g+8, same), i.e. the S accumulator fragment, converted in pairs.
  auto packP = [&](Soft &o) {
    auto v2f32 = VectorType::get({2}, f32);
    auto v2elt = VectorType::get({2}, elt);
    SmallVector<Value> regs;
    for (int64_t kc = 0; kc < kBN / 16; ++kc)
      for (int64_t h = 0; h < 2; ++h)
        for (int r = 0; r < 2; ++r) {
          int64_t c = 4 * kc + 2 * h;
          Value pair = vector::FromElementsOp::create(
              b, loc, v2f32, ValueRange{o.p[r][c], o.p[r][c + 1]});
          Value hv = arith::TruncFOp::create(b, loc, v2elt, pair);
          regs.push_back(LLVM::BitcastOp::create(b, loc, i32, hv));
        }
    return regs;
  };
  auto issuePVRegs = [&](Value acc, ArrayRef<Value> pRegs, Value kDescS) {
    for (int64_t kc = 0; kc < kBN / 16; ++kc) {
      Value dv = kb.desc(kDescS, vOff + kc * 16 * kSwz * 2, subTileKV);
      acc = kb.wgmmaRegA(acc, pRegs.slice(4 * kc, 4), dv, D);
    }
    return acc;
  };
  auto commitWait = [&](int64_t pending) {
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
  };
  // Ping-pong: warpgroup w waits for its turn (named barrier 3 + w) before
  // issuing its GEMMs and hands the turn over after issuing them.
  Value i32_256 = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(256));
  Value myTurn = arith::IndexCastOp::create(b, loc, i32, kb.add(wgi, kb.idx(3)));
  Value otherTurn = arith::IndexCastOp::create(
      b, loc, i32, kb.add(kb.rem(kb.add(wgi, kb.idx(1)), kWG), kb.idx(3)));
  bool pp = d.pingPong;
  auto turnSync = [&] {
    if (!pp)
      return;
    NVVM::BarrierOp::create(b, loc, Type(), myTurn, i32_256,
                            NVVM::BarrierReductionAttr(), Value());
  };
  auto turnPass = [&](Value j) {
    if (!pp)
      return;
    // The last warpgroup does not hand over after its last block, so that
    // every sync has exactly one matching arrive.
    Value last = kb.cmp(arith::CmpIPredicate::eq, j,
                        arith::SubIOp::create(b, loc, kvEnd, kb.idx(1)));
    Value isLastWG = kb.cmp(arith::CmpIPredicate::eq, wgi, kb.idx(kWG - 1));
    Value skip = arith::AndIOp::create(b, loc, last, isLastWG);
    Value doIt = arith::XOrIOp::create(
        b, loc, skip, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    kb.ifThen(doIt, [&] { NVVM::BarrierArriveOp::create(b, loc, otherTurn, i32_256); });
  };

  SmallVector<Value> init = {kb.f32(negInf), kb.f32(negInf), kb.f32(0.0),
                             kb.f32(0.0), oInit};
  SmallVector<Value> res;
  if (!ov) {
    // One block per step: S, softmax, P V, each GEMM waited at once.
    auto loop = scf::ForOp::create(b, loc, kvBegin, kvEnd, kb.idx(1), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    auto iter = loop.getRegionIterArgs();
    Value m[2] = {iter[0], iter[1]}, l[2] = {iter[2], iter[3]};
    Value acc = iter[4];
    Value it = iterOf(j);
    Value stage = stageOf(it), parity = parityOfIter(it);
    Value kDescS = stageDescOf(stage);
    waitBar(kb.add(kb.idx(1), stage), parity);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    Value s = issueS(kDescS);
    commitWait(0);
    Soft o = softmax(s, j, m, l);
    SmallVector<Value> pRegs;
    if (pr) {
      pRegs = packP(o);
      acc = rescale(acc, o.alpha);
    } else {
      writeP(o);
      acc = rescale(acc, o.alpha); // while the other threads finish writing P
      wgBarrier();
    }
    waitBar(kb.add(kb.idx(1 + S), stage), parity);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    acc = pr ? issuePVRegs(acc, pRegs, kDescS) : issuePV(acc, kDescS);
    commitWait(0);
    if (pr)
      kb.fenceRegs(pRegs);
    if (ws) {
      releaseK(stage);
      release(stage);
    } else {
      // Everyone is done with this stage (and with P): refill it.
      gpu::BarrierOp::create(b, loc);
      Value nextBlock = kb.add(j, kb.idx(S));
      kb.ifThen(arith::AndIOp::create(
                    b, loc, isIssuer,
                    kb.cmp(arith::CmpIPredicate::slt, nextBlock, kvEnd)),
                [&] { issueKV(nextBlock, stage); });
    }
    scf::YieldOp::create(
        b, loc, ValueRange{o.newM[0], o.newM[1], o.newL[0], o.newL[1], acc});
    res.assign(loop.getResults().begin(), loop.getResults().end());
  } else {
    // Software pipelined (FlashAttention-3): step j issues S_j and
    // O += P_{j-1} V_{j-1} together, runs the softmax of S_j while P V is on
    // the tensor cores, and the two consumer warpgroups take turns issuing
    // GEMMs (ping-pong), so one's softmax runs under the other's GEMMs.
    Value any = kb.cmp(arith::CmpIPredicate::sgt, kvEnd, kvBegin);
    if (pp)
      kb.ifThen(arith::AndIOp::create(
                    b, loc, any,
                    kb.cmp(arith::CmpIPredicate::eq, wgi, kb.idx(kWG - 1))),
                [&] {
                  NVVM::BarrierArriveOp::create(b, loc, otherTurn, i32_256);
                });
    auto top = scf::IfOp::create(b, loc, TypeRange(ValueRange(init)), any,
                                 /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g0(b);
      b.setInsertionPointToStart(&top.getElseRegion().front());
      scf::YieldOp::create(b, loc, init);
      b.setInsertionPointToStart(&top.getThenRegion().front());
      // Block kvBegin (iteration 0, stage 0): S and its softmax.
      Value kDesc0, stage0;
      if (persistent) {
        // Iteration kvBase of the running count (any stage).
        stage0 = stageOf(kvBase);
        kDesc0 = stageDescOf(stage0);
        waitBar(kb.add(kb.idx(1), stage0), parityOfIter(kvBase));
      } else {
        stage0 = kb.idx(0);
        kDesc0 = stageDescOf(stage0);
        waitBar(kb.idx(1), parityOfIter(stage0));
      }
      turnSync();
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      Value s0 = issueS(kDesc0);
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      turnPass(kvBegin);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      releaseK(stage0);
      Value m0[2] = {init[0], init[1]}, l0[2] = {init[2], init[3]};
      Soft o0 = softmax(s0, kvBegin, m0, l0);
      // What a step hands to the next: m, l, O and, with P in registers, P_j
      // (then, with rescaleBeforePV, the two alphas of block j) as
      // loop-carried values; otherwise P_j goes to shared memory.
      auto carry = [&](Soft &o, Value acc) {
        SmallVector<Value> out = {o.newM[0], o.newM[1], o.newL[0], o.newL[1],
                                  acc};
        if (pr) {
          out.append(packP(o));
          if (early)
            out.append({o.alpha[0], o.alpha[1]});
        } else {
          writeP(o);
          wgBarrier();
        }
        return out;
      };
      SmallVector<Value> init1 = carry(o0, oInit);
      auto loop =
          scf::ForOp::create(b, loc, blockAt(1), kvEnd, kb.idx(1), init1);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        Value j = loop.getInductionVar();
        auto iter = loop.getRegionIterArgs();
        Value m[2] = {iter[0], iter[1]}, l[2] = {iter[2], iter[3]};
        Value acc = iter[4];
        Value jp = arith::SubIOp::create(b, loc, j, kb.idx(1));
        Value it = iterOf(j), itp = iterOf(jp);
        Value stage = stageOf(it), prevStage = stageOf(itp);
        waitBar(kb.add(kb.idx(1), stage), parityOfIter(it));
        waitBar(kb.add(kb.idx(1 + S), prevStage), parityOfIter(itp));
        turnSync();
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        Value s = issueS(stageDescOf(stage));
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        int64_t nP = pr ? kBN / 4 : 0;
        SmallVector<Value> pPrev(iter.begin() + 5, iter.begin() + 5 + nP);
        if (early) {
          // O *= alpha_{j-1} while S_j is on the tensor cores (FA3's place),
          // instead of after P_{j-1} V_{j-1} completes.
          Value alphaPrev[2] = {iter[5 + nP], iter[6 + nP]};
          acc = rescale(acc, alphaPrev);
          NVVM::WgmmaFenceAlignedOp::create(b, loc);
        }
        acc = pr ? issuePVRegs(acc, pPrev, stageDescOf(prevStage))
                 : issuePV(acc, stageDescOf(prevStage));
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        turnPass(j);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1); // S_j done
        releaseK(stage);
        Soft o = softmax(s, j, m, l);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0); // P_{j-1} V_{j-1} done
        if (pr)
          kb.fenceRegs(pPrev);
        release(prevStage);
        if (!early)
          acc = rescale(acc, o.alpha);
        scf::YieldOp::create(b, loc, carry(o, acc));
      }
      // The last block's P V.
      Value jl = arith::SubIOp::create(b, loc, kvEnd, kb.idx(1));
      Value itl = iterOf(jl);
      Value lastStage = stageOf(itl);
      waitBar(kb.add(kb.idx(1 + S), lastStage), parityOfIter(itl));
      int64_t nP = pr ? kBN / 4 : 0;
      SmallVector<Value> pLast(loop.getResults().begin() + 5,
                               loop.getResults().begin() + 5 + nP);
      Value accIn = loop.getResult(4);
      if (early) {
        Value alphaLast[2] = {loop.getResult(5 + nP), loop.getResult(6 + nP)};
        accIn = rescale(accIn, alphaLast);
      }
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      Value acc = pr ? issuePVRegs(accIn, pLast, stageDescOf(lastStage))
                     : issuePV(accIn, stageDescOf(lastStage));
      commitWait(0);
      if (pr)
        kb.fenceRegs(pLast);
      release(lastStage);
      scf::YieldOp::create(b, loc,
                           ValueRange{loop.getResult(0), loop.getResult(1),
                                      loop.getResult(2), loop.getResult(3),
                                      acc});
    }
    res.assign(top.getResults().begin(), top.getResults().end());
  }
  if (persistent) {
    // The tile's coordinates again for the epilogue, from an opaque copy of
    // the tile index: only the index stays live across the K/V loop, not the
    // values derived from it (ptxas cannot rematerialize them as it does the
    // ones derived from blockIdx).
    decodeTile(kb.opaque(tileIdx));
    tileRange();
    wgRow0 = kb.add(q0, kb.mul(wgi, kb.idx(kRows)));
    for (int r = 0; r < 2; ++r)
      rowQ[r] = kb.add(wgRow0, rowInWG[r]);
  }
  // Deferred normalization; O staged (swizzled) in this warpgroup's Q tile.
  Value acc = res[4];
  Value inv[2], lFinal[2], isZero[2];
  for (int r = 0; r < 2; ++r) {
    lFinal[r] = kb.quadReduce(res[2 + r], /*isMax=*/false);
    isZero[r] = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                      lFinal[r], kb.f32(0.0));
    inv[r] = arith::SelectOp::create(
        b, loc, isZero[r], kb.f32(0.0),
        arith::DivFOp::create(b, loc, kb.f32(1.0), lFinal[r]));
  }
  auto v2f32 = VectorType::get({2}, f32);
  auto v2elt = VectorType::get({2}, elt);
  for (int64_t n = 0; n < D / 8; ++n)
    for (int r = 0; r < 2; ++r) {
      Value a0 = arith::MulFOp::create(b, loc, kb.extract(acc, 4 * n + 2 * r),
                                       inv[r]);
      Value a1 = arith::MulFOp::create(
          b, loc, kb.extract(acc, 4 * n + 2 * r + 1), inv[r]);
      Value pair = vector::FromElementsOp::create(b, loc, v2f32, ValueRange{a0, a1});
      Value h = arith::TruncFOp::create(b, loc, v2elt, pair);
      vector::StoreOp::create(b, loc, h, flat,
                              ValueRange{swzIndex(qFlatW, rowInWG[r], n * 8)},
                              false, llvm::MaybeAlign(4));
    }
  if (d.hasLse) {
    kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, t4, kb.idx(0)), [&] {
      for (int r = 0; r < 2; ++r)
        kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, rowQ[r], nq), [&] {
          Value log2l = LLVM::CallIntrinsicOp::create(
                            b, loc, f32, b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                            ValueRange{lFinal[r]})
                            .getResult(0);
          Value lse = arith::MulFOp::create(
              b, loc, kb.f32(M_LN2),
              arith::AddFOp::create(b, loc, res[r], log2l));
          lse = arith::SelectOp::create(b, loc, isZero[r], kb.f32(negInf), lse);
          memref::StoreOp::create(
              b, loc, lse, lseG,
              ValueRange{kb.add(kb.mul(qPlane, nq), rowQ[r])});
        });
    });
  }
  wgBarrier();
  // 16-byte copies of this warpgroup's 64 x D tile to global memory.
  int64_t chunksPerRow = D / 8;
  auto v8 = VectorType::get({8}, elt);
  Value outPlane = kb.mul(qPlane, nq);
  for (int64_t i = 0; i < kRows * chunksPerRow / 128; ++i) {
    Value c = kb.add(ltid, kb.idx(i * 128));
    Value row = kb.div(c, chunksPerRow), cch = kb.rem(c, chunksPerRow);
    Value sub = kb.div(cch, 8), cc = kb.rem(cch, 8);
    Value phys = arith::XOrIOp::create(b, loc, cc, kb.rem(row, 8));
    Value sIdx = kb.add(kb.add(qFlatW, kb.mul(sub, kb.idx(kRows * kSwz))),
                        kb.add(kb.mul(row, kb.idx(kSwz)), kb.mul(phys, kb.idx(8))));
    Value qRow = kb.add(wgRow0, row);
    kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, qRow, nq), [&] {
      Value v = vector::LoadOp::create(b, loc, v8, flat, ValueRange{sIdx}, false,
                                       llvm::MaybeAlign(16));
      Value gIdx = kb.add(kb.mul(kb.add(outPlane, qRow), kb.idx(D)),
                          kb.mul(cch, kb.idx(8)));
      vector::StoreOp::create(b, loc, v, oG, ValueRange{gIdx}, false,
                              llvm::MaybeAlign(16));
    });
  }
  if (persistent) {
    // This thread is done with the Q tile (O read back): order its generic
    // accesses before the next Q's TMA (async proxy) write, then release it.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    nvgpu::MBarrierArriveOp::create(b, loc, nvgpu::MBarrierTokenType::get(ctx),
                                    bars, kb.idx(qFreeBar));
    scf::YieldOp::create(
        b, loc,
        ValueRange{kb.add(kvBase, arith::SubIOp::create(b, loc, kvEnd, kvBegin)),
                   kb.add(tileN, kb.idx(1))});
  }
  b.setInsertionPointToEnd(&kfn.getBody().front());
  gpu::ReturnOp::create(b, loc);

  // The launch manifest.
  std::string eltName = elt.isF16() ? "f16" : "bf16";
  llvm::json::Array params;
  auto addParam = [&](std::string name, std::string type, std::string meaning) {
    fa::detail::addManifestParam(params, name, type, meaning);
  };
  addParam("q_map", "tensormap",
           "pointer to the CUtensorMap of q (device memory, 64-byte aligned)");
  addParam("k_map", "tensormap", "pointer to the CUtensorMap of k");
  addParam("v_map", "tensormap", "pointer to the CUtensorMap of v");
  fa::detail::addOutputAndSizeParams(params, eltName, d.hasLse);
  llvm::json::Array maps;
  auto addMap = [&](std::string param, std::string tensor, std::string n,
                    std::string h, int64_t rows) {
    maps.push_back(llvm::json::Object{
        {"param", param},
        {"tensor", tensor + " [B, " + h + ", " + n + ", D] contiguous"},
        {"dtype", eltName},
        {"rank", 3},
        {"dims", llvm::json::Array{"D", n, "B*" + h}},
        {"strides_bytes", llvm::json::Array{"D*2", n + "*D*2"}},
        {"box", llvm::json::Array{kSwz, rows, 1}},
        {"element_strides", llvm::json::Array{1, 1, 1}},
        {"interleave", "none"},
        {"swizzle", "128B"},
        {"l2_promotion", "128B"},
        {"oob_fill", "zero"}});
  };
  addMap("q_map", "q", "Nq", "Hq", kRows);
  addMap("k_map", "k", "Nk", "Hkv", kBN);
  addMap("v_map", "v", "Nk", "Hkv", kBN);
  llvm::json::Object manifest{
      {"kernel", d.kernelName},
      {"ptx", d.kernelName + ".ptx"},
      {"chip", "sm_90a"},
      {"dtype", eltName},
      {"head_dim", D},
      {"causal", d.isCausal()},
      {"window", llvm::json::Array{d.windowLeft, d.windowRight}},
      {"scale", d.scale},
      {"lse", d.hasLse},
      {"block_q", kSM90BlockQ},
      {"grid", persistent
                   ? llvm::json::Array{"min(tiles, num_sms)", 1, 1}
                   : llvm::json::Array{"ceil(Nq/" +
                                           std::to_string(kSM90BlockQ) + ")",
                                       "Hq", "B"}},
      {"block", llvm::json::Array{kThreads, 1, 1}},
      {"dynamic_shared_memory_bytes", dynBytes},
      {"static_shared_memory_bytes", 8 * numBars},
      {"tensor_maps", std::move(maps)},
      {"params", std::move(params)}};
  // The schedule keys (SM90/Schedule.def): d's schedule is the normalized
  // one of resolveSM90Schedule, so each is the value the kernel runs.
  appendSM90ScheduleManifest(manifest, d);
  if (persistent)
    manifest["tiles"] =
        "ceil(Nq/" + std::to_string(kSM90BlockQ) + ")*Hq*B";
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)));
  return json;
}

LogicalResult
mlir::fa::buildSM90FlashAttention(const TiledAttention &attn,
                                  const NVGPUKernelOptions &options) {
  Operation *anchor = attn.forall;
  if (attn.blockQ != kSM90BlockQ)
    return anchor->emitOpError("sm_90a kernel needs the tiled form with "
                               "block-q = ")
           << kSM90BlockQ << ", got " << attn.blockQ;
  func::FuncOp func = attn.func;
  SM90AttentionDesc desc;
  desc.kernelName = (func.getSymName() + "_kernel").str();
  desc.moduleName = (func.getSymName() + "_kernels").str();
  desc.elementType = attn.elementType;
  desc.headDim = attn.headDim;
  desc.windowLeft = attn.windowLeft;
  desc.windowRight = attn.windowRight;
  desc.scale = attn.scale;
  desc.hasLse = attn.hasLse;
  // The schedule: measured defaults, options, fa.sm90.* attributes, checked
  // (SM90/Schedule.cpp).
  FailureOr<SM90Schedule> schedule = resolveSM90Schedule(func, attn, options);
  if (failed(schedule))
    return failure();
  static_cast<SM90Schedule &>(desc) = *schedule;
  std::string why = checkSM90AttentionDesc(desc);
  if (!why.empty())
    return anchor->emitOpError(why);

  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder b(func);
  std::string json = buildSM90AttentionKernel(b, anchor->getLoc(), desc);
  module->setAttr("fa.manifest." + desc.moduleName,
                  b.getDictionaryAttr(
                      {b.getNamedAttr("kernel", b.getStringAttr(desc.kernelName)),
                       b.getNamedAttr("json", b.getStringAttr(json))}));
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  func.erase();
  return success();
}
