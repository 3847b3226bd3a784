//===- Passes.td - fa dialect passes -----------------------*- tablegen -*-===//
#ifndef FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_TD
#define FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FADecomposeAttentionPass : Pass<"fa-decompose-attention"> {
  let summary = "Lower fa.attention to linalg/tensor ops that materialize the scores (the reference)";
  let description = [{
    The reference lowering, and the oracle every other lowering is tested against. It
    materializes the full score matrix, so it is for testing and CPU execution, not speed:

    ```
    S[b,h,i,j] = scale * sum_d Q[b,h,i,d] * K[b,h/r,j,d]     (f32, r = Hq / Hkv)
    S = softcap * tanh(S / softcap)                           (if softcap)
    S = S + mask, or S = mask ? S : -inf                      (if mask)
    S = -inf outside the causal / sliding window               (if causal or window)
    M[b,h,i]   = max_j S                    Z = (M == -inf) ? 0 : M
    E[b,h,i,j] = exp(S - Z)                 L[b,h,i] = sum_j E
    O[b,h,i,e] = sum_j E * V[b,h/r,j,e] / L  (0 when L = 0: fully masked row)
    lse        = Z + log(L)                  (-inf when L = 0)
    ```

    Before:
    ```mlir
    %o = fa.attention %q, %k, %v {causal} : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>,
        tensor<1x2x16x32xf16> -> tensor<1x4x16x32xf16>
    ```
    After: `tensor.empty` + `linalg.fill` + `linalg.generic` ops for the steps above, each
    with f32 accumulators; K and V are read at head `h floordiv r` (never copied), the mask
    is read through broadcasting indexing maps, and the result is truncated to the output
    type once.

    With f8E4M3FN inputs the scores are multiplied by `q_descale * k_descale` and the output
    by `v_descale`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_TD
