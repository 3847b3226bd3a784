//===- SplitKV.cpp - in-kernel split-KV of the sm_90a kernel --------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/SplitKV.h"
#include "fa/Conversion/AttentionToNVGPU/Common/Epilogue.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

static Value divU(KernelBuilder &kb, Value x, Value y) {
  return arith::DivUIOp::create(kb.b, kb.loc, x, y);
}
static Value remU(KernelBuilder &kb, Value x, Value y) {
  return arith::RemUIOp::create(kb.b, kb.loc, x, y);
}
static Value minS(KernelBuilder &kb, Value x, Value y) {
  return arith::MinSIOp::create(kb.b, kb.loc, x, y);
}

KVSplit KVSplit::fromGrid(KernelBuilder &kb, TileCoord &coord, Value count) {
  KVSplit s;
  s.count = count;
  Value z = coord.batch; // blockIdx.z
  s.index = remU(kb, z, count);
  coord.batch = divU(kb, z, count);
  return s;
}

KVSplit KVSplit::again(KernelBuilder &kb, TileCoord &coord, bool longestFirst,
                       Value count) {
  coord.qBlock = opaqueSpecialRegister(kb, "%ctaid.x");
  if (longestFirst)
    coord.qBlock =
        kb.sub(kb.sub(opaqueSpecialRegister(kb, "%nctaid.x"), kb.idx(1)),
               coord.qBlock);
  coord.head = opaqueSpecialRegister(kb, "%ctaid.y");
  coord.batch = opaqueSpecialRegister(kb, "%ctaid.z");
  return fromGrid(kb, coord, count);
}

KVRange KVSplit::narrow(KernelBuilder &kb, KVRange r) const {
  Value n =
      arith::MaxSIOp::create(kb.b, kb.loc, kb.sub(r.end, r.begin), kb.idx(0));
  Value per = divU(kb, kb.add(n, kb.sub(count, kb.idx(1))), count);
  Value begin = minS(kb, kb.add(r.begin, kb.mul(index, per)), r.end);
  r.end = minS(kb, kb.add(begin, per), r.end);
  r.begin = begin;
  r.hasLeftEdge = true; // begin is no longer 0
  return r;
}

/// bar.sync of the consumer warpgroups.
static void syncConsumers(KernelBuilder &kb, const KernelConfig &cfg) {
  NVVM::BarrierOp::create(
      kb.b, kb.loc, Type(), kb.i32c(cfg.namedBarriers().consumersBarrier()),
      kb.i32c(cfg.consumerThreads()), NVVM::BarrierReductionAttr(), Value());
}

/// The chunk's normalized O (f32 pairs from the accumulator fragments) and
/// lse into the workspaces at [split, plane, row]; rows past Nq skipped.
static void storePartials(KernelBuilder &kb, const KernelConfig &cfg,
                          const KernelArgs &args, const ConsumerFrame &frame,
                          const EpilogueRows &rows,
                          const MainloopResult &result,
                          const RowNormalizer row[2], Value firstRow) {
  int64_t D = cfg.headDim;
  Value nq = args.sizes.queryLength;
  auto v2f32 = VectorType::get({2}, kb.b.getF32Type());
  for (int r = 0; r < 2; ++r) {
    kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, rows.rowQ[r], nq), [&] {
      Value rowIdx = kb.add(firstRow, rows.rowQ[r]);
      Value base = kb.add(kb.mul(rowIdx, kb.idx(D)), frame.colPair);
      for (int64_t n = 0; n < D / 8; ++n) {
        Value a0 = arith::MulFOp::create(kb.b, kb.loc,
                                         kb.extract(result.acc, 4 * n + 2 * r),
                                         row[r].inverse);
        Value a1 = arith::MulFOp::create(
            kb.b, kb.loc, kb.extract(result.acc, 4 * n + 2 * r + 1),
            row[r].inverse);
        Value pair = vector::FromElementsOp::create(kb.b, kb.loc, v2f32,
                                                    ValueRange{a0, a1});
        vector::StoreOp::create(kb.b, kb.loc, pair, args.splitO,
                                ValueRange{kb.add(base, kb.idx(8 * n))}, false,
                                llvm::MaybeAlign(8));
      }
      kb.ifThen(
          kb.cmp(arith::CmpIPredicate::eq, frame.thread.quadLane, kb.idx(0)),
          [&] {
            memref::StoreOp::create(kb.b, kb.loc,
                                    rowLogSumExp(kb, result.max[r], row[r]),
                                    args.splitLse, ValueRange{rowIdx});
          });
    });
  }
}

/// The last CTA of the tile: for each of its rows and each 4 columns, the
/// chunks' weights exp(lse_s - M) (M their max, 0 when every chunk is
/// empty), O = sum_s w_s O_s / sum_s w_s into out and M + ln(sum_s w_s) into
/// lse (0 and -inf for a row no chunk saw a key of). 256 threads, a row's
/// columns on adjacent threads (coalesced reads of each chunk's row).
static void combineChunks(KernelBuilder &kb, const KernelConfig &cfg,
                          const KernelArgs &args, const TileState &tile,
                          const KVSplit &split, Value planeRows, Value tid) {
  int64_t D = cfg.headDim, quads = D / 4;
  int64_t threads = cfg.consumerThreads();
  Value nq = args.sizes.queryLength;
  Type f32 = kb.b.getF32Type();
  auto v4f32 = VectorType::get({4}, f32);
  auto v4out = VectorType::get({4}, cfg.outputType());
  Value rowsHere = minS(kb, kb.idx(cfg.blockQ), kb.sub(nq, tile.q0));
  Value chunkRows = kb.mul(planeRows, nq); // rows of one chunk's workspace
  Value log2e = kb.f32(M_LOG2E);
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  // Over the tile's rows only (a decoding tile has a few): a loop of a
  // run-time count, which ptxas does not unroll (unrolled 16 times at d128
  // it spilled).
  auto loop = scf::ForOp::create(
      kb.b, kb.loc, tid, kb.mul(rowsHere, kb.idx(quads)), kb.idx(threads));
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(loop.getBody());
  Value c = loop.getInductionVar();
  Value r = kb.div(c, quads), quad = kb.rem(c, quads);
  {
    Value rowIdx = kb.add(kb.mul(tile.qPlane, nq), kb.add(tile.q0, r));
    auto lseOf = [&](Value s) {
      return memref::LoadOp::create(
          kb.b, kb.loc, args.splitLse,
          ValueRange{kb.add(kb.mul(s, chunkRows), rowIdx)});
    };
    // M = max_s lse_s.
    auto maxLoop = scf::ForOp::create(kb.b, kb.loc, kb.idx(0), split.count,
                                      kb.idx(1), ValueRange{negInf});
    {
      OpBuilder::InsertionGuard g(kb.b);
      kb.b.setInsertionPointToStart(maxLoop.getBody());
      Value m = arith::MaximumFOp::create(kb.b, kb.loc,
                                          maxLoop.getRegionIterArgs()[0],
                                          lseOf(maxLoop.getInductionVar()));
      scf::YieldOp::create(kb.b, kb.loc, m);
    }
    Value m = maxLoop.getResult(0);
    Value safeMax = arith::SelectOp::create(
        kb.b, kb.loc,
        arith::CmpFOp::create(kb.b, kb.loc, arith::CmpFPredicate::OEQ, m,
                              negInf),
        kb.f32(0.0), m);
    Value zero4 = arith::ConstantOp::create(
        kb.b, kb.loc, v4f32,
        DenseElementsAttr::get(v4f32, kb.b.getF32FloatAttr(0.0)));
    auto sumLoop =
        scf::ForOp::create(kb.b, kb.loc, kb.idx(0), split.count, kb.idx(1),
                           ValueRange{kb.f32(0.0), zero4});
    {
      OpBuilder::InsertionGuard g(kb.b);
      kb.b.setInsertionPointToStart(sumLoop.getBody());
      Value s = sumLoop.getInductionVar();
      Value diff = arith::SubFOp::create(kb.b, kb.loc, lseOf(s), safeMax);
      Value w = kb.exp2(arith::MulFOp::create(kb.b, kb.loc, diff, log2e));
      Value l = arith::AddFOp::create(kb.b, kb.loc,
                                      sumLoop.getRegionIterArgs()[0], w);
      Value o = vector::LoadOp::create(
          kb.b, kb.loc, v4f32, args.splitO,
          ValueRange{
              kb.add(kb.mul(kb.add(kb.mul(s, chunkRows), rowIdx), kb.idx(D)),
                     kb.mul(quad, kb.idx(4)))},
          false, llvm::MaybeAlign(16));
      Value wv = vector::BroadcastOp::create(kb.b, kb.loc, v4f32, w);
      Value acc = vector::FMAOp::create(kb.b, kb.loc, wv, o,
                                        sumLoop.getRegionIterArgs()[1]);
      scf::YieldOp::create(kb.b, kb.loc, ValueRange{l, acc});
    }
    Value l = sumLoop.getResult(0), acc = sumLoop.getResult(1);
    Value inverse = reciprocalRowSum(kb.b, kb.loc, l);
    Value o = arith::MulFOp::create(
        kb.b, kb.loc, acc,
        vector::BroadcastOp::create(kb.b, kb.loc, v4f32, inverse));
    Value h = arith::TruncFOp::create(kb.b, kb.loc, v4out, o);
    vector::StoreOp::create(
        kb.b, kb.loc, h, args.out,
        ValueRange{kb.add(kb.mul(rowIdx, kb.idx(D)), kb.mul(quad, kb.idx(4)))},
        false, llvm::MaybeAlign(8));
    if (cfg.desc.hasLse) {
      kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, quad, kb.idx(0)), [&] {
        // ln(sum) as lg2.approx * ln 2; -inf for a row without keys.
        Value lse = arith::AddFOp::create(
            kb.b, kb.loc, safeMax,
            arith::MulFOp::create(kb.b, kb.loc, kb.log2Approx(l),
                                  kb.f32(M_LN2)));
        memref::StoreOp::create(kb.b, kb.loc, lse, args.lse,
                                ValueRange{rowIdx});
      });
    }
  }
}

void mlir::fa::sm90::buildSplitKVEpilogue(
    KernelBuilder &kb, const KernelConfig &cfg, const KernelArgs &args,
    const SharedMemory &smem, const ConsumerFrame &frame,
    const EpilogueRows &rows, const MainloopResult &result,
    const TileState &tile, const KVSplit &split) {
  auto one = scf::IfOp::create(
      kb.b, kb.loc, kb.cmp(arith::CmpIPredicate::eq, split.count, kb.idx(1)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(kb.b);
  kb.b.setInsertionPointToStart(one.thenBlock());
  buildEpilogue(kb, cfg, args, smem, frame, rows, result);
  kb.b.setInsertionPointToStart(one.elseBlock());

  RowNormalizer row[2];
  for (int r = 0; r < 2; ++r)
    row[r] = finalizeRowSum(kb, result.sum[r]);
  // Workspace rows: [split, batch, head, row], B * Hq planes per split.
  Value planeRows = kb.mul(kb.asIndex(args.batchArg), args.sizes.queryHeads);
  Value nq = args.sizes.queryLength;
  Value firstRow = kb.add(kb.mul(kb.mul(split.index, planeRows), nq),
                          kb.mul(rows.qPlane, nq));
  storePartials(kb, cfg, args, frame, rows, result, row, firstRow);
  // Release: this thread's partials before the tile's arrival (membar.gl,
  // the CUDA threadfence-reduction pattern; the atomic is relaxed).
  NVVM::MembarOp::create(kb.b, kb.loc, NVVM::MemScopeKind::GPU);
  syncConsumers(kb, cfg);
  Value tid = frame.thread.tid;
  Value qBlocks = kb.div(kb.add(nq, kb.idx(cfg.blockQ - 1)), cfg.blockQ);
  Value counterIdx = kb.add(kb.mul(tile.qPlane, qBlocks), tile.coord.qBlock);
  // The ticket goes to the others through the Q tile's first word (every
  // consumer is past its last read of Q: the mainloop is done).
  auto wordTy =
      MemRefType::get({1}, kb.b.getI32Type(), MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(kb.b.getContext(),
                                                 gpu::AddressSpace::Workgroup));
  Value ticketWord = smem.view(kb, kb.idx(cfg.smem.qOffset), wordTy);
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0)), [&] {
    Value old = memref::AtomicRMWOp::create(
        kb.b, kb.loc, arith::AtomicRMWKind::addi, kb.i32c(1), args.splitCounter,
        ValueRange{counterIdx});
    memref::StoreOp::create(kb.b, kb.loc, old, ticketWord,
                            ValueRange{kb.idx(0)});
  });
  syncConsumers(kb, cfg);
  Value ticket = kb.asIndex(
      memref::LoadOp::create(kb.b, kb.loc, ticketWord, ValueRange{kb.idx(0)}));
  kb.ifThen(
      kb.cmp(arith::CmpIPredicate::eq, ticket, kb.sub(split.count, kb.idx(1))),
      [&] {
        // Acquire: every chunk's partials are visible after the last
        // arrival.
        NVVM::MembarOp::create(kb.b, kb.loc, NVVM::MemScopeKind::GPU);
        kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0)), [&] {
          memref::StoreOp::create(kb.b, kb.loc, kb.i32c(0), args.splitCounter,
                                  ValueRange{counterIdx});
        });
        combineChunks(kb, cfg, args, tile, split, planeRows,
                      opaqueThreadIdX(kb));
      });
}
