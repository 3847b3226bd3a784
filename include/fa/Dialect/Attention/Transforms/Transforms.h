//===- Transforms.h - reusable rewrites of fa ops ---------------*- C++ -*-===//
//
// The logic of the fa passes, as free functions and pattern sets that
// pipelines, transform ops and other compilers can call directly.
//
//===----------------------------------------------------------------------===//
#ifndef FA_DIALECT_ATTENTION_TRANSFORMS_TRANSFORMS_H
#define FA_DIALECT_ATTENTION_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

namespace mlir::fa {
class AttentionOp;

/// Replaces `op` by linalg/tensor ops that materialize the score matrix (the
/// reference lowering). Returns the replacement values (out, and lse when the
/// op has it).
FailureOr<SmallVector<Value>> decomposeAttention(RewriterBase &rewriter,
                                                 AttentionOp op);

/// Adds the pattern that applies `decomposeAttention` to every fa.attention.
void populateDecomposeAttentionPatterns(RewritePatternSet &patterns);

} // namespace mlir::fa

#endif // FA_DIALECT_ATTENTION_TRANSFORMS_TRANSFORMS_H
