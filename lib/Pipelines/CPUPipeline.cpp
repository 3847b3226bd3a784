//===- CPUPipeline.cpp - fa-to-cpu ----------------------------------------===//
//
//   fa.attention (tensors, in func.func directly in the module)
//     -> fa-check-placement                diagnose fa ops anywhere else
//     -> fa-differentiate-score-mod        fa.attention_grad: score_mod_grad
//     -> fa-tile-attention-grad            fa.attention_grad: tiled backward
//     or fa-decompose-attention-grad         reference{=true}: materialized
//     -> fa-tile-attention                 FlashAttention form: forall over
//        fa-decompose-online-attention       (b, h, q-block), online softmax
//     or fa-decompose-attention            reference{=true}: whole score matrix
//     -> convert-elementwise-to-linalg, one-shot-bufferize, buffer-deallocation-pipeline
//     -> convert-linalg-to-loops, lower-affine, convert-scf-to-cf
//     -> expand arith.extf from f8E4M3FN (LLVM has no fp8 type)
//     -> arith-expand (bf16), convert-math-to-llvm, convert-math-to-libm (tanh),
//        convert-to-llvm
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Pipelines/CPUPipeline.h"

#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fa::buildCPUPipeline(OpPassManager &pm,
                                const CPUPipelineOptions &options) {
  if (options.raiseAttention)
    pm.addNestedPass<func::FuncOp>(createFARaiseAttentionPass());
  // fa ops in a nested module would stay unlowered: say so up front.
  pm.addPass(createFACheckPlacementPass(FACheckPlacementPassOptions{"fa-to-cpu"}));
  // Both lowerings of fa.attention_grad read score_mod_grad, not score_mod.
  pm.addPass(createFADifferentiateScoreModPass());
  if (options.reference) {
    pm.addPass(createFADecomposeAttentionGradPass());
    pm.addPass(createFADecomposeAttentionPass());
  } else {
    pm.addPass(createFATileAttentionGradPass(
        FATileAttentionGradPassOptions{options.blockQ, options.blockKV}));
    pm.addPass(createFATileAttentionPass(FATileAttentionPassOptions{
        options.blockQ, options.blockKV, options.maskModSparsity}));
  }
  // The tiled form's ops are lowered in both branches: a module may hold
  // them written by hand (fa.kv_block_range, fa.online_attention), which the
  // reference branch would otherwise leave in its output (found by fa-fuzz).
  pm.addPass(createFADecomposeOnlineAttentionPass());
  addHostBufferizationPasses(pm);
  addHostToLLVMPasses(pm);
  // What the conversions could not lower fails here, at the op, instead of in
  // mlir-translate or a JIT later.
  pm.addPass(createFACheckLoweredToLLVMPass(
      FACheckLoweredToLLVMPassOptions{"fa-to-cpu"}));
}

void mlir::fa::addHostBufferizationPasses(OpPassManager &pm) {
  // linalg.softmax bufferizes but has no loop lowering: decomposed first.
  pm.addNestedPass<func::FuncOp>(createFADecomposeAggregatedOpsPass());
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
  // Lowers the bufferization.clone that deallocation inserts for memrefs
  // returned across function boundaries.
  pm.addPass(createConvertBufferizationToMemRefPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());

  pm.addPass(createFAExpandF8E4M3FNExtFPass());
  pm.addPass(createFAExpandF8E4M3FNTruncFPass());
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  // Math ops with an LLVM intrinsic first (math.absi, math.rsqrt as 1 / sqrt,
  // exp, log, ...: convert-math-to-libm rejects math.absi and would call an
  // `rsqrtf` that libm lacks), then libm calls for the rest (tanh, ...).
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
}

void mlir::fa::addHostToLLVMPasses(OpPassManager &pm) {
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::fa::registerCPUPipeline() {
  // The registry aborts on a pipeline registered twice: register once.
  static const bool registered = [] {
    PassPipelineRegistration<CPUPipelineOptions>(
        "fa-to-cpu",
        "Lower fa.attention on tensors to the LLVM dialect for CPU execution "
        "with mlir-runner",
        buildCPUPipeline);
    return true;
  }();
  (void)registered;
}
