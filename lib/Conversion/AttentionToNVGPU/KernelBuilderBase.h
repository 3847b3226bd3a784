//===- KernelBuilderBase.h - helpers shared by the kernel builders --*- C++ -*-===//
//
// The index/f32 arithmetic shorthands the SM80 and SM90 kernel builders both
// use while emitting their gpu.func bodies with builders.
//
//===----------------------------------------------------------------------===//
#ifndef FA_LIB_CONVERSION_ATTENTIONTONVGPU_KERNELBUILDERBASE_H
#define FA_LIB_CONVERSION_ATTENTIONTONVGPU_KERNELBUILDERBASE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

// The launch manifest both builders fill.
#include "Common/LaunchManifest.h"

namespace mlir::fa::detail {

struct KernelBuilderBase {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, int64_t d) {
    return arith::DivUIOp::create(b, loc, x, idx(d));
  }
  Value rem(Value x, int64_t d) {
    return arith::RemUIOp::create(b, loc, x, idx(d));
  }
  /// ex2.approx.ftz.f32 (MUFU), as FlashAttention uses; math.exp2 would
  /// become a libdevice call.
  Value exp2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, x.getType(),
               b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{x})
        .getResult(0);
  }
  /// The band of one score row in a thread's column frame: column colBase + o
  /// of the row whose diagonal key is `rowDiag` is visible iff
  /// lo <= o <= lim, with lim = min(Nk - 1, rowDiag + right) - colBase and
  /// lo = rowDiag - left - colBase (null without a left edge; right < 0 is no
  /// right edge): one compare per score and edge.
  struct RowBand {
    Value lim, lo;
  };
  RowBand rowBand(Value rowDiag, Value colBase, Value nk, int64_t left,
                  int64_t right) {
    RowBand band;
    Value last = arith::SubIOp::create(b, loc, nk, idx(1));
    if (right >= 0)
      last = arith::MinSIOp::create(
          b, loc, last, right ? add(rowDiag, idx(right)) : rowDiag);
    band.lim = arith::SubIOp::create(b, loc, last, colBase);
    if (left >= 0)
      band.lo = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, rowDiag, idx(left)), colBase);
    return band;
  }
  /// Whether column offset `o` lies in `band`.
  Value inBand(const RowBand &band, int64_t o) {
    Value ov = idx(o);
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, ov,
                                     band.lim);
    if (band.lo)
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, ov,
                                band.lo));
    return ok;
  }
  /// 2^x on the FMA/ALU pipes instead of the MUFU (the exp unit is what the
  /// softmax waits on): 2^x = 2^j * 2^f with j = round(x), f = x - j in
  /// [-0.5, 0.5], 2^f by a degree-5 polynomial (relative error 2.3e-7, that
  /// of ex2.approx), 2^j by writing j + 127 into an exponent field. x is
  /// clamped to >= -127, where 2^j becomes +0, so -inf (a masked score) gives
  /// exactly 0; x must be <= 128. 11 instructions, no MUFU.
  Value exp2Poly(Value x) {
    Type i32 = b.getI32Type();
    // 1.5 * 2^23 + 127: adding it rounds x to an integer j and leaves j + 127
    // in the low mantissa bits.
    Value shifter = f32(12582912.0 + 127.0);
    Value xc = LLVM::MaxNumOp::create(b, loc, x, f32(-127.0));
    Value t = arith::AddFOp::create(b, loc, xc, shifter);
    Value j = arith::SubFOp::create(b, loc, t, shifter);
    Value f = arith::SubFOp::create(b, loc, xc, j);
    // Least-maximum-relative-error fit of 2^f on [-0.5, 0.5] (Horner).
    static constexpr double kCoeff[] = {
        1.0000001192092896,   0.6931469440460205,   0.24022120237350464,
        0.05550713092088699,  0.009675540961325169, 0.001327647129073739};
    Value p = f32(kCoeff[5]);
    for (int k = 4; k >= 0; --k)
      p = LLVM::FMAOp::create(b, loc, p, f, f32(kCoeff[k]));
    Value bits = arith::BitcastOp::create(b, loc, i32, t);
    Value pow2j = arith::BitcastOp::create(
        b, loc, b.getF32Type(),
        arith::ShLIOp::create(
            b, loc, bits,
            arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(23))));
    return arith::MulFOp::create(b, loc, p, pow2j);
  }
};

} // namespace mlir::fa::detail

#endif // FA_LIB_CONVERSION_ATTENTIONTONVGPU_KERNELBUILDERBASE_H
