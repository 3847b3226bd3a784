//===- FP8Quantize.cpp - the fp8 kernel's quantization kernels ------------===//
//
// Per 128-row block of one (batch, head): delta = max(max|x| / 448, 2^-126),
// x8 = e4m3(x / delta) rounded to nearest even and saturated, exactly as
// fa-quantize-fp8 and bench_fp8.quantize state it (the division in f32, not
// a multiply by the reciprocal, so the bytes are the reference's). See
// FP8Quantize.h and docs/FP8.md.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/FP8Quantize.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"
#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

namespace {

/// Elements a thread moves at once: 16 bytes of f16 / bf16, 8 of e4m3.
constexpr int64_t kChunk = 8;
/// Bytes per row of V's transposed block in shared memory: 128 keys and 4
/// bytes of padding, so that the lanes' byte stores to rows d, d + 1, ...
/// fall in different banks.
constexpr int64_t kTransposePitch = kQuantizeRows + 4;
constexpr double kE4M3Max = 448.0;

/// The place of key r (0..31) in its group of V^T: c with kFP8VKeyOrder[c]
/// = r. The order takes key 8a + 2t + b of each 16 to place 4t + 2a + b.
constexpr int64_t placeOfKey(int64_t r) {
  return (r & 16) | (((r >> 1) & 3) << 2) | (((r >> 3) & 1) << 1) | (r & 1);
}
constexpr bool placesInvertOrder() {
  for (int64_t c = 0; c < kFP8VKeyGroup; ++c)
    if (placeOfKey(kFP8VKeyOrder[c]) != c)
      return false;
  return true;
}
static_assert(placesInvertOrder(), "placeOfKey inverts kFP8VKeyOrder");

/// placeOfKey on an index value.
Value placeOfKey(KernelBuilder &kb, Value r) {
  auto bits = [&](int64_t shift, int64_t mask, int64_t to) {
    Value v = shift ? arith::ShRUIOp::create(kb.b, kb.loc, r, kb.idx(shift))
                          .getResult()
                    : r;
    v = arith::AndIOp::create(kb.b, kb.loc, v, kb.idx(mask));
    return to ? arith::ShLIOp::create(kb.b, kb.loc, v, kb.idx(to)).getResult()
              : v;
  };
  Value c = arith::OrIOp::create(kb.b, kb.loc, bits(0, 16, 0), bits(1, 3, 2));
  c = arith::OrIOp::create(kb.b, kb.loc, c, bits(3, 1, 1));
  return arith::OrIOp::create(kb.b, kb.loc, c, bits(0, 1, 0));
}

/// Which tensor a kernel quantizes.
enum class Operand { Q, K, V };

StringRef nameOf(Operand o) {
  return o == Operand::Q ? "q" : o == Operand::K ? "k" : "v";
}

/// The CTA's block: its (batch, head) plane, first row, the rows of the
/// plane, and the plane's block count.
struct BlockFrame {
  Value plane, row0, rows, blocks, block;
};

BlockFrame readBlockFrame(KernelBuilder &kb, gpu::GPUFuncOp fn, Operand o) {
  // The trailing sizes B, Hq, Hkv, Nq, Nk (the workgroup attributions follow
  // the arguments among the block's arguments).
  auto a = fn.getArguments();
  size_t sizes = fn.getFunctionType().getNumInputs() - 5;
  Value heads = kb.asIndex(a[sizes + (o == Operand::Q ? 1 : 2)]);
  Value rows = kb.asIndex(a[sizes + (o == Operand::Q ? 3 : 4)]);
  Value head = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::z);
  Value block = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  BlockFrame f;
  f.plane = kb.add(kb.mul(batch, heads), head);
  f.row0 = kb.mul(block, kb.idx(kQuantizeRows));
  f.rows = rows;
  f.blocks = kb.div(kb.add(rows, kb.idx(kQuantizeRows - 1)), kQuantizeRows);
  f.block = block;
  return f;
}

/// One 8-element chunk of the block: `pass * 256 + thread` of its 128 rows
/// of D / 8 chunks. `row` is within the block; loads use the row clamped to
/// the plane's last (rows past N repeat a row of the same block, so the
/// block's max is unchanged).
struct Chunk {
  Value row, column, valid, index;
};

SmallVector<Chunk> chunksOf(KernelBuilder &kb, const BlockFrame &f,
                            int64_t headDim) {
  int64_t perRow = headDim / kChunk;
  int64_t passes = kQuantizeRows * perRow / kQuantizeThreads;
  Value tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  Value lastRow = kb.sub(f.rows, kb.idx(1));
  SmallVector<Chunk> chunks;
  for (int64_t pass = 0; pass < passes; ++pass) {
    Chunk c;
    Value chunk = kb.add(tid, kb.idx(pass * kQuantizeThreads));
    c.row = kb.div(chunk, perRow);
    c.column = kb.rem(chunk, perRow);
    Value row = kb.add(f.row0, c.row);
    c.valid = kb.cmp(arith::CmpIPredicate::ult, row, f.rows);
    Value clamped = arith::MinUIOp::create(kb.b, kb.loc, row, lastRow);
    Value flatRow = kb.add(kb.mul(f.plane, f.rows), clamped);
    c.index = kb.add(kb.mul(flatRow, kb.idx(headDim)),
                     kb.mul(c.column, kb.idx(kChunk)));
    chunks.push_back(c);
  }
  return chunks;
}

/// max over the CTA of the threads' `v` (>= 0): shuffles within each warp,
/// then the 8 warps' maxima through shared memory.
Value blockMax(KernelBuilder &kb, Value v, Value scratch) {
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(kb.b, kb.loc, v, offset, 32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    v = kb.maxNum(v, other);
  }
  Value tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  Value lane = kb.rem(tid, 32);
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, lane, kb.idx(0)), [&] {
    memref::StoreOp::create(kb.b, kb.loc, v, scratch,
                            ValueRange{kb.div(tid, 32)});
  });
  gpu::BarrierOp::create(kb.b, kb.loc);
  Value m = memref::LoadOp::create(kb.b, kb.loc, scratch,
                                   ValueRange{kb.idx(0)});
  for (int64_t w = 1; w < kQuantizeThreads / 32; ++w)
    m = kb.maxNum(m, memref::LoadOp::create(kb.b, kb.loc, scratch,
                                            ValueRange{kb.idx(w)}));
  return m;
}

/// Eight f32 as eight e4m3 bytes, x0 lowest: cvt.rn.satfinite rounds to
/// nearest even and saturates to +-448 (what a clamp and then a cast do).
Value packE4M3(KernelBuilder &kb, ArrayRef<Value> x) {
  const char *ptx = "{\n.reg .b16 lo, hi;\n"
                    "cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1;\n"
                    "cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3;\n"
                    "mov.b32 $0, {lo, hi};\n}";
  Type i32 = kb.b.getI32Type();
  Value lo = emitInlinePTX(kb, i32, x.take_front(4), ptx, "=r,f,f,f,f",
                           /*pure=*/true);
  Value hi = emitInlinePTX(kb, i32, x.drop_front(4), ptx, "=r,f,f,f,f",
                           /*pure=*/true);
  auto v2 = VectorType::get({2}, i32);
  Value pair = vector::FromElementsOp::create(kb.b, kb.loc, v2,
                                              ValueRange{lo, hi});
  return vector::BitCastOp::create(
      kb.b, kb.loc, VectorType::get({kChunk}, kb.b.getI8Type()), pair);
}

/// A global-memory tensor parameter: a bare pointer to `elt`s.
struct PointerParams {
  std::vector<KernelParam> params;

  void add(StringRef name, Type elt, StringRef dtype,
           ArrayRef<SizeExpr> shape, int64_t align, const Twine &meaning) {
    params.push_back(KernelParam::pointer(
        name, MemRefType::get({kGlobalExtent}, elt), dtype, shape, align,
        meaning));
  }
};

/// The quantization body: one block's delta, then its e4m3 bytes, stored
/// as rows (q, k) or transposed into V^T's order (v).
void buildQuantizeBody(KernelBuilder &kb, const sm90::FP8QuantizeConfig &cfg,
                       gpu::GPUFuncOp fn, Operand o, Value scratch,
                       Value tile) {
  auto a = fn.getArguments();
  Value src = a[0], dst = a[1], descale = a[2];
  BlockFrame f = readBlockFrame(kb, fn, o);
  SmallVector<Chunk> chunks = chunksOf(kb, f, cfg.headDim);
  auto vSrc = VectorType::get({kChunk}, cfg.sourceType);
  auto vF32 = VectorType::get({kChunk}, kb.b.getF32Type());
  auto load = [&](const Chunk &c) -> Value {
    Value x = vector::LoadOp::create(kb.b, kb.loc, vSrc, src,
                                     ValueRange{c.index}, false,
                                     llvm::MaybeAlign(16));
    return arith::ExtFOp::create(kb.b, kb.loc, vF32, x);
  };
  // At D = 64 the block's chunks stay in registers between the max and the
  // conversion; from D = 128 the conversion loads them again (from L2: the
  // CTA read them just before), which takes fewer registers and runs more
  // CTAs per SM: measured 1.05x at D = 128 (111 -> 64 registers), 1.24x at
  // D = 256 (198 -> 124; bench/results/fp8_h200_2026-12-03_s22/run5).
  bool keep = cfg.headDim <= 64;
  SmallVector<Value> values;
  Value amax = kb.f32(0.0);
  for (const Chunk &c : chunks) {
    Value xf = load(c);
    if (keep)
      values.push_back(xf);
    // |x| as max(x, -x) (gpu-to-nvvm leaves no fabs intrinsic).
    for (int64_t e = 0; e < kChunk; ++e) {
      Value x =
          vector::ExtractOp::create(kb.b, kb.loc, xf, ArrayRef<int64_t>{e});
      amax = kb.maxNum(
          amax, kb.maxNum(x, arith::NegFOp::create(kb.b, kb.loc, x)));
    }
  }
  amax = blockMax(kb, amax, scratch);
  Value delta = kb.maxNum(
      arith::DivFOp::create(kb.b, kb.loc, amax, kb.f32(kE4M3Max)),
      kb.f32(std::ldexp(1.0, -126)));
  Value tid = gpu::ThreadIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
  kb.ifThen(kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0)), [&] {
    Value at = kb.add(kb.mul(f.plane, f.blocks), f.block);
    memref::StoreOp::create(kb.b, kb.loc, delta, descale, ValueRange{at});
  });
  Value deltas = vector::BroadcastOp::create(kb.b, kb.loc, vF32, delta);
  Type i8 = kb.b.getI8Type();
  for (size_t n = 0; n < chunks.size(); ++n) {
    const Chunk &c = chunks[n];
    Value xf = keep ? values[n] : load(c);
    Value scaled = arith::DivFOp::create(kb.b, kb.loc, xf, deltas);
    SmallVector<Value> x;
    for (int64_t i = 0; i < kChunk; ++i)
      x.push_back(vector::ExtractOp::create(kb.b, kb.loc, scaled,
                                            ArrayRef<int64_t>{i}));
    Value bytes = packE4M3(kb, x);
    if (o != Operand::V) {
      kb.ifThen(c.valid, [&] {
        vector::StoreOp::create(kb.b, kb.loc, bytes, dst, ValueRange{c.index},
                                false, llvm::MaybeAlign(8));
      });
      continue;
    }
    // V: byte i (dimension 8 * column + i) of key `row` goes to row
    // 8 * column + i of the transposed block, at the key's place in its
    // group's order; keys past Nk are zeros (V^T's padding).
    Value zeros = arith::ConstantOp::create(
        kb.b, kb.loc,
        DenseElementsAttr::get(VectorType::get({kChunk}, i8),
                               kb.b.getI8IntegerAttr(0)));
    bytes = arith::SelectOp::create(kb.b, kb.loc, c.valid, bytes, zeros);
    Value place = placeOfKey(kb, kb.rem(c.row, kFP8VKeyGroup));
    Value column = kb.add(
        kb.mul(kb.div(c.row, kFP8VKeyGroup), kb.idx(kFP8VKeyGroup)), place);
    for (int64_t i = 0; i < kChunk; ++i) {
      Value d = kb.add(kb.mul(c.column, kb.idx(kChunk)), kb.idx(i));
      Value at = kb.add(kb.mul(d, kb.idx(kTransposePitch)), column);
      memref::StoreOp::create(
          kb.b, kb.loc,
          vector::ExtractOp::create(kb.b, kb.loc, bytes, ArrayRef<int64_t>{i}),
          tile, ValueRange{at});
    }
  }
  if (o != Operand::V)
    return;
  // V^T's rows: D rows of the block's 128 keys, 4 bytes a thread and pass,
  // up to the padded key count ceil(Nk / 32) * 32.
  gpu::BarrierOp::create(kb.b, kb.loc);
  Value keys = kb.mul(
      kb.div(kb.add(f.rows, kb.idx(kFP8VKeyGroup - 1)), kFP8VKeyGroup),
      kb.idx(kFP8VKeyGroup));
  auto v4 = VectorType::get({4}, i8);
  int64_t words = cfg.headDim * kQuantizeRows / 4;
  for (int64_t pass = 0; pass < words / kQuantizeThreads; ++pass) {
    Value w = kb.add(tid, kb.idx(pass * kQuantizeThreads));
    Value d = kb.div(w, kQuantizeRows / 4);
    Value key = kb.mul(kb.rem(w, kQuantizeRows / 4), kb.idx(4));
    Value word = vector::LoadOp::create(
        kb.b, kb.loc, v4, tile,
        ValueRange{kb.add(kb.mul(d, kb.idx(kTransposePitch)), key)}, false,
        llvm::MaybeAlign(4));
    Value globalKey = kb.add(f.row0, key);
    kb.ifThen(kb.cmp(arith::CmpIPredicate::ult, globalKey, keys), [&] {
      Value rowOfVt = kb.add(kb.mul(f.plane, kb.idx(cfg.headDim)), d);
      Value at = kb.add(kb.mul(rowOfVt, keys), globalKey);
      vector::StoreOp::create(kb.b, kb.loc, word, dst, ValueRange{at}, false,
                              llvm::MaybeAlign(4));
    });
  }
}

} // namespace

std::vector<AuxiliaryKernel>
mlir::fa::sm90::buildFP8QuantizeKernels(OpBuilder &b, Location loc,
                                        gpu::GPUModuleOp module,
                                        const FP8QuantizeConfig &cfg) {
  using S = SizeSymbol;
  OpBuilder::InsertionGuard guard(b);
  MLIRContext *ctx = b.getContext();
  KernelBuilder kb{b, loc};
  std::string src = cfg.sourceType.isF16() ? "f16" : "bf16";
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  std::vector<AuxiliaryKernel> kernels;
  for (Operand o : {Operand::Q, Operand::K, Operand::V}) {
    std::string x = nameOf(o).str();
    S heads = o == Operand::Q ? S::Hq : S::Hkv;
    S rows = o == Operand::Q ? S::Nq : S::Nk;
    std::string shape = "[B, " + getSizeSymbolName(heads).str() + ", " +
                        getSizeSymbolName(rows).str() + ", D]";
    std::string blocks = "[B, " + getSizeSymbolName(heads).str() + ", ceil(" +
                         getSizeSymbolName(rows).str() + " / 128)]";
    PointerParams p;
    p.add(x, cfg.sourceType, src, {S::B, heads, rows, S::D}, 16,
          x + " " + shape + ", contiguous, " + src);
    if (o == Operand::V)
      p.add("v_t", b.getI8Type(), "f8e4m3",
            {S::B, S::Hkv, S::D,
             SizeExpr::mul({SizeExpr::ceilDiv(S::Nk, kFP8VKeyGroup),
                            kFP8VKeyGroup})},
            4,
            "v_t [B, Hkv, D, ceil(Nk / 32) * 32] e4m3, written: v / "
            "v_descale transposed, keys of each 32-key group in v_key_order, "
            "zero padded");
    else
      p.add(x + "8", b.getI8Type(), "f8e4m3", {S::B, heads, rows, S::D}, 8,
            x + "8 " + shape + " e4m3, written: " + x + " / " + x +
                "_descale, rounded to nearest even, saturated to 448");
    p.add(x + "_descale", b.getF32Type(), "f32",
          {S::B, heads, SizeExpr::ceilDiv(rows, kQuantizeRows)}, 4,
          x + "_descale " + blocks +
              " f32, written: max(max |" + x +
              "| of the block / 448, 2^-126)");
    appendLaunchSizeParams(p.params, IntegerType::get(ctx, 32));

    std::string name = cfg.kernelName + "_quantize_" + x;
    gpu::GPUFuncOp fn = createAuxiliaryKernelFunc(
        b, loc, module, name, getKernelArgumentTypes(p.params),
        kQuantizeThreads);
    Value scratch = fn.addWorkgroupAttribution(
        MemRefType::get({kQuantizeThreads / 32}, b.getF32Type(),
                        MemRefLayoutAttrInterface{}, wg),
        loc);
    Value tile;
    if (o == Operand::V)
      tile = fn.addWorkgroupAttribution(
          MemRefType::get({cfg.headDim * kTransposePitch}, b.getI8Type(),
                          MemRefLayoutAttrInterface{}, wg),
          loc);
    buildQuantizeBody(kb, cfg, fn, o, scratch, tile);
    gpu::ReturnOp::create(b, loc);
    kernels.push_back(AuxiliaryKernel{
        "attention_fp8_quantize_" + x, name, std::move(p.params),
        {SizeExpr::ceilDiv(rows, kQuantizeRows), heads, S::B},
        {kQuantizeThreads, 1, 1}});
  }
  return kernels;
}
