//===- AttentionDialect.td - the fa dialect ----------------*- tablegen -*-===//
#ifndef FA_DIALECT_ATTENTION_IR_ATTENTIONDIALECT_TD
#define FA_DIALECT_ATTENTION_IR_ATTENTIONDIALECT_TD

include "mlir/IR/OpBase.td"

def FA_Dialect : Dialect {
  let name = "fa";
  let cppNamespace = "::mlir::fa";
  let summary = "Scaled dot-product attention as one op, and the tiled forms it is compiled through";
  let description = [{
    The `fa` dialect states scaled dot-product attention precisely (`fa.attention`)
    so that passes can rewrite it into the FlashAttention algorithm: tiled loops with
    online-softmax accumulators, and from there into GPU code.
  }];
  // Tiling (TilingInterface) creates tensor slices and affine/arith index math.
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

class FA_Op<string mnemonic, list<Trait> traits = []>
    : Op<FA_Dialect, mnemonic, traits>;

#endif // FA_DIALECT_ATTENTION_IR_ATTENTIONDIALECT_TD
