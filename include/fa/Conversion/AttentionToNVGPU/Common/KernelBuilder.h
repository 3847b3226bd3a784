//===- KernelBuilder.h - emission shorthands of the kernel components -*- C++ -*-===//
//
// The builder, the location and the index/f32/LLVM-struct shorthands every
// kernel component (Common/, SM80/, SM90/) emits its ops with. Stateless
// beyond the insertion point: components keep their own state in explicit
// structs and take a KernelBuilder by reference.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_KERNELBUILDER_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::fa::kernel {

/// How the 4 lanes that share an accumulator row combine a value.
enum class QuadReduction {
  Add,        ///< sum (row sums)
  MaxNum,     ///< max.f32 (row maxima; -inf is its identity)
  MaxSelect,  ///< compare + select (the sm_90a schedule without fast-softmax)
};

/// Static extent of the 1-D memrefs that stand for a kernel's bare pointers
/// (the bare-pointer convention needs static shapes).
constexpr int64_t kGlobalExtent = int64_t(1) << 40;

struct KernelBuilder {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64c(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value i32c(int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, int64_t d) {
    return arith::DivUIOp::create(b, loc, x, idx(d));
  }
  Value rem(Value x, int64_t d) {
    return arith::RemUIOp::create(b, loc, x, idx(d));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value asIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  Value toI64(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }
  /// max.f32 through llvm.intr.maxnum: one instruction.
  Value maxNum(Value x, Value y) { return LLVM::MaxNumOp::create(b, loc, x, y); }
  /// max as compare + select.
  Value maxSelect(Value x, Value y) {
    Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
    return arith::SelectOp::create(b, loc, gt, x, y);
  }
  /// Element `i` of an LLVM struct (wgmma accumulators).
  Value extract(Value s, int64_t i) {
    return LLVM::ExtractValueOp::create(b, loc, s, ArrayRef<int64_t>{i});
  }
  Value insert(Value s, Value v, int64_t i) {
    return LLVM::InsertValueOp::create(b, loc, s, v, ArrayRef<int64_t>{i});
  }
  /// `body` emitted inside `scf.if cond` (no results).
  void ifThen(Value cond, llvm::function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }
  /// Combines `v` over the 4 lanes of a quad (shuffle xor 1, 2).
  Value quadReduce(Value v, QuadReduction kind);
  /// ex2.approx.ftz.f32 (MUFU), as FlashAttention uses; math.exp2 would
  /// become a libdevice call.
  Value exp2(Value x);
  /// 2^x on the FMA/ALU pipes (no MUFU), same accuracy as ex2.approx; see
  /// KernelBuilder.cpp. -inf gives exactly 0; x must be <= 128.
  Value exp2Poly(Value x);
  /// lg2.approx.f32.
  Value log2Approx(Value x);
  /// tanh.approx.f32 (MUFU, sm_75+; the PTX ISA's bound on its relative
  /// error is 2^-10.987, the H200 measured 7.8e-6 absolute over [-12, 12]),
  /// as FlashAttention's softcap.
  Value tanhApprox(Value x);
  /// Packed sequence `sequence` of a varlen launch: its first row and length
  /// within a packed length `total`, from offsets[sequence] and
  /// offsets[sequence + 1] (`offsets` a [B + 1] i32 memref) clamped into
  /// [0, total] and made non-decreasing, so that bad offsets never address
  /// outside the packed tensors (the forward and backward kernels' reading).
  std::pair<Value, Value> packedSequence(Value offsets, Value sequence,
                                         Value total);
};

/// An empty kernel `name` of `threads` threads per CTA at the end of
/// `module` (an auxiliary kernel beside a module's attention kernel: the
/// backward's pre- and postprocess, the fp8 quantization), the builder at the
/// start of its body.
gpu::GPUFuncOp createAuxiliaryKernelFunc(OpBuilder &b, Location loc,
                                         gpu::GPUModuleOp module,
                                         StringRef name,
                                         ArrayRef<Type> argumentTypes,
                                         int64_t threads);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_KERNELBUILDER_H
