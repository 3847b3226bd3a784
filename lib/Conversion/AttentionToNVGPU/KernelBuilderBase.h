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
#include "llvm/Support/JSON.h"

#include <string>

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
};

/// Appends one kernel parameter to a launch manifest's `params` list.
inline void addManifestParam(llvm::json::Array &params, std::string name,
                             std::string type, std::string meaning) {
  params.push_back(llvm::json::Object{
      {"name", std::move(name)}, {"type", std::move(type)},
      {"meaning", std::move(meaning)}});
}

/// Appends the parameters every fa kernel takes after its input tensors:
/// `out`, `lse` (when present), then the runtime sizes B, Hq, Hkv, Nq, Nk.
inline void addOutputAndSizeParams(llvm::json::Array &params,
                                   const std::string &eltName, bool hasLse) {
  addManifestParam(params, "out", "ptr",
                   "output [B, Hq, Nq, D], contiguous, " + eltName);
  if (hasLse)
    addManifestParam(params, "lse", "ptr",
                     "log-sum-exp [B, Hq, Nq], contiguous, f32 (ln)");
  addManifestParam(params, "B", "i32", "batch");
  addManifestParam(params, "Hq", "i32", "query heads");
  addManifestParam(params, "Hkv", "i32", "key/value heads (divides Hq)");
  addManifestParam(params, "Nq", "i32", "query length");
  addManifestParam(params, "Nk", "i32", "key/value length");
}

} // namespace mlir::fa::detail

#endif // FA_LIB_CONVERSION_ATTENTIONTONVGPU_KERNELBUILDERBASE_H
