//===- Masking.cpp - positional masks of score fragments ------------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/Masking.h"

using namespace mlir;
using namespace mlir::fa::kernel;

/// The constant `v` of `like`'s integer type (index or i32).
static Value constantLike(KernelBuilder &kb, Value like, int64_t v) {
  return arith::ConstantOp::create(kb.b, kb.loc,
                                   kb.b.getIntegerAttr(like.getType(), v));
}

RowBand mlir::fa::kernel::rowBand(KernelBuilder &kb, Value rowDiag,
                                  Value colBase, Value nk, int64_t left,
                                  int64_t right) {
  OpBuilder &b = kb.b;
  RowBand band;
  Value last = kb.sub(nk, constantLike(kb, nk, 1));
  if (right >= 0)
    last = arith::MinSIOp::create(
        b, kb.loc, last,
        right ? kb.add(rowDiag, constantLike(kb, rowDiag, right)) : rowDiag);
  band.lim = kb.sub(last, colBase);
  if (left >= 0)
    band.lo = kb.sub(kb.sub(rowDiag, constantLike(kb, rowDiag, left)), colBase);
  return band;
}

Value mlir::fa::kernel::inBand(KernelBuilder &kb, const RowBand &band,
                               int64_t o) {
  Value ov = constantLike(kb, band.lim, o);
  Value ok = kb.cmp(arith::CmpIPredicate::sle, ov, band.lim);
  if (band.lo)
    ok = arith::AndIOp::create(kb.b, kb.loc, ok,
                               kb.cmp(arith::CmpIPredicate::sge, ov, band.lo));
  return ok;
}

Value mlir::fa::kernel::blockNeedsMask(KernelBuilder &kb, Value j,
                                       Value kvNext, Value nk, Value fullBegin,
                                       Value fullEnd, int64_t left,
                                       int64_t right) {
  Value needMask = kb.cmp(arith::CmpIPredicate::sgt, kvNext, nk);
  if (left >= 0)
    needMask = arith::OrIOp::create(
        kb.b, kb.loc, needMask,
        kb.cmp(arith::CmpIPredicate::slt, j, fullBegin));
  if (right >= 0)
    needMask = arith::OrIOp::create(
        kb.b, kb.loc, needMask, kb.cmp(arith::CmpIPredicate::sge, j, fullEnd));
  return needMask;
}

Value mlir::fa::kernel::blockOutsideFullRange(KernelBuilder &kb, Value j,
                                              Value fullBegin, Value fullEnd) {
  return arith::OrIOp::create(kb.b, kb.loc,
                              kb.cmp(arith::CmpIPredicate::slt, j, fullBegin),
                              kb.cmp(arith::CmpIPredicate::sge, j, fullEnd));
}
