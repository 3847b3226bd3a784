//===- ExpandF8E4M3FNExtF.cpp - arith.extf from f8E4M3FN on the bits -----===//
//
// LLVM has no fp8 type and upstream arith-expand has no E4M3 patterns, so the
// CPU pipeline rebuilds the f32 value from the bits of the fp8 one.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "ScalarOrVectorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::fa {
#define GEN_PASS_DEF_FAEXPANDF8E4M3FNEXTFPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

namespace {
/// arith.extf from f8E4M3FN, done on the bits: upstream arith-expand has no
/// E4M3 patterns and LLVM has no fp8 type. The magnitude bits placed at
/// f32's exponent/mantissa position (<< 20) and scaled by 2^(127-7) give the
/// value exactly, subnormals included; 0x7F/0xFF is NaN (no infinities).
struct ExpandF8E4M3FNExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type inTy = op.getIn().getType();
    if (!isa<Float8E4M3FNType>(getElementTypeOrSelf(inTy)))
      return failure();
    Location loc = op.getLoc();
    fa::ScalarOrVectorBuilder sv{rewriter, loc, inTy};
    Type i8 = sv.type(rewriter.getI8Type()), i32 = sv.type(rewriter.getI32Type());
    Type f32 = sv.type(rewriter.getF32Type());
    auto i32c = [&](int64_t v) { return sv.i32(v); };
    Value bits = arith::ExtUIOp::create(
        rewriter, loc, i32, arith::BitcastOp::create(rewriter, loc, i8, op.getIn()));
    Value mag = arith::AndIOp::create(rewriter, loc, bits, i32c(0x7F));
    Value sign = arith::ShLIOp::create(
        rewriter, loc, arith::AndIOp::create(rewriter, loc, bits, i32c(0x80)),
        i32c(24));
    Value f32Bits = arith::OrIOp::create(
        rewriter, loc, arith::ShLIOp::create(rewriter, loc, mag, i32c(20)), sign);
    Value val = arith::MulFOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, f32, f32Bits),
        sv.f32(0x1p120f));
    Value isNan = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        mag, i32c(0x7F));
    val = arith::SelectOp::create(
        rewriter, loc, isNan,
        sv.f32(std::numeric_limits<float>::quiet_NaN()),
        val);
    // Every E4M3 value is exact in f16, bf16, f32 and f64.
    unsigned outWidth = getElementTypeOrSelf(op.getType()).getIntOrFloatBitWidth();
    if (outWidth > 32)
      val = arith::ExtFOp::create(rewriter, loc, op.getType(), val);
    else if (op.getType() != f32)
      val = arith::TruncFOp::create(rewriter, loc, op.getType(), val);
    rewriter.replaceOp(op, val);
    return success();
  }
};

struct FAExpandF8E4M3FNExtFPass
    : fa::impl::FAExpandF8E4M3FNExtFPassBase<FAExpandF8E4M3FNExtFPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    fa::populateExpandF8E4M3FNExtFPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fa::populateExpandF8E4M3FNExtFPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandF8E4M3FNExtF>(patterns.getContext());
}
