//===- ExpandF8E4M3FNTruncF.cpp - arith.truncf to f8E4M3FN on the bits ----===//
//
// LLVM has no fp8 type and upstream arith-expand has no E4M3 patterns, so the
// CPU pipeline builds the fp8 bits of a rounded f32 value with integer ops:
// round to nearest even, saturating to +-448 (E4M3FN has no infinity), NaN to
// NaN. fa-quantize-fp8 clamps to [-448, 448] before truncating, so saturation
// is only a safety net here; it is what sm_90's cvt.rn.satfinite.e4m3x2 does.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "ScalarOrVectorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAEXPANDF8E4M3FNTRUNCFPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

namespace {
/// arith.truncf to f8E4M3FN from f32 (f16 and bf16 are extended to f32 first,
/// exactly). With a = |x| as bits:
///  * a >= 2^-6 (normal in E4M3): add 0x7FFFF + bit 20 of a (round the 23-bit
///    mantissa to 3 bits, ties to even), shift right by 20 and rebias the
///    exponent by 127 - 7 (subtract 120 << 3);
///  * a < 2^-6 (subnormal, steps of 2^-9): round |x| * 2^9 to an integer, ties
///    to even, with the 2^23 magic-number add/subtract (|x| * 2^9 < 8);
///  * a saturates at 448 (0x43E00000) before rounding, NaN gives 0x7F.
struct ExpandF8E4M3FNTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type outTy = op.getType();
    if (!isa<Float8E4M3FNType>(getElementTypeOrSelf(outTy)))
      return failure();
    Type inElt = getElementTypeOrSelf(op.getIn().getType());
    if (inElt.getIntOrFloatBitWidth() > 32)
      return rewriter.notifyMatchFailure(op, "f64 would round twice");
    Location loc = op.getLoc();
    fa::ScalarOrVectorBuilder sv{rewriter, loc, outTy};
    Type i8 = sv.type(rewriter.getI8Type()), i32 = sv.type(rewriter.getI32Type());
    Type f32 = sv.type(rewriter.getF32Type());
    auto i32c = [&](int64_t v) { return sv.i32(v); };
    auto f32c = [&](float v) { return sv.f32(v); };
    using Pred = arith::CmpIPredicate;

    Value x = op.getIn();
    if (!inElt.isF32())
      x = arith::ExtFOp::create(rewriter, loc, f32, x);
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, x);
    Value sign = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, bits, i32c(24)),
        i32c(0x80));
    Value abs = arith::AndIOp::create(rewriter, loc, bits, i32c(0x7FFFFFFF));
    Value isNan =
        arith::CmpIOp::create(rewriter, loc, Pred::ugt, abs, i32c(0x7F800000));
    // Positive floats order like their bits: saturate at 448 (inf too).
    Value sat = arith::MinUIOp::create(rewriter, loc, abs, i32c(0x43E00000));

    Value lsb = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, sat, i32c(20)),
        i32c(1));
    Value rounded = arith::AddIOp::create(
        rewriter, loc, sat,
        arith::AddIOp::create(rewriter, loc, lsb, i32c(0x7FFFF)));
    Value normal = arith::SubIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, rounded, i32c(20)),
        i32c(120 << 3));

    Value scaled = arith::MulFOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, f32, sat),
        f32c(512.0f));
    Value magic = f32c(8388608.0f); // 2^23: adding it rounds to an integer
    Value integral = arith::SubFOp::create(
        rewriter, loc, arith::AddFOp::create(rewriter, loc, scaled, magic),
        magic);
    Value subnormal = arith::FPToUIOp::create(rewriter, loc, i32, integral);

    Value isSubnormal =
        arith::CmpIOp::create(rewriter, loc, Pred::ult, sat, i32c(0x3C800000));
    Value mag =
        arith::SelectOp::create(rewriter, loc, isSubnormal, subnormal, normal);
    mag = arith::SelectOp::create(rewriter, loc, isNan, i32c(0x7F), mag);
    Value code = arith::TruncIOp::create(
        rewriter, loc, i8, arith::OrIOp::create(rewriter, loc, mag, sign));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, outTy, code);
    return success();
  }
};

struct FAExpandF8E4M3FNTruncFPass
    : fa::impl::FAExpandF8E4M3FNTruncFPassBase<FAExpandF8E4M3FNTruncFPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    fa::populateExpandF8E4M3FNTruncFPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fa::populateExpandF8E4M3FNTruncFPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpandF8E4M3FNTruncF>(patterns.getContext());
}
