//===- InlinePTX.cpp - the one place inline PTX is emitted ----------------===//
#include "fa/Conversion/AttentionToNVGPU/Common/InlinePTX.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

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
