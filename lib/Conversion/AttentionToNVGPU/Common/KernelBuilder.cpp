//===- KernelBuilder.cpp - emission shorthands of the kernel components ---===//
#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa::kernel;

Value KernelBuilder::quadReduce(Value v, QuadReduction kind) {
  for (int32_t off : {1, 2}) {
    Value o = gpu::ShuffleOp::create(b, loc, v, off, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
    switch (kind) {
    case QuadReduction::Add:
      v = arith::AddFOp::create(b, loc, v, o);
      break;
    case QuadReduction::MaxNum:
      v = maxNum(v, o);
      break;
    case QuadReduction::MaxSelect:
      v = maxSelect(v, o);
      break;
    }
  }
  return v;
}

Value KernelBuilder::exp2(Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, x.getType(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
             ValueRange{x})
      .getResult(0);
}

Value KernelBuilder::tanhApprox(Value x) {
  // LLVM 22 has no nvvm intrinsic for it (llvm.tanh becomes a libdevice-like
  // expansion): the instruction itself, as a pure inline asm.
  return emitInlinePTX(*this, x.getType(), ValueRange{x},
                       "tanh.approx.f32 $0, $1;", "=f,f", /*pure=*/true);
}

Value KernelBuilder::log2Approx(Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                       b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                                       ValueRange{x})
      .getResult(0);
}

/// 2^x = 2^j * 2^f with j = round(x), f = x - j in [-0.5, 0.5], 2^f by a
/// degree-5 polynomial (relative error 2.3e-7, that of ex2.approx), 2^j by
/// writing j + 127 into an exponent field. x is clamped to >= -127, where 2^j
/// becomes +0, so -inf (a masked score) gives exactly 0. 11 instructions, no
/// MUFU (the exp unit is what the softmax waits on).
Value KernelBuilder::exp2Poly(Value x) {
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

gpu::GPUFuncOp mlir::fa::kernel::createAuxiliaryKernelFunc(
    OpBuilder &b, Location loc, gpu::GPUModuleOp module, StringRef name,
    ArrayRef<Type> argumentTypes, int64_t threads) {
  b.setInsertionPointToEnd(&module.getBodyRegion().front());
  auto fn = gpu::GPUFuncOp::create(b, loc, name,
                                   b.getFunctionType(argumentTypes, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  b.setInsertionPointToStart(&fn.getBody().front());
  return fn;
}

std::pair<Value, Value>
KernelBuilder::packedSequence(Value offsets, Value sequence, Value total) {
  auto read = [&](Value i) {
    return asIndex(memref::LoadOp::create(b, loc, offsets, ValueRange{i}));
  };
  Value start = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, read(sequence), idx(0)), total);
  Value end = arith::MinSIOp::create(
      b, loc,
      arith::MaxSIOp::create(b, loc, read(add(sequence, idx(1))), start),
      total);
  return {start, sub(end, start)};
}
