//===- SM80FlashAttention.cpp - the sm_80 FlashAttention-2 kernel ---------===//
//
// Builds, with builders, the sm_80 FlashAttention-2 forward kernel for one
// matched tiled attention (TiledAttention): a gpu.func over (query block,
// head, batch), block-q / 16 warps of 16 query rows, K/V tiles through
// workgroup memory by cp.async, ldmatrix + mma.sync m16n8k16, online softmax
// in registers. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "KernelBuilderBase.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;

/// Static extent of the 1-D memrefs that stand for the kernel's bare pointers
/// (the bare-pointer convention needs static shapes; no access reaches it).
static constexpr int64_t kGlobalExtent = int64_t(1) << 40;

namespace {

/// Emits the kernel body; all tile loops are unrolled in C++.
struct KernelBuilder : fa::detail::KernelBuilderBase {
  Type elt;
  int64_t headDim;
  int64_t blockKV, threads;
  double scaleLog2e;
  Value tid, lane;

  /// max.f32 (FMNMX; -inf is its identity) through llvm.intr.maxnum: one
  /// instruction where compare + select are two.
  Value fmax(Value x, Value y) { return LLVM::MaxNumOp::create(b, loc, x, y); }

  /// Copies rows [rowStart, rowStart + numRows) x [0, D) of the [*, D] matrix
  /// at element offset `base` of `gmem` into rows [smemRow, smemRow + numRows)
  /// of `smem` with 16-byte cp.async; rows at or past `nRows` are zero-filled
  /// and their source clamped to row 0.
  Value loadTile(Value smem, int64_t smemRow, Value gmem, Value base,
                 Value rowStart, Value nRows, int64_t numRows) {
    int64_t chunksPerRow = headDim / 8;
    int64_t iters = numRows * chunksPerRow / threads;
    auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    SmallVector<Value> tokens;
    for (int64_t i = 0; i < iters; ++i) {
      Value c = add(tid, idx(i * threads));
      Value row = div(c, chunksPerRow);
      Value col = mul(rem(c, chunksPerRow), idx(8));
      Value grow = add(rowStart, row);
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          grow, nRows);
      Value srcRow = arith::SelectOp::create(b, loc, valid, grow, idx(0));
      Value src = add(base, add(mul(srcRow, idx(headDim)), col));
      Value n = arith::SelectOp::create(b, loc, valid, idx(8), idx(0));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokTy, smem, ValueRange{add(row, idx(smemRow)), col}, gmem,
          ValueRange{src},
          b.getIndexAttr(8), n, b.getUnitAttr()));
    }
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokTy, tokens);
  }

  /// c += a * b, m16n8k16, f32 accumulators. nvgpu.mma.sync for f16; for
  /// bf16 (which convert-nvgpu-to-nvvm cannot type) nvvm.mma.sync directly,
  /// on the same register fragments.
  Value mma(Value a, Value bFrag, Value c) {
    if (elt.isF16())
      return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                      ArrayRef<int64_t>{16, 8, 16});
    Type i32 = b.getI32Type(), f32 = b.getF32Type();
    auto regs = [&](Value frag, int64_t n) {
      SmallVector<Value> out;
      for (int64_t i = 0; i < n; ++i)
        out.push_back(LLVM::BitcastOp::create(
            b, loc, i32,
            vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i})));
      return out;
    };
    SmallVector<Value> cRegs;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t col = 0; col < 2; ++col)
        cRegs.push_back(
            vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{r, col}));
    auto resTy = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                  {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, loc, resTy, regs(a, 4), regs(bFrag, 2), cRegs,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    Value out = c;
    for (int64_t i = 0; i < 4; ++i)
      out = vector::InsertOp::create(
          b, loc, LLVM::ExtractValueOp::create(b, loc, d, i), out,
          ArrayRef<int64_t>{i / 2, i % 2});
    return out;
  }

  void wait(Value token, int32_t pendingGroups) {
    nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                     b.getI32IntegerAttr(pendingGroups));
  }

  /// Sum or max over the 4 lanes that share an accumulator row.
  Value quadReduce(Value v, bool isMax) {
    for (int32_t off : {1, 2}) {
      Value o = gpu::ShuffleOp::create(b, loc, v, off, 32, gpu::ShuffleMode::XOR)
                    .getShuffleResult();
      v = isMax ? fmax(v, o) : arith::AddFOp::create(b, loc, v, o).getResult();
    }
    return v;
  }

  /// vector<2x2xf32> holding `r0` in row 0 and `r1` in row 1.
  Value rowPair(Value r0, Value r1) {
    auto v2 = VectorType::get({2}, b.getF32Type());
    auto v22 = VectorType::get({2, 2}, b.getF32Type());
    Value full = vector::BroadcastOp::create(b, loc, v22, r0);
    Value half = vector::BroadcastOp::create(b, loc, v2, r1);
    return vector::InsertOp::create(b, loc, half, full, ArrayRef<int64_t>{1});
  }
};

} // namespace

LogicalResult
mlir::fa::buildSM80FlashAttention(const TiledAttention &attn, StringRef chip,
                                  const NVGPUKernelOptions &options) {
  func::FuncOp func = attn.func;
  Operation *at = attn.forall;
  Type elt = attn.elementType;
  if (!elt.isF16() && !elt.isBF16())
    return at->emitOpError("sm_80 kernel needs f16 or bf16 inputs, got ")
           << elt;
  int64_t headDim = attn.headDim;
  if (headDim != 64 && headDim != 128)
    return at->emitOpError("sm_80 kernel supports head dim 64 or 128, got ")
           << headDim;
  int64_t blockQ = attn.blockQ, blockKV = attn.blockKV;
  if ((blockKV != 32 && blockKV != 64) || (blockQ != 64 && blockQ != 128))
    return at->emitOpError("sm_80 kernel needs block-q 64 or 128 and "
                           "block-kv 32 or 64, got block-q ")
           << blockQ << ", block-kv " << blockKV;
  // Each warp owns rowsPerWarp query rows (mTiles m16 tiles: every K and V
  // fragment read from shared memory feeds mTiles mma); at least 4 warps.
  // Default: 32 rows (fewer shared-memory reads per mma) when that still
  // leaves 4 warps, else 16.
  int64_t rowsPerWarp = options.rowsPerWarp ? options.rowsPerWarp
                        : blockQ >= 128     ? 32
                                            : 16;
  if ((rowsPerWarp != 16 && rowsPerWarp != 32) || blockQ / rowsPerWarp < 4)
    return at->emitOpError("sm_80 kernel needs rows-per-warp 16 or 32 with "
                           "at least 4 warps, got rows-per-warp ")
           << rowsPerWarp << " for block-q " << blockQ;
  int64_t mTiles = rowsPerWarp / 16;
  int64_t threads = 32 * (blockQ / rowsPerWarp);
  // With 16 rows per warp the Q fragments live in registers; with 32 they
  // would not fit beside S and the accumulators, so Q stays in shared memory
  // and each Q K^T reads its fragments (FlashAttention-2 does the same).
  bool qInRegs = mTiles == 1;

  MLIRContext *ctx = func.getContext();
  Location loc = at->getLoc();
  auto module = func->getParentOfType<ModuleOp>();
  bool hasLse = attn.hasLse;
  double scale = attn.scale;
  int64_t winLeft = attn.windowLeft, winRight = attn.windowRight;
  std::string modName = (func.getSymName() + "_kernels").str();
  std::string kernelName = (func.getSymName() + "_kernel").str();

  OpBuilder b(func);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto gTy = MemRefType::get({kGlobalExtent}, elt);
  auto lseTy = MemRefType::get({kGlobalExtent}, f32);
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  int64_t rowStride = headDim + 8; // pad 16 bytes: conflict-free ldmatrix
  // One buffer: [Q: block-q rows, unless qInRegs] K: block-kv rows, V:
  // block-kv rows. With qInRegs the Q tile is staged through the K/V rows.
  int64_t kRow = qInRegs ? 0 : blockQ, vRow = kRow + blockKV;
  int64_t smemRows = std::max(vRow + blockKV, blockQ);
  auto smemTy = MemRefType::get({smemRows, rowStride}, elt,
                                MemRefLayoutAttrInterface{}, wg);
  int64_t smemBytes = smemRows * rowStride * 2;
  // Past 48 KiB a block needs dynamic shared memory (and the launcher's
  // opt-in, which the runtime does from the manifest).
  bool dynamicSmem = smemBytes > 48 * 1024;
  SmallVector<Type> inputs = {gTy, gTy, gTy, gTy};
  if (hasLse)
    inputs.push_back(lseTy);
  inputs.append(5, i32);

  auto gpuMod = gpu::GPUModuleOp::create(b, loc, modName);
  b.setInsertionPointToStart(&gpuMod.getBodyRegion().front());
  auto kfn = gpu::GPUFuncOp::create(b, loc, kernelName,
                                    b.getFunctionType(inputs, {}),
                                    dynamicSmem ? TypeRange{}
                                                : TypeRange{smemTy});
  kfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kfn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  Block &entry = kfn.getBody().front();
  b.setInsertionPointToStart(&entry);

  KernelBuilder kb{{b, loc}, elt, headDim, blockKV, threads, scale * M_LOG2E,
                   {}, {}};
  auto args = kfn.getArguments();
  Value qG = args[0], kG = args[1], vG = args[2], oG = args[3];
  Value lseG = hasLse ? args[4] : Value();
  unsigned s0 = hasLse ? 5 : 4;
  auto asIndex = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  Value batch = asIndex(args[s0]);
  (void)batch;
  Value hq = asIndex(args[s0 + 1]), hkv = asIndex(args[s0 + 2]),
        nq = asIndex(args[s0 + 3]), nk = asIndex(args[s0 + 4]);
  Value kvSm;
  if (dynamicSmem) {
    Value raw = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface{}, wg));
    kvSm = memref::ViewOp::create(b, loc, smemTy, raw, arith::ConstantIndexOp::create(b, loc, 0),
                                  ValueRange{});
  } else {
    kvSm = kfn.getWorkgroupAttributions()[0];
  }
  Value kSm = kvSm, vSm = kvSm;

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value qBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value bIdx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  kb.tid = tid;
  Value warp = kb.div(tid, 32);
  Value lane = kb.rem(tid, 32);
  kb.lane = lane;
  Value g = kb.div(lane, 4), t = kb.rem(lane, 4);
  // GQA: query head h reads key/value head h / (Hq / Hkv).
  Value kvHead = arith::DivUIOp::create(
      b, loc, head, arith::DivUIOp::create(b, loc, hq, hkv));
  Value dConst = kb.idx(headDim);
  Value qRowBase = kb.mul(kb.add(kb.mul(bIdx, hq), head), nq); // row index
  Value kRowBase = kb.mul(kb.add(kb.mul(bIdx, hkv), kvHead), nk);
  Value qBase = kb.mul(qRowBase, dConst), kBase = kb.mul(kRowBase, dConst);
  Value q0 = kb.mul(qBlock, kb.idx(blockQ));
  Value warpRow = kb.mul(warp, kb.idx(rowsPerWarp));
  auto aTy = VectorType::get({4, 2}, elt);
  Value aLaneRow = kb.rem(lane, 16);
  Value aCol = kb.mul(kb.div(lane, 16), kb.idx(8));
  // A fragment of query rows [warpRow + 16 mt, +16) x columns [16 kk, +16).
  auto loadQFrag = [&](int64_t mt, int64_t kk) -> Value {
    return nvgpu::LdMatrixOp::create(
        b, loc, aTy, kvSm,
        ValueRange{kb.add(kb.add(warpRow, kb.idx(mt * 16)), aLaneRow),
                   kb.add(aCol, kb.idx(kk * 16))},
        /*transpose=*/false, /*numTiles=*/4);
  };

  // The query tile into rows [0, block-q) of the buffer. With qInRegs it is
  // read into registers once (A fragments, one per 16 columns of D) and its
  // rows are then reused by K and V; else it stays there and each Q K^T
  // reads its fragments.
  Value qTok = kb.loadTile(kvSm, 0, qG, qBase, q0, nq, blockQ);
  kb.wait(qTok, 0);
  gpu::BarrierOp::create(b, loc);
  SmallVector<SmallVector<Value>> qFrag(mTiles);
  if (qInRegs)
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t kk = 0; kk < headDim / 16; ++kk)
        qFrag[mt].push_back(loadQFrag(mt, kk));

  // Key blocks to visit, as the tiled form's fa.kv_block_range computes them
  // (bottom-right diagonal Nk - Nq): [begin, end), of which blocks outside
  // [fullBegin, fullEnd) straddle a window edge and need element masks.
  Value diag = arith::SubIOp::create(b, loc, nk, nq);
  Value qEnd =
      arith::MinSIOp::create(b, loc, kb.add(q0, kb.idx(blockQ)), nq);
  KVBlockRange range = computeKVBlockRange(b, loc, q0, qEnd, nk, diag, blockKV,
                                           winLeft, winRight);
  Value kvStart = kb.mul(range.begin, kb.idx(blockKV));

  // Start streaming K_begin and V_begin (once the Q rows they may overwrite
  // are in registers).
  gpu::BarrierOp::create(b, loc);
  kb.loadTile(kSm, kRow, kG, kBase, kvStart, nk, blockKV);
  kb.loadTile(vSm, vRow, vG, kBase, kvStart, nk, blockKV);

  // Lane addresses for ldmatrix x4 on K (two 8-key n-tiles x two 8-wide k
  // halves) and transposed on V (two 8-key k halves x two 8-wide n-tiles).
  Value kLaneRow = kb.add(kb.mul(kb.div(lane, 16), kb.idx(8)), kb.rem(lane, 8));
  Value kLaneCol = kb.mul(kb.rem(kb.div(lane, 8), 2), kb.idx(8));
  Value vLaneRow = kb.add(kb.mul(kb.rem(kb.div(lane, 8), 2), kb.idx(8)),
                          kb.rem(lane, 8));
  Value vLaneCol = kb.mul(kb.div(lane, 16), kb.idx(8));
  kLaneRow = kb.add(kLaneRow, kb.idx(kRow));
  vLaneRow = kb.add(vLaneRow, kb.idx(vRow));

  double negInf = -std::numeric_limits<double>::infinity();
  auto accTy = VectorType::get({2, 2}, f32);
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, accTy, DenseElementsAttr::get(accTy, b.getF32FloatAttr(0.0)));
  int64_t nOut = headDim / 8;
  // Loop state, per m-tile mt and row half r: max at 2 mt + r, sum at
  // 2 mTiles + 2 mt + r, then the accumulators at 4 mTiles + mt nOut + n.
  SmallVector<Value> init;
  init.append(2 * mTiles, kb.f32(negInf));
  init.append(2 * mTiles, kb.f32(0.0));
  init.append(mTiles * nOut, zeroAcc);
  // Rows of this thread's accumulators: g and g + 8 of each 16-row m-tile.
  SmallVector<std::array<Value, 2>> rows(mTiles), rowDiag(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    Value r0 = kb.add(kb.add(kb.add(q0, warpRow), kb.idx(mt * 16)), g);
    rows[mt] = {r0, kb.add(r0, kb.idx(8))};
    for (int r = 0; r < 2; ++r)
      rowDiag[mt][r] = kb.add(rows[mt][r], diag); // the row's diagonal key
  }

  auto loop = scf::ForOp::create(b, loc, range.begin, range.end, kb.idx(1),
                                 init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    auto iter = loop.getRegionIterArgs();
    SmallVector<std::array<Value, 2>> m(mTiles), l(mTiles);
    SmallVector<SmallVector<Value>> acc(mTiles);
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      for (int r = 0; r < 2; ++r) {
        m[mt][r] = iter[2 * mt + r];
        l[mt][r] = iter[2 * mTiles + 2 * mt + r];
      }
      for (int64_t n = 0; n < nOut; ++n)
        acc[mt].push_back(iter[4 * mTiles + mt * nOut + n]);
    }
    Value kv0 = kb.mul(j, kb.idx(blockKV));
    Value kvNext = kb.add(kv0, kb.idx(blockKV));
    // Pending groups here: K_j, V_j. Wait for K_j only.
    kb.wait(qTok, 1);
    gpu::BarrierOp::create(b, loc);

    // S = Q K^T: per m-tile 16 rows x 64 keys, 8 n-tiles of m16n8; each K
    // fragment feeds every m-tile.
    SmallVector<SmallVector<Value>> s(mTiles,
                                      SmallVector<Value>(blockKV / 8, zeroAcc));
    for (int64_t kk = 0; kk < headDim / 16; ++kk) {
      SmallVector<Value> qk(mTiles);
      for (int64_t mt = 0; mt < mTiles; ++mt)
        qk[mt] = qInRegs ? qFrag[mt][kk] : loadQFrag(mt, kk);
      for (int64_t np = 0; np < blockKV / 16; ++np) {
        Value kf = nvgpu::LdMatrixOp::create(
            b, loc, aTy, kSm,
            ValueRange{kb.add(kLaneRow, kb.idx(np * 16)),
                       kb.add(kLaneCol, kb.idx(kk * 16))},
            false, 4);
        for (int64_t half = 0; half < 2; ++half) {
          Value bf = vector::ExtractStridedSliceOp::create(
              b, loc, kf, ArrayRef<int64_t>{2 * half, 0},
              ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1});
          for (int64_t mt = 0; mt < mTiles; ++mt)
            s[mt][2 * np + half] = kb.mma(qk[mt], bf, s[mt][2 * np + half]);
        }
      }
    }

    // Every warp is done reading K_j: prefetch K_{j+1} under the softmax and
    // P V (past the last block it only zero-fills, keeping the group count).
    gpu::BarrierOp::create(b, loc);
    Value kNextTok = kb.loadTile(kSm, kRow, kG, kBase, kvNext, nk, blockKV);

    // Scale into log2 units; mask the Nk tail and the window edges only on
    // blocks that need it (scf.if), then row max.
    Value ninf = kb.f32(negInf), scaleC = kb.f32(kb.scaleLog2e);
    bool fmaSoftmax = kb.scaleLog2e > 0;
    Value colBase = kb.add(kv0, kb.mul(t, kb.idx(2)));
    int64_t perRow = 2 * blockKV / 8;
    auto scores = [&](bool masked) {
      SmallVector<Value> flat;
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        // Column kv0 + 2t + o (o = n*8 + c) of row r: the row's band.
        fa::detail::KernelBuilderBase::RowBand band[2];
        if (masked)
          for (int r = 0; r < 2; ++r)
            band[r] = kb.rowBand(rowDiag[mt][r], colBase, nk, winLeft,
                                 winRight);
        SmallVector<Value> out[2];
        for (int64_t n = 0; n < blockKV / 8; ++n)
          for (int64_t c = 0; c < 2; ++c)
            for (int r = 0; r < 2; ++r) {
              Value v = vector::ExtractOp::create(b, loc, s[mt][n],
                                                  ArrayRef<int64_t>{r, c});
              // With a positive scale the max commutes with it: scores stay
              // raw and exp2(s * scale - max) is one FFMA + MUFU below.
              if (!fmaSoftmax)
                v = arith::MulFOp::create(b, loc, v, scaleC);
              if (masked)
                v = arith::SelectOp::create(b, loc, kb.inBand(band[r], n * 8 + c),
                                            v, ninf);
              out[r].push_back(v);
            }
        flat.append(out[0]);
        flat.append(out[1]);
      }
      return flat;
    };
    // The tiled form's masked loops are [begin, fullBegin) and [fullEnd,
    // end); a short last block (the tiled form slices it) is masked here.
    Value needMask = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sgt, kvNext, nk);
    if (attn.hasWindow()) {
      Value edge = arith::OrIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j,
                                range.fullBegin),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j,
                                range.fullEnd));
      needMask = arith::OrIOp::create(b, loc, needMask, edge);
    }
    auto maskIf = scf::IfOp::create(
        b, loc, SmallVector<Type>(mTiles * 2 * perRow, f32), needMask,
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&maskIf.getThenRegion().front());
      scf::YieldOp::create(b, loc, scores(true));
      b.setInsertionPointToStart(&maskIf.getElseRegion().front());
      scf::YieldOp::create(b, loc, scores(false));
    }

    auto v2f32 = VectorType::get({2}, f32);
    auto v2elt = VectorType::get({2}, elt);
    Value zeroA = arith::ConstantOp::create(
        b, loc, aTy, DenseElementsAttr::get(aTy, b.getZeroAttr(elt)));
    SmallVector<std::array<Value, 2>> newM(mTiles), newL(mTiles);
    SmallVector<SmallVector<Value>> pFrag(mTiles);
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      SmallVector<Value> p[2];
      for (int64_t i = 0; i < perRow; ++i) {
        p[0].push_back(maskIf.getResult(mt * 2 * perRow + i));
        p[1].push_back(maskIf.getResult(mt * 2 * perRow + perRow + i));
      }
      Value alpha[2];
      for (int r = 0; r < 2; ++r) {
        Value mx = p[r][0];
        for (size_t i = 1; i < p[r].size(); ++i)
          mx = kb.fmax(mx, p[r][i]);
        mx = kb.quadReduce(mx, /*isMax=*/true);
        if (fmaSoftmax)
          mx = arith::MulFOp::create(b, loc, mx, scaleC);
        newM[mt][r] = kb.fmax(m[mt][r], mx);
        // A row with no visible key so far keeps max = -inf: subtract 0
        // instead so that exp2 gives 0, never NaN.
        Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            newM[mt][r], ninf);
        Value mUse =
            arith::SelectOp::create(b, loc, isInf, kb.f32(0.0), newM[mt][r]);
        alpha[r] = kb.exp2(arith::SubFOp::create(b, loc, m[mt][r], mUse));
        Value sum = kb.f32(0.0);
        for (Value &v : p[r]) {
          if (fmaSoftmax)
            v = kb.exp2(LLVM::FMAOp::create(
                b, loc, v, scaleC, arith::NegFOp::create(b, loc, mUse)));
          else
            v = kb.exp2(arith::SubFOp::create(b, loc, v, mUse));
          sum = arith::AddFOp::create(b, loc, sum, v);
        }
        // Per-lane partial sums; reduced across the quad after the loop.
        newL[mt][r] = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, alpha[r], l[mt][r]), sum);
      }
      Value alphaVec = kb.rowPair(alpha[0], alpha[1]);
      for (Value &a : acc[mt])
        a = arith::MulFOp::create(b, loc, a, alphaVec);

      // P as the A operand of P V, straight from the S fragments: for key
      // chunk kc (16 keys), a0/a1 = rows g/g+8 of n-tile 2kc, a2/a3 of n-tile
      // 2kc+1.
      for (int64_t kc = 0; kc < blockKV / 16; ++kc) {
        Value a = zeroA;
        for (int64_t i = 0; i < 4; ++i) {
          int64_t n = 2 * kc + i / 2, r = i % 2;
          Value pair = vector::FromElementsOp::create(
              b, loc, v2f32, ValueRange{p[r][2 * n], p[r][2 * n + 1]});
          Value h = arith::TruncFOp::create(b, loc, v2elt, pair);
          a = vector::InsertOp::create(b, loc, h, a, ArrayRef<int64_t>{i});
        }
        pFrag[mt].push_back(a);
      }
    }

    // Pending: V_j, K_{j+1}. Wait for V_j.
    kb.wait(kNextTok, 1);
    gpu::BarrierOp::create(b, loc);
    for (int64_t kc = 0; kc < blockKV / 16; ++kc)
      for (int64_t np = 0; np < headDim / 16; ++np) {
        Value vf = nvgpu::LdMatrixOp::create(
            b, loc, aTy, vSm,
            ValueRange{kb.add(vLaneRow, kb.idx(kc * 16)),
                       kb.add(vLaneCol, kb.idx(np * 16))},
            /*transpose=*/true, 4);
        for (int64_t half = 0; half < 2; ++half) {
          Value bf = vector::ExtractStridedSliceOp::create(
              b, loc, vf, ArrayRef<int64_t>{2 * half, 0},
              ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1});
          for (int64_t mt = 0; mt < mTiles; ++mt)
            acc[mt][2 * np + half] =
                kb.mma(pFrag[mt][kc], bf, acc[mt][2 * np + half]);
        }
      }
    // Every warp is done reading V_j: prefetch V_{j+1} under the next Q K^T.
    gpu::BarrierOp::create(b, loc);
    kb.loadTile(vSm, vRow, vG, kBase, kvNext, nk, blockKV);
    SmallVector<Value> yields;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      yields.append({newM[mt][0], newM[mt][1]});
    for (int64_t mt = 0; mt < mTiles; ++mt)
      yields.append({newL[mt][0], newL[mt][1]});
    for (int64_t mt = 0; mt < mTiles; ++mt)
      yields.append(acc[mt].begin(), acc[mt].end());
    scf::YieldOp::create(b, loc, yields);
  }

  // Drain the prefetches of the step past the last one.
  kb.wait(qTok, 0);
  // Deferred normalization and the store of this thread's rows.
  auto res = loop.getResults();
  auto v2elt = VectorType::get({2}, elt);
  Value colOut = kb.mul(t, kb.idx(2));
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int r = 0; r < 2; ++r) {
      Value mFinal = res[2 * mt + r];
      Value lFinal =
          kb.quadReduce(res[2 * mTiles + 2 * mt + r], /*isMax=*/false);
      Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           lFinal, kb.f32(0.0));
      Value inv = arith::SelectOp::create(
          b, loc, isZero, kb.f32(0.0),
          arith::DivFOp::create(b, loc, kb.f32(1.0), lFinal));
      Value inRows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           rows[mt][r], nq);
      auto ifOp = scf::IfOp::create(b, loc, inRows, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value rowOff = kb.mul(kb.add(qRowBase, rows[mt][r]), dConst);
      for (int64_t n = 0; n < nOut; ++n) {
        Value pair = vector::ExtractOp::create(
            b, loc, res[4 * mTiles + mt * nOut + n], ArrayRef<int64_t>{r});
        Value invVec = vector::BroadcastOp::create(
            b, loc, VectorType::get({2}, f32), inv);
        pair = arith::MulFOp::create(b, loc, pair, invVec);
        Value h = arith::TruncFOp::create(b, loc, v2elt, pair);
        vector::StoreOp::create(
            b, loc, h, oG,
            ValueRange{kb.add(rowOff, kb.add(colOut, kb.idx(n * 8)))});
      }
      if (hasLse) {
        Value lead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                           kb.idx(0));
        auto lseIf = scf::IfOp::create(b, loc, lead, false);
        OpBuilder::InsertionGuard guard2(b);
        b.setInsertionPointToStart(&lseIf.getThenRegion().front());
        // lse = ln(2) * (max + log2(sum)), -inf for a row with no visible key.
        Value log2l = LLVM::CallIntrinsicOp::create(
                          b, loc, f32, b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                          ValueRange{lFinal})
                          .getResult(0);
        Value lse = arith::MulFOp::create(
            b, loc, kb.f32(M_LN2),
            arith::AddFOp::create(b, loc, mFinal, log2l));
        lse = arith::SelectOp::create(b, loc, isZero, kb.f32(negInf), lse);
        memref::StoreOp::create(b, loc, lse, lseG,
                                ValueRange{kb.add(qRowBase, rows[mt][r])});
      }
    }
  gpu::ReturnOp::create(b, loc);

  // The launch manifest, for code without MLIR.
  using Sym = fa::SizeSymbol;
  fa::LaunchManifest manifest;
  manifest.kernel = kernelName;
  manifest.chip = chip.str();
  manifest.dtype = elt.isF16() ? "f16" : "bf16";
  manifest.headDim = headDim;
  manifest.causal = attn.isCausal();
  manifest.windowLeft = winLeft;
  manifest.windowRight = winRight;
  manifest.scale = scale;
  manifest.lse = hasLse;
  manifest.blockQ = blockQ;
  manifest.blockKV = blockKV;
  manifest.params = fa::getAttentionKernelParams(
      {gTy, gTy, lseTy, i32}, manifest.dtype, /*tensorMaps=*/false, hasLse);
  manifest.grid = {fa::SizeExpr::ceilDiv(Sym::Nq, blockQ), Sym::Hq, Sym::B};
  manifest.block = {threads, 1, 1};
  // The lowering declares the dynamic buffer as a 1-byte .shared symbol (in
  // the static window); 128 bytes of slack keep every access inside the
  // block's allocation.
  manifest.dynamicSharedMemoryBytes = dynamicSmem ? smemBytes + 128 : 0;
  manifest.staticSharedMemoryBytes = dynamicSmem ? 0 : smemBytes;
  manifest.schedule = {{"rows_per_warp", rowsPerWarp}};
  if (failed(manifest.verify(kfn)))
    return failure();
  fa::attachLaunchManifest(module, modName, kernelName,
                           manifest.toJSONString());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  func.erase();
  return success();
}

