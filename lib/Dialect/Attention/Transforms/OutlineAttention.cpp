//===- OutlineAttention.cpp - each tiled attention into its own function --===//
//
// fa-outline-attention: the GPU kernel builders (convert-fa-to-nvgpu) take a
// function that holds one tiled attention and nothing else. A program holds
// attentions anywhere: several in one function, between other ops, in
// functions that others call. This pass moves each tiled attention (the
// scf.forall holding fa.online_attention, with the index arithmetic and
// tensor.empty it is built from) into a private function of its own and calls
// it, so that every attention reaches the builders in the form they take and
// the rest of the program stays on the host.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAOUTLINEATTENTIONPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

/// Whether `op` is recomputed inside the outlined function rather than passed
/// in: scalar arithmetic without memory effects (sizes, the GQA group size,
/// the block count, the diagonal, constants) and the tensor.empty of the
/// results. A tensor any other op produces is data and becomes an argument.
/// (arith.divui is not speculatable, but recomputing it from the same
/// operands where the loop needs it divides exactly as often.)
static bool isRecomputable(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  return llvm::none_of(op->getResultTypes(),
                       [](Type t) { return isa<ShapedType>(t); }) ||
         isa<tensor::DimOp>(op);
}

/// Whether `forall` holds a tiled attention.
static bool isTiledAttention(scf::ForallOp forall) {
  return forall
      .walk([](OnlineAttentionOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

FailureOr<func::CallOp> mlir::fa::outlineTiledAttention(RewriterBase &rewriter,
                                                        scf::ForallOp forall,
                                                        StringRef name) {
  auto parent = forall->getParentOfType<func::FuncOp>();
  if (!parent)
    return forall.emitOpError("fa-outline-attention: the tiled attention must "
                              "be in a func.func");
  // The ops the loop is built from that the new function recomputes, in
  // program order, and the values it takes as arguments.
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitUsesFromAbove = false;
  options.omitBlockArguments = true;
  // The filter also decides whether the walk starts at the loop itself.
  options.filter = [&](Operation *op) {
    return op == forall.getOperation() || isRecomputable(op);
  };
  if (failed(getBackwardSlice(forall.getOperation(), &slice, options)))
    return forall.emitOpError("fa-outline-attention: cannot compute the "
                              "values the tiled attention uses");
  SetVector<Value> arguments;
  auto addArgument = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !slice.contains(def))
      arguments.insert(v);
  };
  for (Operation *op : slice) {
    for (Value operand : op->getOperands())
      addArgument(operand);
  }
  for (Value operand : forall->getOperands())
    addArgument(operand);
  SetVector<Value> usedAbove;
  getUsedValuesDefinedAbove(forall->getRegions(), usedAbove);
  for (Value v : usedAbove)
    addArgument(v);

  // The function: arguments in first-use order, the loop's results returned.
  SmallVector<Type> argTypes;
  for (Value v : arguments)
    argTypes.push_back(v.getType());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(parent);
  auto type = rewriter.getFunctionType(argTypes, forall.getResultTypes());
  auto outlined = func::FuncOp::create(rewriter, forall.getLoc(), name, type);
  outlined.setPrivate();
  Block *body = outlined.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments.getArrayRef(), body->getArguments());
  rewriter.setInsertionPointToEnd(body);
  for (Operation *op : slice)
    rewriter.clone(*op, mapping);
  Operation *loop = rewriter.clone(*forall, mapping);
  func::ReturnOp::create(rewriter, forall.getLoc(), loop->getResults());

  rewriter.setInsertionPoint(forall);
  auto call = func::CallOp::create(rewriter, forall.getLoc(), outlined,
                                   arguments.getArrayRef());
  rewriter.replaceOp(forall, call.getResults());
  // What only the loop used (its tensor.empty, sizes) is now dead here.
  for (Operation *op : llvm::reverse(slice))
    if (op->use_empty() && op->getBlock())
      rewriter.eraseOp(op);
  return call;
}

namespace {
struct FAOutlineAttentionPass
    : public fa::impl::FAOutlineAttentionPassBase<FAOutlineAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkAttentionPlacement(module, "fa-outline-attention")))
      return signalPassFailure();
    SmallVector<scf::ForallOp> loops;
    module.walk([&](scf::ForallOp forall) {
      // The outermost loop holding the steps: the tiled form's.
      if (isTiledAttention(forall) &&
          !forall->getParentOfType<scf::ForallOp>())
        loops.push_back(forall);
    });
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    llvm::StringMap<unsigned> counts;
    for (scf::ForallOp forall : loops) {
      auto parent = forall->getParentOfType<func::FuncOp>();
      std::string base =
          ((parent ? parent.getSymName() : StringRef("attention")) +
           "_attention")
              .str();
      std::string name = base;
      while (symbols.lookup(name))
        name = base + "_" + std::to_string(++counts[base]);
      FailureOr<func::CallOp> call =
          outlineTiledAttention(rewriter, forall, name);
      if (failed(call))
        return signalPassFailure();
      symbols.insert(call->resolveCallable());
    }
  }
};
} // namespace
