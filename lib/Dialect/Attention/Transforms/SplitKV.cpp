//===- SplitKV.cpp - GQA packing and split-KV for decoding ----------------===//
//
// fa-split-kv{splits}: the decoding rewrite of docs/Inference.md as IR (the
// Python package applies the same one to the call, choosing the split at run
// time). A query head group becomes the rows of one head (GQA packing), and
// the keys are cut into `splits` equal chunks that run as more heads; a
// combine merges the chunks' (out, lse) by lse:
//
//   q  [B, Hq, Nq, D]  -> [B, Hkv, G*Nq, D] -> repeated: [B, Hkv*S, G*Nq, D]
//   k  [B, Hkv, Nk, D] -> [B, Hkv*S, Nk/S, D]        (v likewise)
//   o_s, lse_s = fa.attention (no causal mask, with lse)
//   m = max_s lse_s,  w_s = exp(lse_s - m),  out = sum_s w_s o_s / sum_s w_s,
//   lse = m + log(sum_s w_s)
//
// Exact in real arithmetic when no mask depends on the row: no mask operand,
// modifier region or window, causal only with one query row.
//
//===----------------------------------------------------------------------===//
#include "fa/Dialect/Attention/IR/AttentionOps.h"
#include "fa/Dialect/Attention/Transforms/Passes.h"
#include "fa/Dialect/Attention/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FASPLITKVPASS
#include "fa/Dialect/Attention/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Reshapes `v` to `shape` through the groups of `expand` (to the finer
/// shape) then `collapse` (to `shape`).
Value regroup(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> fine,
              ArrayRef<ReassociationIndices> expand,
              ArrayRef<int64_t> shape, ArrayRef<ReassociationIndices> collapse) {
  Type elt = cast<RankedTensorType>(v.getType()).getElementType();
  Value fineValue = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(fine, elt), v, expand);
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, elt), fineValue, collapse);
}

/// A linalg.generic over `dims` loops whose inputs and init use `maps`.
Value generic(OpBuilder &b, Location loc, Value init, ValueRange inputs,
              ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, ValueRange{init}, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args));
             })
      .getResult(0);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elt,
             double value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
  Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, value));
  return linalg::FillOp::create(b, loc, c, empty).getResult(0);
}
} // namespace

/// Why `op` cannot be rewritten with `splits` chunks, or "".
static std::string checkSplitKV(AttentionOp op, int64_t splits) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  if (splits < 1)
    return "splits must be >= 1";
  if (!q.hasStaticShape() || !k.hasStaticShape() || !v.hasStaticShape())
    return "needs static shapes";
  if (op.getMask() || op.hasModifiers() || op.getDiagonal() ||
      op.getQDescale())
    return "a mask, modifier region, diagonal or descale depends on the row "
           "or is not carried over";
  // Chunks of key dim 2 would be chunks of pages, and kv_lens would need
  // per-chunk lengths: neither is carried over.
  if (op.hasKVLens() || op.isPaged())
    return "kv_lens and pages are not carried over";
  // Chunks of the packed key dim would cut across sequences.
  if (op.isVarlen())
    return "varlen sequences are not carried over";
  bool causalLike = op.getCausal();
  if (DenseI64ArrayAttr w = op.getWindowAttr()) {
    if (w.size() != 2 || w[0] >= 0 || w[1] != 0)
      return "a window depends on the row";
    causalLike = true;
  }
  if (causalLike && q.getDimSize(2) != 1)
    return "causal with more than one query row depends on the row";
  if (k.getDimSize(2) % splits != 0)
    return "the key length is not a multiple of splits";
  return "";
}

FailureOr<SmallVector<Value>>
mlir::fa::splitKVAttention(RewriterBase &rewriter, AttentionOp op,
                           int64_t splits) {
  if (!checkSplitKV(op, splits).empty())
    return failure();
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  auto qTy = cast<RankedTensorType>(op.getQuery().getType());
  auto kTy = cast<RankedTensorType>(op.getKey().getType());
  auto vTy = cast<RankedTensorType>(op.getValue().getType());
  auto outTy = cast<RankedTensorType>(op.getResult(0).getType());
  int64_t B = qTy.getDimSize(0), Hq = qTy.getDimSize(1), Nq = qTy.getDimSize(2),
          D = qTy.getDimSize(3), Hkv = kTy.getDimSize(1),
          Nk = kTy.getDimSize(2), Dv = vTy.getDimSize(3);
  int64_t G = Hq / Hkv, R = G * Nq, S = splits, C = Nk / S;
  Type qElt = qTy.getElementType(), outElt = outTy.getElementType();
  Type f32 = rewriter.getF32Type();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;

  // The packed, split operands.
  Value q = regroup(b, loc, op.getQuery(), {B, Hkv, G, Nq, D},
                    {{0}, {1, 2}, {3}, {4}}, {B, Hkv, R, D},
                    {{0}, {1}, {2, 3}, {4}});
  if (S > 1) {
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{B, Hkv, S, R, D},
                                         qElt);
    Value rep = linalg::BroadcastOp::create(b, loc, q, init, ArrayRef<int64_t>{2})
                    .getResult()[0];
    q = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({B, Hkv * S, R, D}, qElt), rep,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  }
  auto chunks = [&](Value t, int64_t d) {
    return regroup(b, loc, t, {B, Hkv, S, C, d}, {{0}, {1}, {2, 3}, {4}},
                   {B, Hkv * S, C, d}, {{0}, {1, 2}, {3}, {4}});
  };
  Value k = chunks(op.getKey(), D), v = chunks(op.getValue(), Dv);
  bool wantLse = op.getNumResults() == 2 || S > 1;
  SmallVector<Type> types = {RankedTensorType::get({B, Hkv * S, R, Dv}, outElt)};
  if (wantLse)
    types.push_back(RankedTensorType::get({B, Hkv * S, R}, f32));
  auto packed = AttentionOp::create(
      b, loc, types, q, k, v, Value(), Value(), Value(), Value(), Value(),
      /*kv_lens=*/Value(), /*pages=*/Value(), /*cu_seqlens_q=*/Value(),
      /*cu_seqlens_k=*/Value(), op.getScaleAttr(), /*causal=*/false,
      DenseI64ArrayAttr(),
      op.getSoftcapAttr(), DenseI64ArrayAttr(), /*modifiersCount=*/0);
  Value out = packed.getResult(0);
  Value lse = wantLse ? packed.getResult(1) : Value();

  if (S > 1) {
    // [B, Hkv, S, R, Dv] and [B, Hkv, S, R]: the chunks on their own dim.
    Value parts = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({B, Hkv, S, R, Dv}, outElt), out,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    Value lses = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({B, Hkv, S, R}, f32), lse,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
    auto id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    auto id5 = AffineMap::getMultiDimIdentityMap(5, ctx);
    auto rows4 = AffineMap::getMultiDimIdentityMap(4, ctx).dropResult(2);
    // m = max_s lse_s (0 where every chunk is empty: -inf), over (b, h, s, r).
    Value m = generic(b, loc, filled(b, loc, {B, Hkv, R}, f32, -INFINITY),
                      {lses}, {id4, rows4}, {kPar, kPar, kRed, kPar},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(nb, l, a[0], a[1]);
                      });
    auto id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    Value zero = filled(b, loc, {B, Hkv, R}, f32, 0.0);
    m = generic(b, loc, zero, {m}, {id3, id3}, {kPar, kPar, kPar},
                [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                  Value ninf = arith::ConstantOp::create(
                      nb, l, nb.getF32FloatAttr(-INFINITY));
                  Value isInf = arith::CmpFOp::create(
                      nb, l, arith::CmpFPredicate::OEQ, a[0], ninf);
                  return arith::SelectOp::create(nb, l, isInf, a[1], a[0]);
                });
    // den = sum_s exp(lse_s - m).
    Value den = generic(b, loc, zero, {lses, m}, {id4, rows4, rows4},
                        {kPar, kPar, kRed, kPar},
                        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                          Value e = math::ExpOp::create(nb, l, d);
                          return arith::AddFOp::create(nb, l, a[2], e);
                        });
    // acc = sum_s exp(lse_s - m) o_s, over (b, h, s, r, d).
    auto rowsOf5 = AffineMap::get(5, 0,
                                  {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                                   getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)},
                                  ctx);
    auto rowOf5 = AffineMap::get(5, 0,
                                 {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                                  getAffineDimExpr(3, ctx)},
                                 ctx);
    auto outOf5 = id5.dropResult(2);
    Value acc = generic(
        b, loc, filled(b, loc, {B, Hkv, R, Dv}, f32, 0.0), {parts, lses, m},
        {id5, rowsOf5, rowOf5, outOf5}, {kPar, kPar, kRed, kPar, kPar},
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value o = a[0].getType().isF32()
                        ? a[0]
                        : Value(arith::ExtFOp::create(nb, l, nb.getF32Type(),
                                                      a[0]));
          Value e = math::ExpOp::create(
              nb, l, arith::SubFOp::create(nb, l, a[1], a[2]));
          return arith::AddFOp::create(
              nb, l, a[3], arith::MulFOp::create(nb, l, e, o));
        });
    // out = acc / den (0 where den = 0), lse = m + log(den).
    auto row4 = id4.dropResult(3);
    out = generic(b, loc, tensor::EmptyOp::create(b, loc, {B, Hkv, R, Dv}, outElt),
                  {acc, den}, {id4, row4, id4}, {kPar, kPar, kPar, kPar},
                  [outElt](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    Value zeroF = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
                    Value empty = arith::CmpFOp::create(
                        nb, l, arith::CmpFPredicate::OEQ, a[1], zeroF);
                    Value q = arith::DivFOp::create(nb, l, a[0], a[1]);
                    Value r = arith::SelectOp::create(nb, l, empty, zeroF, q);
                    return outElt.isF32() ? r
                                          : Value(arith::TruncFOp::create(
                                                nb, l, outElt, r));
                  });
    lse = generic(b, loc, tensor::EmptyOp::create(b, loc, {B, Hkv, R}, f32),
                  {m, den}, {id3, id3, id3}, {kPar, kPar, kPar},
                  [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    return arith::AddFOp::create(
                        nb, l, a[0], math::LogOp::create(nb, l, a[1]));
                  });
  }
  // Back to the op's layout: rows (g, i) -> head h = hkv * G + g, row i.
  SmallVector<Value> results = {
      regroup(b, loc, out, {B, Hkv, G, Nq, Dv}, {{0}, {1}, {2, 3}, {4}},
              {B, Hq, Nq, Dv}, {{0}, {1, 2}, {3}, {4}})};
  if (op.getNumResults() == 2)
    results.push_back(regroup(b, loc, lse, {B, Hkv, G, Nq},
                              {{0}, {1}, {2, 3}}, {B, Hq, Nq},
                              {{0}, {1, 2}, {3}}));
  return results;
}

namespace {
struct FASplitKVPass : public fa::impl::FASplitKVPassBase<FASplitKVPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      std::string why = checkSplitKV(op, splits);
      if (!why.empty()) {
        // Not every attention decodes: leave it, and say why when asked to.
        if (splits < 1) {
          op.emitOpError("fa-split-kv: ") << why;
          return signalPassFailure();
        }
        continue;
      }
      FailureOr<SmallVector<Value>> results =
          splitKVAttention(rewriter, op, splits);
      if (failed(results))
        return signalPassFailure();
      rewriter.replaceOp(op, *results);
    }
  }
};
} // namespace
