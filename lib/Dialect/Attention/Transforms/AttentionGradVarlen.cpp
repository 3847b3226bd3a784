//===- AttentionGradVarlen.cpp - the backward of packed sequences ---------===//
//
// fa.attention_grad with varlen(%cq, %ck) as a loop over the sequences, each
// an fa.attention_grad of its own on the slices of the packed tensors (the
// forward's reference lowering does the same, DecomposeAttention.cpp), whose
// gradients are inserted at the sequence's rows and keys. Both CPU lowerings
// of the backward run it first and lower each inner op as they lower any
// other (its sizes are dynamic).
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"
#include "fa/Dialect/Attention/Utils/AttentionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fa;

LogicalResult mlir::fa::lowerVarlenAttentionGrad(
    RewriterBase &rewriter, AttentionGradOp op,
    function_ref<LogicalResult(RewriterBase &, AttentionGradOp)> lowerEach) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto dim = [&](Value t, int64_t d) {
    return tensor::getMixedSize(rewriter, loc, t, d);
  };
  Value numSeqs = getPackedSequenceCount(rewriter, loc, op.getCuSeqlensQ());
  Value packedQ = tensor::DimOp::create(rewriter, loc, op.getQuery(), 2);
  Value packedK = tensor::DimOp::create(rewriter, loc, op.getKey(), 2);
  // Zero gradients where no sequence covers a row or key.
  SmallVector<Value> inits;
  for (Value like : {op.getQuery(), op.getKey(), op.getValue()}) {
    auto type = cast<RankedTensorType>(like.getType());
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, like),
        type.getElementType());
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    inits.push_back(
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0));
  }
  SmallVector<AttentionGradOp> inner;
  auto loop = scf::ForOp::create(
      rewriter, loc, idx(0), numSeqs, idx(1), inits,
      [&](OpBuilder &b, Location l, Value seq, ValueRange acc) {
        PackedSequence rows =
            getPackedSequence(b, l, op.getCuSeqlensQ(), seq, packedQ);
        PackedSequence keys =
            getPackedSequence(b, l, op.getCuSeqlensK(), seq, packedK);
        OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
        auto box = [&](Value t, PackedSequence range) {
          auto rank = cast<RankedTensorType>(t.getType()).getRank();
          SmallVector<OpFoldResult> offsets = {zero, zero, range.start};
          SmallVector<OpFoldResult> sizes = {one, dim(t, 1), range.length};
          if (rank == 4) {
            offsets.push_back(zero);
            sizes.push_back(dim(t, 3));
          }
          return std::make_pair(offsets, sizes);
        };
        auto slice = [&](Value t, PackedSequence range) -> Value {
          auto [offsets, sizes] = box(t, range);
          return tensor::ExtractSliceOp::create(
              b, l, t, offsets, sizes,
              SmallVector<OpFoldResult>(offsets.size(), one));
        };
        Value q = slice(op.getQuery(), rows), k = slice(op.getKey(), keys),
              v = slice(op.getValue(), keys), o = slice(op.getOut(), rows),
              lse = slice(op.getLse(), rows),
              dO = slice(op.getGradOut(), rows);
        auto grad = AttentionGradOp::create(
            b, l, TypeRange{q.getType(), k.getType(), v.getType()}, q, k, v, o,
            lse, dO, /*mask=*/Value(), /*cu_seqlens=*/ValueRange(),
            /*grad_captures=*/ValueRange(), op.getScaleAttr(),
            op.getCausalAttr(), op.getWindowAttr(), op.getSoftcapAttr(),
            /*capture_grad_terms=*/DenseI64ArrayAttr(), op->getNumRegions());
        // The regions' batch argument (score_mod's and score_mod_grad's 1,
        // mask_mod's 0) is the sequence.
        cloneModifiersForSequence(b, l, op.getModifiers(), grad.getModifiers(),
                                  {1, 0, 1}, seq);
        inner.push_back(grad);
        SmallVector<Value> results;
        for (auto [g, into, range] :
             llvm::zip(grad.getResults(), acc,
                       std::array<PackedSequence, 3>{rows, keys, keys})) {
          auto [offsets, sizes] = box(into, range);
          results.push_back(tensor::InsertSliceOp::create(
              b, l, g, into, offsets, sizes,
              SmallVector<OpFoldResult>(4, one)));
        }
        scf::YieldOp::create(b, l, results);
      });
  SmallVector<Value> results;
  for (auto [result, original] :
       llvm::zip(loop.getResults(), op->getResults())) {
    Value r = result;
    if (r.getType() != original.getType())
      r = tensor::CastOp::create(rewriter, loc, original.getType(), r);
    results.push_back(r);
  }
  rewriter.replaceOp(op, results);
  for (AttentionGradOp grad : inner)
    if (failed(lowerEach(rewriter, grad)))
      return failure();
  return success();
}
