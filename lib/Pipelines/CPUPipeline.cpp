//===- CPUPipeline.cpp - fa-to-cpu ----------------------------------------===//
//
//   fa.attention (tensors)
//     -> fa-tile-attention                 FlashAttention form: forall over
//        fa-decompose-online-attention       (b, h, q-block), online softmax
//     or fa-decompose-attention            reference{=true}: whole score matrix
//     -> convert-elementwise-to-linalg, one-shot-bufferize, buffer-deallocation-pipeline
//     -> convert-linalg-to-loops, lower-affine, convert-scf-to-cf
//     -> expand arith.extf from f8E4M3FN (LLVM has no fp8 type)
//     -> arith-expand (bf16), convert-math-to-libm (tanh), convert-to-llvm
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

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
    auto like = [&](Type elt) -> Type {
      if (auto vec = dyn_cast<VectorType>(inTy))
        return vec.clone(elt);
      return elt;
    };
    auto cst = [&](Type ty, TypedAttr attr) -> Value {
      if (auto vec = dyn_cast<VectorType>(ty))
        attr = DenseElementsAttr::get(vec, cast<Attribute>(attr));
      return arith::ConstantOp::create(rewriter, loc, ty, attr);
    };
    Type i8 = like(rewriter.getI8Type()), i32 = like(rewriter.getI32Type());
    Type f32 = like(rewriter.getF32Type());
    auto i32c = [&](int64_t v) {
      return cst(i32, rewriter.getI32IntegerAttr(v));
    };
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
        cst(f32, rewriter.getF32FloatAttr(0x1p120f)));
    Value isNan = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        mag, i32c(0x7F));
    val = arith::SelectOp::create(
        rewriter, loc, isNan,
        cst(f32, rewriter.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN())),
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

struct ExpandF8E4M3FNExtFPass
    : PassWrapper<ExpandF8E4M3FNExtFPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandF8E4M3FNExtFPass)
  StringRef getArgument() const override { return "fa-expand-f8e4m3fn-extf"; }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandF8E4M3FNExtF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fa::buildCPUPipeline(OpPassManager &pm,
                                const CPUPipelineOptions &options) {
  if (options.reference) {
    pm.addPass(createFADecomposeAttentionPass());
  } else {
    pm.addPass(createFATileAttentionPass(
        FATileAttentionPassOptions{options.blockQ, options.blockKV}));
    pm.addPass(createFADecomposeOnlineAttentionPass());
  }
  // Elementwise arith on tensors around the op (e.g. casts before printing).
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::BufferDeallocationPipelineOptions deallocOptions;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOptions);

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());

  pm.addPass(std::make_unique<ExpandF8E4M3FNExtFPass>());
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::fa::registerPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "fa-to-cpu",
      "Lower fa.attention on tensors to the LLVM dialect for CPU execution "
      "with mlir-runner",
      buildCPUPipeline);
}
