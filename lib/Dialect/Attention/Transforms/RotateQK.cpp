//===- RotateQK.cpp - incoherent processing alone ---------------------------===//
//
// Multiplies the query and key of every f16/bf16/f32 fa.attention along D by
// the same random orthogonal matrix diag(signs) H_D / sqrt(D) (a fast
// Walsh-Hadamard transform, buildRandomizedHadamard): Q K^T is unchanged in
// exact arithmetic. fa-quantize-fp8{incoherent=true} does the same before
// quantizing; this pass exposes the transform alone, to test and measure it.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAROTATEQKPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
struct FARotateQKPass : fa::impl::FARotateQKPassBase<FARotateQKPass> {
  using Base::Base;
  void runOnOperation() override {
    WalkResult walk = getOperation()->walk([&](AttentionOp op) {
      Type elt = op.getQueryType().getElementType();
      if (isa<Float8E4M3FNType>(elt)) {
        op.emitRemark() << "fa-rotate-qk: f8E4M3FN inputs are left as they "
                           "are (rotate before quantizing)";
        return WalkResult::advance();
      }
      int64_t headDim = op.getQueryType().getDimSize(3);
      if (!llvm::isPowerOf2_64(headDim)) {
        op.emitOpError() << "fa-rotate-qk needs a power-of-two head dim D for "
                            "the Walsh-Hadamard transform, got "
                         << headDim;
        return WalkResult::interrupt();
      }
      OpBuilder b(op);
      SmallVector<float> signs = randomSigns(headDim, seed);
      // The transform is in f32; the rotated operands are cast back to the
      // input type (exact for f32, one rounding for f16 and bf16).
      for (OpOperand *operand : {&op.getQueryMutable(), &op.getKeyMutable()}) {
        Value x = operand->get();
        Value rotated = buildRandomizedHadamard(b, op.getLoc(), x, signs);
        if (!elt.isF32()) {
          auto type = cast<RankedTensorType>(rotated.getType());
          Value init = tensor::EmptyOp::create(
              b, op.getLoc(), tensor::getMixedSizes(b, op.getLoc(), rotated),
              elt);
          AffineMap id = b.getMultiDimIdentityMap(type.getRank());
          rotated =
              linalg::GenericOp::create(
                  b, op.getLoc(), init.getType(), ValueRange{rotated},
                  ValueRange{init}, ArrayRef<AffineMap>{id, id},
                  SmallVector<utils::IteratorType>(type.getRank(),
                                                   utils::IteratorType::parallel),
                  [&](OpBuilder &nb, Location l, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, l,
                        Value(arith::TruncFOp::create(nb, l, elt, args[0])));
                  })
                  .getResult(0);
        }
        if (rotated.getType() != x.getType())
          rotated = tensor::CastOp::create(b, op.getLoc(), x.getType(), rotated);
        operand->set(rotated);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
