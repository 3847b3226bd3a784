//===- Wgmma.cpp - warpgroup MMA (wgmma) of sm_90a ------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/Wgmma.h"
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <string>

using namespace mlir;
using namespace mlir::fa::kernel;
using namespace mlir::fa::sm90;

Value mlir::fa::sm90::wgmmaDescriptor(KernelBuilder &kb, Value base,
                                      int64_t byteOffset, int64_t leadingBytes,
                                      WgmmaDescriptor::SwizzleMode mode) {
  int64_t rowBytes = mode == WgmmaDescriptor::k128B  ? 128
                     : mode == WgmmaDescriptor::k64B ? 64
                                                     : 32;
  int64_t fields =
      WgmmaDescriptor::constantFields(leadingBytes, 8 * rowBytes, mode);
  Value v = arith::AddIOp::create(kb.b, kb.loc, base, kb.i64c(byteOffset >> 4));
  return arith::OrIOp::create(kb.b, kb.loc, v, kb.i64c(fields));
}

Value mlir::fa::sm90::wgmmaDescriptor128B(KernelBuilder &kb, Value base,
                                          int64_t byteOffset,
                                          int64_t leadingBytes) {
  return wgmmaDescriptor(kb, base, byteOffset, leadingBytes,
                         WgmmaDescriptor::k128B);
}

LLVM::LLVMStructType mlir::fa::sm90::wgmmaAccumulatorType(MLIRContext *ctx,
                                                          int64_t n) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, Float32Type::get(ctx)));
}

static NVVM::WGMMATypes wgmmaType(Type elementType) {
  if (elementType.isFloat(8))
    return NVVM::WGMMATypes::e4m3;
  return elementType.isF16() ? NVVM::WGMMATypes::f16 : NVVM::WGMMATypes::bf16;
}

int64_t mlir::fa::sm90::wgmmaK(Type elementType) {
  // 32 bytes of K per wgmma: k16 for 16-bit types, k32 for fp8.
  return elementType.isFloat(8) ? 32 : 16;
}

Value mlir::fa::sm90::wgmmaSS(KernelBuilder &kb, Type elementType, Value acc,
                              Value descA, Value descB, int64_t n, bool first,
                              bool transposeB, bool transposeA) {
  NVVM::WGMMATypes ty = wgmmaType(elementType);
  return NVVM::WgmmaMmaAsyncOp::create(
      kb.b, kb.loc, acc.getType(), acc, descA, descB,
      NVVM::MMAShapeAttr::get(kb.b.getContext(), 64, n, wgmmaK(elementType)),
      ty, ty,
      NVVM::WGMMATypes::f32,
      first ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
      NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
      transposeA ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      transposeB ? NVVM::MMALayout::row : NVVM::MMALayout::col,
      NVVM::MMAIntOverflowAttr());
}

Value mlir::fa::sm90::wgmmaRS(KernelBuilder &kb, Type elementType, Value acc,
                              ArrayRef<Value> a, Value descB, int64_t n) {
  int64_t nAcc = n / 2;
  bool fp8 = elementType.isFloat(8);
  std::string ty = fp8 ? "e4m3" : elementType.isF16() ? "f16" : "bf16";
  // The scale-d predicate p is 1 (accumulate); scale-a, scale-b 1; tnspB 1
  // (fp8 has no transpose: B is K-major).
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n" +
                    std::to_string(n) + "k" +
                    std::to_string(wgmmaK(elementType)) + ".f32." + ty + "." +
                    ty + " {";
  for (int64_t i = 0; i < nAcc; ++i)
    ptx += (i ? ", $" : "$") + std::to_string(i);
  ptx += "}, {";
  for (int64_t i = 0; i < 4; ++i)
    ptx += (i ? ", $" : "$") + std::to_string(2 * nAcc + i);
  ptx += "}, $" + std::to_string(2 * nAcc + 4) +
         (fp8 ? ", p, 1, 1;\n}" : ", p, 1, 1, 1;\n}");
  SmallVector<Value> operands;
  for (int64_t i = 0; i < nAcc; ++i)
    operands.push_back(kb.extract(acc, i));
  operands.append(a.begin(), a.end());
  operands.push_back(descB);
  return emitInlinePTX(kb, acc.getType(), operands, ptx,
                       tiedConstraints(nAcc, 'f', ",r,r,r,r,l"));
}
