//===- InlinePTX.cpp - the one place inline PTX is emitted ----------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa::kernel;

Value mlir::fa::kernel::emitInlinePTX(KernelBuilder &kb, Type resultType,
                                      ValueRange operands, StringRef ptx,
                                      StringRef constraints, bool pure) {
  return LLVM::InlineAsmOp::create(
             kb.b, kb.loc, resultType, operands, ptx, constraints,
             /*has_side_effects=*/!pure, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(kb.b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             ArrayAttr())
      .getResult(0);
}

void mlir::fa::kernel::emitInlinePTXEffect(KernelBuilder &kb,
                                           ValueRange operands, StringRef ptx,
                                           StringRef constraints) {
  LLVM::InlineAsmOp::create(
      kb.b, kb.loc, TypeRange{}, operands, ptx, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(kb.b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

std::string mlir::fa::kernel::tiedConstraints(int64_t numOutputs, char cls,
                                              StringRef extraInputs) {
  std::string cons;
  for (int64_t i = 0; i < numOutputs; ++i)
    cons += (i ? ",=" : "=") + std::string(1, cls);
  for (int64_t i = 0; i < numOutputs; ++i)
    cons += "," + std::to_string(i);
  return cons + extraInputs.str();
}

Value mlir::fa::kernel::opaqueIndex(KernelBuilder &kb, Value v) {
  Value y = emitInlinePTX(kb, kb.b.getI32Type(), ValueRange{kb.toI32(v)},
                          "mov.u32 $0, $1;", "=r,r");
  return kb.asIndex(y);
}

Value mlir::fa::kernel::opaqueThreadIdX(KernelBuilder &kb) {
  return opaqueSpecialRegister(kb, "%tid.x");
}

Value mlir::fa::kernel::opaqueSpecialRegister(KernelBuilder &kb,
                                              StringRef reg) {
  return kb.asIndex(emitInlinePTX(kb, kb.b.getI32Type(), ValueRange{},
                                  ("mov.u32 $0, " + reg + ";").str(), "=r"));
}

SmallVector<Value> mlir::fa::kernel::keepRegistersLive(KernelBuilder &kb,
                                                      ArrayRef<Value> regs) {
  SmallVector<Type> tys(regs.size(), kb.b.getI32Type());
  auto st = LLVM::LLVMStructType::getLiteral(kb.b.getContext(), tys);
  Value r = emitInlinePTX(kb, st, regs, "", tiedConstraints(regs.size(), 'r'));
  SmallVector<Value> out;
  for (size_t i = 0; i < regs.size(); ++i)
    out.push_back(kb.extract(r, i));
  return out;
}

void mlir::fa::kernel::namedBarrier(KernelBuilder &kb, Value id,
                                    int64_t threads, bool sync) {
  if (sync)
    NVVM::BarrierOp::create(kb.b, kb.loc, Type(), id, kb.i32c(threads),
                            NVVM::BarrierReductionAttr(), Value());
  else
    NVVM::BarrierArriveOp::create(kb.b, kb.loc, id, kb.i32c(threads));
}

Value mlir::fa::kernel::sharedAddress32(KernelBuilder &kb, Value smem) {
  return kb.toI32(
      memref::ExtractAlignedPointerAsIndexOp::create(kb.b, kb.loc, smem));
}

Value mlir::fa::kernel::ldmatrixX4(KernelBuilder &kb, Type elementType,
                                   Value laneAddress, int64_t byteOffset,
                                   bool transpose) {
  Type i32 = kb.b.getI32Type();
  auto st =
      LLVM::LLVMStructType::getLiteral(kb.b.getContext(), {i32, i32, i32, i32});
  std::string ptx = "ldmatrix.sync.aligned.m8n8.x4";
  if (transpose)
    ptx += ".trans";
  ptx += ".shared.b16 {$0, $1, $2, $3}, [$4";
  if (byteOffset)
    ptx += "+" + std::to_string(byteOffset);
  ptx += "];";
  Value regs =
      emitInlinePTX(kb, st, ValueRange{laneAddress}, ptx, "=r,=r,=r,=r,r");
  auto pairTy = VectorType::get({2}, elementType);
  auto fragTy = VectorType::get({4, 2}, elementType);
  Value frag = arith::ConstantOp::create(
      kb.b, kb.loc, fragTy,
      DenseElementsAttr::get(fragTy, kb.b.getZeroAttr(elementType)));
  for (int64_t i = 0; i < 4; ++i) {
    Value pair =
        LLVM::BitcastOp::create(kb.b, kb.loc, pairTy, kb.extract(regs, i));
    frag = vector::InsertOp::create(kb.b, kb.loc, pair, frag,
                                    ArrayRef<int64_t>{i});
  }
  return frag;
}

Value mlir::fa::kernel::globalAddress(KernelBuilder &kb, Value gmem) {
  Value generic = kb.toI64(
      memref::ExtractAlignedPointerAsIndexOp::create(kb.b, kb.loc, gmem));
  return emitInlinePTX(kb, kb.b.getI64Type(), ValueRange{generic},
                       "cvta.to.global.u64 $0, $1;", "=l,l", /*pure=*/true);
}

void mlir::fa::kernel::cpAsync16(KernelBuilder &kb, Value dst,
                                 int64_t dstOffset, Value src, Value srcBytes) {
  std::string ptx = "cp.async.cg.shared.global [$0";
  if (dstOffset)
    ptx += "+" + std::to_string(dstOffset);
  ptx += "], [$1], 16, $2;";
  emitInlinePTXEffect(kb, ValueRange{dst, src, srcBytes}, ptx, "r,l,r");
}
