//===- BackwardRowKernels.cpp - the backward's pre- and postprocess -------===//
//
// Two small kernels in the backward kernel's module: the preprocess kernel
// (delta = rowsum(dO * O), dq_accum = 0) and the postprocess kernel (dq =
// dq_accum in q's dtype). See BackwardRowKernels.h and docs/Backward.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/BackwardRowKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;

namespace {

/// Elements a thread moves at once: 16 bytes of f16 / bf16.
constexpr int64_t kChunk = 8;

/// The parameters' tensor contract, as getBackwardKernelParams writes it.
struct RowParams {
  MLIRContext *ctx;
  const BackwardConfig &cfg;
  std::vector<KernelParam> params;

  void tensor(StringRef name, bool f32, int64_t align, bool rowsOnly,
              const Twine &meaning) {
    using S = SizeSymbol;
    Type elt = f32 ? Float32Type::get(ctx) : cfg.elementType;
    StringRef dtype = f32 ? "f32" : (cfg.elementType.isF16() ? "f16" : "bf16");
    // varlen: the batch-1 planes of the packed sequences (B counts them).
    SmallVector<SizeExpr, 4> shape = {cfg.varlen ? SizeExpr(1) : S::B, S::Hq,
                                      S::Nq};
    if (!rowsOnly)
      shape.push_back(S::D);
    std::string text = meaning.str();
    if (size_t at = text.find("[B, "); cfg.varlen && at != std::string::npos)
      text.replace(at, 4, "[1, ");
    params.push_back(KernelParam::pointer(name,
                                          MemRefType::get({kGlobalExtent}, elt),
                                          dtype, shape, align, text));
  }
};

/// The row kernels' common frame: the CTA's (batch, head) plane and its 64
/// rows, and the launch sizes read from the trailing i32 parameters.
struct RowFrame {
  Value plane;   ///< batch * Hq + head
  Value row0;    ///< the CTA's first row within the plane
  Value rowsEnd; ///< Nq
  Value heads;   ///< Hq
};

/// The frame from the grid [ceil(Nq / 64), Hq, B] and the sizes B, Hq, Hkv,
/// Nq, Nk (the last five arguments).
RowFrame readRowFrame(KernelBuilder &kb, gpu::GPUFuncOp fn) {
  auto a = fn.getArguments();
  size_t sizes = a.size() - 5;
  Value heads = kb.asIndex(a[sizes + 1]);
  Value head = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::z);
  Value block = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  return {kb.add(kb.mul(batch, heads), head),
          kb.mul(block, kb.idx(kRowKernelRows)), kb.asIndex(a[sizes + 3]),
          heads};
}

/// Calls `body` for each 8-element chunk of the CTA's rows this thread
/// moves: D / 32 passes, chunk `pass * 256 + thread` of the CTA's 64 rows of
/// D / 8 chunks, so the D / 8 threads of a row are neighbouring lanes of one
/// warp. `index` is the chunk's first element in the [B, Hq, Nq, D] tensor
/// and `row` its element in [B, Hq, Nq], both of a row clamped to the last
/// one (rows past Nq repeat it, so every lane loads and shuffles); `valid`
/// says whether the row is real, `first` whether the chunk is its first.
/// With `tokenMajor` (a varlen kernel's thd layout, one batch) the do, out
/// and dq tensors are [Nq, Hq, D]: `index` is the chunk's element there (and
/// `planeIndex` its element in the planes [1, Hq, Nq, D] of dq_accum), else
/// both are the same.
void forEachRowChunk(
    KernelBuilder &kb, const RowFrame &frame, int64_t headDim, bool tokenMajor,
    llvm::function_ref<void(Value index, Value planeIndex, Value row,
                            Value valid, Value first)>
        body) {
  int64_t chunksPerRow = headDim / kChunk;
  int64_t passes = kRowKernelRows * chunksPerRow / kRowKernelThreads;
  Value tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  Value lastRow = kb.sub(frame.rowsEnd, kb.idx(1));
  for (int64_t pass = 0; pass < passes; ++pass) {
    Value chunk = kb.add(tid, kb.idx(pass * kRowKernelThreads));
    Value row = kb.add(frame.row0, kb.div(chunk, chunksPerRow));
    Value column = kb.rem(chunk, chunksPerRow);
    Value valid = kb.cmp(arith::CmpIPredicate::ult, row, frame.rowsEnd);
    Value clamped = arith::MinUIOp::create(kb.b, kb.loc, row, lastRow);
    Value flatRow = kb.add(kb.mul(frame.plane, frame.rowsEnd), clamped);
    Value index = kb.add(kb.mul(flatRow, kb.idx(headDim)),
                         kb.mul(column, kb.idx(kChunk)));
    Value first = kb.cmp(arith::CmpIPredicate::eq, column, kb.idx(0));
    Value tokenIndex = index;
    if (tokenMajor)
      tokenIndex =
          kb.add(kb.mul(kb.add(kb.mul(clamped, frame.heads), frame.plane),
                        kb.idx(headDim)),
                 kb.mul(column, kb.idx(kChunk)));
    body(tokenIndex, index, flatRow, valid, first);
  }
}

/// delta = rowsum(do * out) with the products and sums in f32; dq_accum = 0.
void buildPreprocessBody(KernelBuilder &kb, const BackwardConfig &cfg,
                         gpu::GPUFuncOp fn) {
  auto a = fn.getArguments();
  Value dO = a[0], out = a[1], delta = a[2], dqAccum = a[3];
  RowFrame frame = readRowFrame(kb, fn);
  auto v8 = VectorType::get({kChunk}, cfg.elementType);
  auto v8f = VectorType::get({kChunk}, kb.b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      kb.b, kb.loc, DenseElementsAttr::get(v8f, kb.b.getF32FloatAttr(0.0)));
  int64_t chunksPerRow = cfg.headDim / kChunk;
  forEachRowChunk(
      kb, frame, cfg.headDim, cfg.varlenTokenMajor,
      [&](Value index, Value planeIndex, Value row, Value valid, Value first) {
        auto load = [&](Value from) {
          Value v =
              vector::LoadOp::create(kb.b, kb.loc, v8, from, ValueRange{index},
                                     false, llvm::MaybeAlign(16));
          return arith::ExtFOp::create(kb.b, kb.loc, v8f, v);
        };
        Value products =
            arith::MulFOp::create(kb.b, kb.loc, load(dO), load(out));
        Value sum = vector::ReductionOp::create(
            kb.b, kb.loc, vector::CombiningKind::ADD, products);
        // The row's chunks sit in chunksPerRow neighbouring lanes.
        for (int32_t offset = chunksPerRow / 2; offset >= 1; offset /= 2) {
          Value other = gpu::ShuffleOp::create(kb.b, kb.loc, sum, offset, 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
          sum = arith::AddFOp::create(kb.b, kb.loc, sum, other);
        }
        kb.ifThen(valid, [&] {
          vector::StoreOp::create(kb.b, kb.loc, zeros, dqAccum,
                                  ValueRange{planeIndex}, false,
                                  llvm::MaybeAlign(16));
          kb.ifThen(first, [&] {
            memref::StoreOp::create(kb.b, kb.loc, sum, delta, ValueRange{row});
          });
        });
      });
}

/// dq = dq_accum rounded to nearest even in q's dtype.
void buildPostprocessBody(KernelBuilder &kb, const BackwardConfig &cfg,
                          gpu::GPUFuncOp fn) {
  auto a = fn.getArguments();
  Value dqAccum = a[0], dq = a[1];
  RowFrame frame = readRowFrame(kb, fn);
  auto v8 = VectorType::get({kChunk}, cfg.elementType);
  auto v8f = VectorType::get({kChunk}, kb.b.getF32Type());
  forEachRowChunk(
      kb, frame, cfg.headDim, cfg.varlenTokenMajor,
      [&](Value index, Value planeIndex, Value, Value valid, Value) {
        kb.ifThen(valid, [&] {
          Value acc = vector::LoadOp::create(kb.b, kb.loc, v8f, dqAccum,
                                             ValueRange{planeIndex}, false,
                                             llvm::MaybeAlign(16));
          Value rounded = arith::TruncFOp::create(kb.b, kb.loc, v8, acc);
          vector::StoreOp::create(kb.b, kb.loc, rounded, dq, ValueRange{index},
                                  false, llvm::MaybeAlign(16));
        });
      });
}

} // namespace

std::vector<AuxiliaryKernel>
mlir::fa::kernel::buildGradRowKernels(OpBuilder &b, Location loc,
                                      gpu::GPUModuleOp module,
                                      const BackwardConfig &cfg) {
  using S = SizeSymbol;
  OpBuilder::InsertionGuard guard(b);
  MLIRContext *ctx = b.getContext();
  std::string elt = cfg.elementType.isF16() ? "f16" : "bf16";
  SmallVector<SizeExpr, 3> grid = {SizeExpr::ceilDiv(S::Nq, kRowKernelRows),
                                   S::Hq, cfg.varlen ? SizeExpr(1) : S::B};
  std::array<int64_t, 3> block = {kRowKernelThreads, 1, 1};
  KernelBuilder kb{b, loc};

  RowParams pre{ctx, cfg, {}};
  pre.tensor("do", false, 16, false,
             "gradient of the output [B, Hq, Nq, D], contiguous, " + elt);
  pre.tensor("out", false, 16, false,
             "the forward's output [B, Hq, Nq, D], contiguous, " + elt);
  pre.tensor("delta", true, 4, true,
             "[B, Hq, Nq] f32, written: rowsum(do * out) over D");
  pre.tensor("dq_accum", true, 16, false,
             "[B, Hq, Nq, D] f32, written: zeros (the backward kernel adds "
             "dq into it)");
  appendLaunchSizeParams(pre.params, IntegerType::get(ctx, 32));
  if (cfg.varlenTokenMajor)
    tokenMajorGradParams(pre.params);
  std::string preName = cfg.kernelName + "_preprocess";
  gpu::GPUFuncOp preFn = createAuxiliaryKernelFunc(
      b, loc, module, preName, getKernelArgumentTypes(pre.params),
      kRowKernelThreads);
  buildPreprocessBody(kb, cfg, preFn);
  gpu::ReturnOp::create(b, loc);

  RowParams post{ctx, cfg, {}};
  post.tensor("dq_accum", true, 16, false,
              "[B, Hq, Nq, D] f32, as the backward kernel left it");
  post.tensor("dq", false, 16, false,
              "gradient of q [B, Hq, Nq, D], contiguous, " + elt +
                  ", written: dq_accum rounded to nearest even");
  appendLaunchSizeParams(post.params, IntegerType::get(ctx, 32));
  if (cfg.varlenTokenMajor)
    tokenMajorGradParams(post.params);
  std::string postName = cfg.kernelName + "_postprocess";
  gpu::GPUFuncOp postFn = createAuxiliaryKernelFunc(
      b, loc, module, postName, getKernelArgumentTypes(post.params),
      kRowKernelThreads);
  buildPostprocessBody(kb, cfg, postFn);
  gpu::ReturnOp::create(b, loc);

  return {AuxiliaryKernel{"attention_grad_preprocess", preName,
                          std::move(pre.params), grid, block},
          AuxiliaryKernel{"attention_grad_postprocess", postName,
                          std::move(post.params), grid, block}};
}
