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
    with f32 accumulators; K and V are read at head `h floordiv r` (never copied; paged
    pools are first gathered into `[B, Hkv, Ncap, D]` through the clamped page table, and
    kv_lens sets `S = -inf` for keys `j >= L_b`, with the diagonal `L_b - Nq`), the mask
    is read through broadcasting indexing maps, and the result is truncated to the output
    type once.

    With f8E4M3FN inputs the scores are multiplied by `q_descale * k_descale` and the output
    by `v_descale` (per tensor); per-head and per-block descale tensors are read per score
    (`qd[b, h(, i / bq)] * kd[b, g(, j / bkv)]`) and per P V term (`vd[b, g(, j / bkv)]`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}


def FADecomposeAttentionGradPass : Pass<"fa-decompose-attention-grad"> {
  let summary = "Lower fa.attention_grad to linalg/tensor ops that materialize the scores (the reference backward)";
  let description = [{
    The reference lowering of the backward pass, for testing and CPU execution. With
    `r = Hq / Hkv`, all in f32:

    ```
    S[b,h,i,j]  = sum_d Q[b,h,i,d] * K[b,h/r,j,d]
    P[b,h,i,j]  = exp(score(S) - lse[b,h,i])   score: scale, softcap, -inf outside the band;
                                                P = 0 where lse = -inf (fully masked row)
    dP[b,h,i,j] = sum_e dO[b,h,i,e] * V[b,h/r,j,e]
    delta[b,h,i] = sum_e dO[b,h,i,e] * O[b,h,i,e]
    dS          = scale * P * (dP - delta) * (softcap ? 1 - tanh^2(scale * S / softcap) : 1)
    dQ[b,h,i,d] = sum_j dS * K[b,h/r,j,d]
    dK[b,g,j,d] = sum_{h in group g} sum_i dS[b,h,i,j] * Q[b,h,i,d]
    dV[b,g,j,e] = sum_{h in group g} sum_i P[b,h,i,j] * dO[b,h,i,e]
    ```

    The per-query-head dK and dV are `[B, Hq, Nk, D]` tensors, expanded to
    `[B, Hkv, r, Nk, D]` and reduced over `r` (with dynamic head counts, read at
    head `g r + hr` over an `r` loop instead). Results are rounded to the types of
    q, k and v once. B, H and N may be dynamic (tensor.dim); head dims are static
    (the verifier).

    Before:
    ```mlir
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal}
        : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>,
          tensor<1x4x16x32xf16>, tensor<1x4x16xf32>, tensor<1x4x16x32xf16>
        -> tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
    ```
    After: `linalg.fill` + `linalg.generic` ops for the steps above, one
    `tensor.expand_shape` per grouped gradient, three truncating generics.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}


def FADifferentiateScoreModPass : Pass<"fa-differentiate-score-mod"> {
  let summary = "Build the score_mod_grad region of fa.attention_grad from its score_mod (forward-mode differentiation)";
  let description = [{
    For every fa.attention_grad with a `score_mod` and no `score_mod_grad`, builds
    `score_mod_grad`: `(s, b, h, i, j) -> (t, dt/ds)`, by forward-mode
    differentiation of score_mod with respect to `%s` (its tangent is 1, that of
    `b, h, i, j` and of every value captured from above is 0). Each op is cloned;
    an op that depends on `%s` is followed by the ops of its tangent, an op that
    does not gets none (so the derivative of `s + bias(i, j)` is the constant 1).
    Differentiated: `arith.addf, subf, mulf, divf, negf, maximumf, minimumf,
    maxnumf, minnumf` (the chosen operand's tangent), `select` (the tangent of the
    taken branch), `extf, truncf` (the tangent cast alike), `math.fma, tanh, exp,
    exp2, expm1, log, log2, log1p, sqrt, rsqrt, absf, powf, sin, cos, erf`, and
    `math.floor, ceil, round, roundeven, trunc` (tangent 0). Ops without a float
    result (`cmpf, cmpi`, integer and index arithmetic, `fptosi`, `index_cast`)
    and ops whose operands do not depend on `%s` (`arith.constant`, `sitofp`,
    `tensor.extract` of a captured tensor) have no tangent. Any other op that
    depends on `%s` (or an op with regions that does) gets a diagnostic naming
    it and the op is left unchanged. A score_mod_grad already there (written by
    hand: a custom derivative) is left alone. `fa-to-cpu` and `fa-to-ptx` run it
    first; the lowerings of fa.attention_grad read score_mod_grad only.

    Before (softcap written as a score_mod):
    ```mlir
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %c = arith.constant 2.0e+01 : f32
      %x = arith.divf %s, %c : f32
      %th = math.tanh %x : f32
      %t = arith.mulf %c, %th : f32
      fa.yield %t : f32
    } : ...
    ```
    After (score_mod unchanged, then):
    ```mlir
    score_mod_grad {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %one = arith.constant 1.0 : f32
      %c = arith.constant 2.0e+01 : f32
      %x = arith.divf %s, %c : f32
      %dx = arith.divf %one, %c : f32          // d(s / c) = ds / c
      %th = math.tanh %x : f32
      %sq = arith.mulf %th, %th : f32
      %d1 = arith.subf %one, %sq : f32
      %dth = arith.mulf %d1, %dx : f32         // (1 - tanh^2) dx
      %t = arith.mulf %c, %th : f32
      %dt = arith.mulf %c, %dth : f32
      fa.yield %t, %dt : f32, f32
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"
  ];
}


def FATileAttentionGradPass : Pass<"fa-tile-attention-grad"> {
  let summary = "Rewrite fa.attention_grad into FlashAttention-2's tiled backward (S and P recomputed per tile)";
  let description = [{
    The tiled form of the backward, run by `fa-to-cpu` (not by `reference=1`). B, H
    and N static or dynamic (loop bounds from tensor.dim), head dims static:

    ```
    delta[b,h,i] = sum_e dO * O                                   (first, [B, Hq, Nq])
    dQacc = 0 : [B, Hq, Nq, D] f32
    scf.for b, scf.for g (K/V head), scf.for kb (key block of block-kv keys):
      k_t, v_t = K, V[b, g, kb * block-kv : + min(block-kv, Nk - kb * block-kv)]
      dk_t, dv_t = 0 (f32)
      scf.for hr < Hq / Hkv, scf.for qb in [first, last query block seeing kb):
        S = q_t k_t^T; P = exp(score(S) - lse_t) (0 outside the band / on dead rows)
        dv_t += P^T dO_t; dP = dO_t v_t^T; dS = scale * P * (dP - delta_t) * softcap'
        dk_t += dS^T q_t; dQacc[b, h, rows] += dS k_t
      dK, dV[b, g, block] = dk_t, dv_t rounded to the input type
    dQ = dQacc rounded
    ```

    S, P, dP and dS exist only as `block-q x block-kv` tiles. Query blocks wholly
    outside the causal / window band of a key block are never visited (the loop bounds
    come from the band: rows `[col0 - diag - right, col0 + cols - diag + left)`); the
    visited tiles still apply the element mask. The loops are sequential (`scf.for`,
    dQ carried as a loop value): a parallel form needs dQ's accumulation split from
    dK/dV's (atomics or a second pass, as on the GPU).
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"64",
           "Keys per tile (one key block)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}


def FATileAttentionPass : Pass<"fa-tile-attention"> {
  let summary = "Rewrite fa.attention into tiled loops with online-softmax accumulators (FlashAttention)";
  let description = [{
    The FlashAttention rewrite, and the target-independent form every GPU lowering
    consumes. Each `fa.attention` becomes

    * an `scf.forall` over (batch, query head, query block of `block-q` rows): the
      loops a GPU lowering maps to thread blocks;
    * inside it, `scf.for` loops over key/value blocks of `block-kv` keys that carry
      the running row max, row sum and f32 output accumulator, each step one
      `fa.online_attention` on tiles;
    * after the loops, `out = acc / sum` once (deferred normalization) and
      `lse = ln(2) * (max + log2(sum))`, written with `tensor.parallel_insert_slice`.

    Dead work is skipped, not masked: for causal and window attention
    `fa.kv_block_range` gives, per query block, the key blocks that may be visible
    and the ones fully visible. The loop visits only the former, in three
    `scf.for`s: the straddling blocks before the fully visible ones (with
    `positions(...)`, so they apply element masks), the fully visible ones (no
    positional mask), and the straddling ones after them.

    Tails are never read out of bounds: the last query and key blocks are sliced to
    `min(block, N - offset)` rows, so a partial block is a smaller tile rather than a
    padded one. GQA reads key/value head `h / (Hq / Hkv)`; nothing is replicated.

    FP8 descales: per tensor, the step's `descale(qd * kd)` is computed once before the
    forall and `vd` multiplies the output in the epilogue; per head, the same once per
    forall iteration from `qd[b, h]`, `kd[b, g]`, `vd[b, g]`. Per block (`descale_block =
    [bq, bkv]`), the tiles are `gcd(block-q, bq) x gcd(block-kv, bkv)` so that each lies in
    one descale block, and each step gets the scalars
    `descale(qd[b, h, row0 / bq] * kd[b, g, col0 / bkv], vd[b, g, col0 / bkv])` (the second,
    the value descale: `acc' = a * acc + vd * P V`); docs/FP8.md.

    Modifier regions: every step gets verbatim copies of the op's `score_mod` and
    `mask_mod` regions and `coords(%b, %h, %row0, %col0)` (the forall's batch and
    head, the block's first row and first key), so it evaluates them at absolute
    positions; the loops are the same as without regions (docs/TiledForm.md).
    With `mask-mod-sparsity`, each step of an op with a mask_mod sits in
    `scf.if (some key of the block visible) { scf.if (all visible) { step
    without mask_mod } else { step } } else { state unchanged }`, the two
    conditions from classifyMaskModBlock (AttentionUtils.h): interval bounds of
    the region over the block when it is index arithmetic and comparisons, else
    the region evaluated over the block at run time.

    kv_lens and pages: each forall iteration reads its sequence's `L_b` (clamped into
    `[0, Ncap]`), which replaces the key count and gives the default diagonal `L_b - Nq`;
    with pages the key steps are `gcd(block-kv, S)` keys, each sliced from the pool page
    the table names (clamped into `[0, P - 1]`). The exact form is in docs/TiledForm.md.

    Before:
    ```mlir
    %o = fa.attention %q, %k, %v {causal} : tensor<2x8x1000x64xf16>,
        tensor<2x2x1000x64xf16>, tensor<2x2x1000x64xf16> -> tensor<2x8x1000x64xf16>
    ```
    After (abridged, block-q = block-kv = 64):
    ```mlir
    %r = scf.forall (%b, %h, %qb) in (2, 8, 16) shared_outs(%o = %init) -> (tensor<2x8x1000x64xf16>) {
      %q_t = tensor.extract_slice %q[%b, %h, %row0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
      %kvh = arith.divui %h, %c4 : index
      %begin, %fbegin, %fend, %end = fa.kv_block_range rows [%row0, %row1) keys %c1000
          diagonal %c0 {block_kv = 64 : i64, window = array<i64: -1, 0>}
      %s1:3 = scf.for %kb = %begin to %fbegin step %c1 iter_args(...) {   // straddling
        ... fa.online_attention %q_t, %k_t, %v_t into %m, %l, %acc positions(%row0, %col0, %c0) ...
      }
      %s2:3 = scf.for %kb = %fbegin to %fend ...                          // fully visible
      %s3:3 = scf.for %kb = %fend to %end ...                             // straddling
      %o_t = linalg.generic ... acc / sum, truncf ...
      scf.forall.in_parallel { tensor.parallel_insert_slice %o_t into %o[...] }
    }
    ```
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per tile (one thread block on a GPU)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"64",
           "Keys per step of the online-softmax loop">,
    Option<"maskModSparsity", "mask-mod-sparsity", "bool", /*default=*/"false",
           "Guard each step of an op with a mask_mod by the block's "
           "classification: skip blocks it hides, drop it where it hides "
           "nothing (fa-to-cpu turns it on)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FADecomposeOnlineAttentionPass : Pass<"fa-decompose-online-attention"> {
  let summary = "Lower the tile ops fa.online_attention and fa.kv_block_range to linalg/arith";
  let description = [{
    The CPU (and generic) lowering of the tiled form. `fa.kv_block_range` becomes index
    arithmetic; `fa.online_attention` becomes linalg ops on its tiles:

    ```
    T  = Q K^T (f32), then scale (with log2(e) folded in when no softcap or additive
         mask sits in between), softcap, masks, -inf outside the window
    M' = max(M, rowmax T)          Z = M' or 0 when M' = -inf
    P  = exp2(T - Z)               A = exp2(M - Z)
    L' = A * L + rowsum P          ACC' = A * ACC + P V
    ```

    Before:
    ```mlir
    %m1, %l1, %a1 = fa.online_attention %q, %k, %v into %m0, %l0, %a0 {scale = 0.125 : f32}
        : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
    ```
    After: `linalg.generic` ops computing the steps above on the tiles.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FAExpandF8E4M3FNExtFPass : Pass<"fa-expand-f8e4m3fn-extf"> {
  let summary = "Expand arith.extf from f8E4M3FN into integer ops on its bits";
  let description = [{
    LLVM has no fp8 type and upstream `arith-expand` has no E4M3 patterns, so CPU
    code cannot convert an f8E4M3FN value directly. This pass rebuilds it exactly:
    the 7 magnitude bits shifted to f32's exponent/mantissa position and scaled by
    2^120 (the bias difference), the sign bit moved to bit 31, and the NaN encoding
    (0x7F/0xFF) selected to NaN. Subnormals are exact. Scalars and vectors.

    Before: `%f = arith.extf %x : f8E4M3FN to f32`
    After: `arith.bitcast` to i8, `arith.extui`, `andi`/`shli`/`ori`, `bitcast` to
    f32, `mulf` by 2^120, `cmpi` + `select` for NaN.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FAQuantizeFP8Pass : Pass<"fa-quantize-fp8"> {
  let summary = "Rewrite f16/bf16/f32 fa.attention into the two-pass FP8 form (scales, E4M3 quantization, FP8 fa.attention)";
  let description = [{
    FlashAttention-3's FP8 scheme as IR. For each of Q, K and V (`[B, H, N, D]`):

    ```
    amax  = max |x| over each group               granularity=tensor: the whole tensor
                                                  granularity=head:   each (b, h)
                                                  granularity=block:  each (b, h) and block of
                                                                      block-q (Q) / block-kv (K, V) rows
    delta = max(amax, 2^-117) / 448               (448: E4M3's largest finite value; the floor
                                                   keeps delta a normal f32 for all-zero groups)
    x8    = truncf(clamp(x / delta, -448, 448)) : f8E4M3FN   (round to nearest even)
    ```

    then `fa.attention %q8, %k8, %v8 descale(%dq, %dk, %dv)` with the deltas as descales
    (f32 scalars, `[B, H]` or `[B, H, NB]` tensors with `descale_block`), the same mask,
    diagonal, attributes, output type and lse. The amax is two linalg reductions (rows, then
    groups; a block group pads the row maxima with zeros to `NB * block` rows and expands
    them to `[B, H, NB, block]`); the quantization is one `linalg.generic`.

    `incoherent=true` first multiplies Q and K along D by the same random orthogonal matrix
    `M = diag(s) H_D / sqrt(D)` (`H_D` the Sylvester Hadamard matrix, `s` random +-1 signs from
    `seed`, the same for Q and K), so `(Q M) (K M)^T = Q K^T` in exact arithmetic while an
    outlier of one coordinate is spread over all D. It is a fast Walsh-Hadamard transform in
    f32: one elementwise multiply by `s / sqrt(D)`, then `log2(D)` butterfly stages, each a
    `tensor.expand_shape` to `[..., D / 2h, 2, h]`, two slices and one `linalg.generic`
    (`(a + b, a - b)`). D must be a power of two (else a diagnostic). V is not transformed.

    An fa.attention with f8E4M3FN inputs already is left as it is, with a remark; one
    with kv_lens or pages is rejected with a diagnostic (fp8 descales are not supported
    with them yet).

    Before:
    ```mlir
    %o = fa.attention %q, %k, %v {causal} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
        tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
    ```
    After (`granularity=block block-q=128 block-kv=64`, abridged):
    ```mlir
    %rq = linalg.generic {max |q|, reduction over D} -> tensor<1x2x256xf32>
    %aq = tensor.expand_shape (tensor.pad %rq) -> tensor<1x2x2x128xf32>
    %dq = linalg.generic {max over rows, then max(amax, 2^-117) / 448} -> tensor<1x2x2xf32>
    %q8 = linalg.generic {truncf(clamp(q / %dq[b, h, i floordiv 128], -448, 448))}
        -> tensor<1x2x256x64xf8E4M3FN>
    ... the same for K and V with blocks of 64 rows ...
    %o = fa.attention %q8, %k8, %v8 descale(%dq, %dk, %dv : tensor<1x2x2xf32>,
        tensor<1x2x4xf32>, tensor<1x2x4xf32>) {causal, descale_block = array<i64: 128, 64>}
        : ... -> tensor<1x2x256x64xf16>
    ```
    The CPU pipeline runs the result (`fa-opt --fa-quantize-fp8=... --fa-to-cpu`); its
    `fa-expand-f8e4m3fn-truncf` lowers the truncation.
  }];
  let options = [
    Option<"granularity", "granularity", "std::string", /*default=*/"\"tensor\"",
           "scale groups: tensor, head (each batch and head) or block (each block of rows)">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"128",
           "query rows per scale with granularity=block">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"128",
           "key/value rows per scale with granularity=block">,
    Option<"incoherent", "incoherent", "bool", /*default=*/"false",
           "multiply Q and K by a random Hadamard transform before quantizing">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "seed of the random signs of incoherent processing">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FARotateQKPass : Pass<"fa-rotate-qk"> {
  let summary = "Multiply Q and K of fa.attention by one random Hadamard transform (incoherent processing alone)";
  let description = [{
    The rotation of `fa-quantize-fp8{incoherent=true}` without the quantization: query and
    key of every f16/bf16/f32 fa.attention are multiplied along D by
    `M = diag(s) H_D / sqrt(D)` (random signs `s` from `seed`, the same for both), as a fast
    Walsh-Hadamard transform in f32 (one elementwise multiply, then `log2(D)` butterfly
    stages, each a `tensor.expand_shape` to `[..., D / 2h, 2, h]` and one `linalg.generic`
    computing `(a + b, a - b)`), cast back to the input type. `M` is orthogonal, so
    `(Q M)(K M)^T = Q K^T` and the attention is unchanged up to f32 rounding (f16/bf16 inputs
    add one rounding of the rotated values). D must be a power of two, else a diagnostic;
    fp8 inputs are left alone with a remark. It exists to test and measure the transform
    (test/Integration/CPU/fp8-hadamard.test).

    Before: `%o = fa.attention %q, %k, %v : ...`
    After:
    ```mlir
    %qs = linalg.generic {q * s[d] / sqrt(D)} -> tensor<...xf32>
    %e  = tensor.expand_shape %qs [[0], [1], [2], [3, 4, 5]] : ... into tensor<1x2x16x32x2x1xf32>
    %lo = tensor.extract_slice %e[0, 0, 0, 0, 0, 0] [1, 2, 16, 32, 1, 1] ...
    %hi = tensor.extract_slice %e[0, 0, 0, 0, 1, 0] [1, 2, 16, 32, 1, 1] ...
    %st = linalg.generic {index(4) == 0 ? lo + hi : lo - hi}
    %q1 = tensor.collapse_shape %st ...           // ... log2(D) stages, the same for K
    %o = fa.attention %q1, %k1, %v : ...
    ```
  }];
  let options = [
    Option<"seed", "seed", "uint64_t", /*default=*/"0", "seed of the random signs">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FAExpandF8E4M3FNTruncFPass : Pass<"fa-expand-f8e4m3fn-truncf"> {
  let summary = "Expand arith.truncf to f8E4M3FN into integer ops on the bits (RNE, saturating)";
  let description = [{
    The inverse of `fa-expand-f8e4m3fn-extf`, for the CPU: LLVM has no fp8 type and
    upstream `arith-expand` has no E4M3 patterns (`convert-to-llvm` leaves the truncf).
    Rounds f32 (f16 and bf16 are extended first, exactly) to the nearest E4M3FN value,
    ties to even, subnormals included; magnitudes above 448 (infinities too) saturate to
    +-448, like sm_90's `cvt.rn.satfinite`; NaN gives NaN (0x7F | sign). MLIR's constant
    folder does not fold an inexact or overflowing truncf to f8E4M3FN, so the expansion is
    what runs; `fa-quantize-fp8` clamps to +-448 before truncating in any case.

    Before: `%y = arith.truncf %x : f32 to f8E4M3FN`
    After: `arith.bitcast` to i32, the rounding on the bits (`andi`, `shrui`, `addi`,
    `minui`), the subnormal case through `x * 2^9 + 2^23 - 2^23`, `select`s, `trunci` to
    i8 and `arith.bitcast` to f8E4M3FN.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FARaiseAttentionPass : Pass<"fa-raise-attention"> {
  let summary = "Raise softmax(scale * Q K^T [+ mask]) V written in linalg on tensors into fa.attention";
  let description = [{
    Finds attention as frontends lower it to linalg on tensors (torch-mlir's
    linalg-on-tensors backend, stablehlo-to-linalg) and replaces the final P V
    contraction by `fa.attention`, with reshapes back to its result type; the
    ops that computed the scores and probabilities become dead (the greedy
    driver erases them). Matched, each part proven from the IR:

    * Q K^T and P V: `linalg.matmul`, `linalg.batch_matmul` (with or without
      `indexing_maps`) or a multiply-add `linalg.generic`, 3-D `[B*H, N, D]` or
      4-D `[B, H, N, D]`, accumulating into zero; K^T by `linalg.transpose`, a
      transposing generic or the contraction's maps; batch/head
      `collapse_shape`/`expand_shape` around them;
    * the scale: constant factors or divisors of the scores, of Q or of K
      (none: `scale = 1.0`, set explicitly);
    * masks after the scale: an additive tensor broadcast over batch, heads
      and/or query rows (the `mask(...)` operand) and positional masks (select to -inf, or
      an added 0 / -inf tensor, computed from `linalg.index`), proven equal to
      a causal band `j <= i + d` at every point of the static grid: `causal`,
      with `diagonal(d)` unless `d = Nk - Nq`;
    * softmax over the last dim only: `linalg.softmax`, or max-reduce,
      subtract, exp, sum-reduce and divide (or multiply by the reciprocal),
      float casts allowed anywhere;
    * grouped K/V heads repeated by `repeat_interleave` (broadcast along a new
      dim 2, collapsed into the heads): the un-repeated K and V.

    Anything else is left alone: softmax over another dim or without the max
    subtraction, a mask that is not a function of positions or not after the
    scale, a scale that is not a constant, contractions over the wrong dims.

    Before (f32, torch-mlir style, 3-D matmuls):
    ```mlir
    %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xf32>, tensor<8x64x128xf32>)
        outs(%zero : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
    // ... scale, max, sub, exp, sum, div generics on %s ...
    %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x64xf32>)
        outs(%zero2 : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
    ```
    After:
    ```mlir
    %o4 = fa.attention %q4, %k4, %v4 {scale = 1.250000e-01 : f32}
        : tensor<8x1x128x64xf32>, tensor<8x1x128x64xf32>, tensor<8x1x128x64xf32>
        -> tensor<8x1x128x64xf32>
    %o = tensor.collapse_shape %o4 [[0, 1], [2], [3]]
        : tensor<8x1x128x64xf32> into tensor<8x128x64xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::fa::FADialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}


def FASplitKVPass : Pass<"fa-split-kv"> {
  let summary = "Decoding: pack GQA query heads into rows and split the keys into chunks merged by lse";
  let description = [{
    The decoding rewrite of docs/Inference.md as IR (the Python package applies the same
    one per call, choosing `splits` at run time from the sizes and the SM count). For each
    `fa.attention` whose result does not depend on the query row's position (no mask
    operand, modifier region, window, diagonal, kv_lens or pages; causal only with one
    query row) with
    static shapes and a key length that `splits` divides:

    ```
    q [B, Hq, Nq, D]  -> [B, Hkv, G*Nq, D] (G = Hq / Hkv) -> repeated S times: [B, Hkv*S, G*Nq, D]
    k [B, Hkv, Nk, D] -> [B, Hkv*S, Nk/S, D]              (v likewise; tensor reshapes)
    o_s, lse_s = fa.attention q, k, v  (no causal mask, with lse)
    out = sum_s exp(lse_s - m) o_s / sum_s exp(lse_s - m),  lse = m + log(sum_s exp(lse_s - m))
    ```

    (linalg; `m = max_s lse_s`), reshaped back to `[B, Hq, Nq, Dv]`. `splits=1` packs only.
    Other attentions are left as they are. Before it: `fa-to-cpu` (which tiles the packed
    op) or `fa-to-ptx` / `fa-to-gpu` (the packed op is multi-head attention over
    `Hkv*S` heads; the combine is host code there).
  }];
  let options = [
    Option<"splits", "splits", "int64_t", /*default=*/"1",
           "Key chunks S (>= 1; 1: GQA packing only)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FAOutlineAttentionPass : Pass<"fa-outline-attention", "ModuleOp"> {
  let summary = "Move each tiled attention into a private function of its own and call it";
  let description = [{
    The GPU kernel builders take a function that holds one tiled attention and nothing
    else; a program holds attentions anywhere (several in one function, other ops before
    and after, in functions that others call). This pass moves each tiled attention (the
    `scf.forall` holding `fa.online_attention`, with the index arithmetic and the
    `tensor.empty` it is built from, which are recomputed inside) into a new private
    function `@<function>_attention` (`_1`, `_2`, ... when taken) whose arguments are the
    values the loop reads, in first-use order, and replaces the loop by a `func.call`.
    The rest of the program is untouched. `fa-to-gpu` runs it between
    `fa-tile-attention-for-chip` and `convert-fa-to-nvgpu{host-launch}`.

    Before:
    ```mlir
    func.func @f(%q: tensor<?x?x?x64xf16>, %k: ..., %v: ...) -> tensor<?x?x?x64xf16> {
      %x = arith.addf ...                       // other work
      %o = scf.forall (%b, %h, %t) in (...) shared_outs(%acc = %empty) { ... fa.online_attention ... }
      %y = arith.mulf ...                       // uses %o
    ```
    After:
    ```mlir
    func.func private @f_attention(%q: tensor<?x?x?x64xf16>, %k: ..., %v: ...) -> tensor<?x?x?x64xf16> {
      %empty = tensor.empty(...)  ...  %o = scf.forall ...  return %o
    }
    func.func @f(...) {
      %x = arith.addf ...
      %o = call @f_attention(%q, %k, %v) : (...) -> tensor<?x?x?x64xf16>
      %y = arith.mulf ...
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def FACheckPlacementPass : Pass<"fa-check-placement", "ModuleOp"> {
  let summary = "Diagnose fa ops outside a func.func directly in the module (what the pipelines lower)";
  let description = [{
    The named pipelines work on the module they run on: `fa-to-cpu` bufferizes its
    functions across their boundaries, `fa-to-ptx` puts each kernel's `gpu.module` and
    launch manifest into it. An `fa.attention` (or a tile op) in a function of a nested
    `builtin.module`, or outside any `func.func`, would be left unlowered (exit 0 with
    the op still in the output) or fail later with an unrelated message. This pass
    changes nothing; it reports each such op:

    ```mlir
    module {
      module @inner {
        func.func @attn(...) {
          %o = fa.attention ...   // error: 'fa.attention' op fa-to-cpu: must be in a
                                  // func.func directly in the module the pipeline runs
                                  // on, not in one nested in 'builtin.module' @inner
    ```

    Run the pipeline on the nested module instead
    (`--pass-pipeline='builtin.module(builtin.module(fa-to-cpu))'`). `fa-to-cpu` runs it
    first; `fa-tile-attention-for-chip` and `convert-fa-to-nvgpu` (`fa-to-ptx`) do the
    same check (`checkAttentionPlacement`).
  }];
  let options = [
    Option<"pipeline", "pipeline", "std::string", /*default=*/"\"fa-check-placement\"",
           "The name the diagnostics start with (the pipeline that runs the check)">,
  ];
}

def FADecomposeAggregatedOpsPass : Pass<"fa-decompose-aggregated-ops"> {
  let summary = "Decompose linalg ops that have no loop lowering (linalg.softmax) into the ops they aggregate";
  let description = [{
    `linalg.softmax` (and any other op of `linalg::AggregatedOpInterface`) is not a
    structured op: one-shot bufferization accepts it but `convert-linalg-to-loops` does
    not lower it, so a program that keeps one (a softmax that is not part of an
    attention `fa-raise-attention` replaced) would leave it in `fa-to-cpu`'s output.
    This pass replaces each such op by its decomposition (for softmax: the max and sum
    reductions and the elementwise `linalg.generic`s of upstream's
    `SoftmaxOp::decomposeOperation`), which the loop lowering handles. `fa-to-cpu` and
    the host half of `fa-to-gpu` run it before bufferization.

    Before: `%p = linalg.softmax dimension(2) ins(%s : tensor<8x16x16xf32>) outs(...)`
    After: `linalg.fill` + `linalg.generic` (max), `linalg.generic` (exp(s - max)),
    `linalg.fill` + `linalg.generic` (sum), `linalg.generic` (divide).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FACheckLoweredToLLVMPass : Pass<"fa-check-lowered-to-llvm", "ModuleOp"> {
  let summary = "Diagnose ops a CPU pipeline left outside the llvm dialect";
  let description = [{
    The last pass of `fa-to-cpu`. The conversions before it leave an op they cannot
    lower as it is, so without this check the pipeline would succeed with, say, a
    `tensor.pack` or an op of a dialect it does not lower still in the output, and the
    failure would surface later in `mlir-translate` or a JIT, far from the cause. This
    pass changes nothing; it reports each op that is not in the llvm dialect (modules
    aside), at the op, and fails:

    ```
    error: 'tensor.pack' op fa-to-cpu: could not lower this op to the llvm dialect
    ```

    With `gpu-launches`, `gpu.binary` and `gpu.launch_func` are accepted too: what
    `fa-to-gpu` leaves for `mlir-translate` (the kernels' binaries and their launches),
    which runs the check last as well.
  }];
  let options = [
    Option<"pipeline", "pipeline", "std::string", /*default=*/"\"fa-check-lowered-to-llvm\"",
           "The name the diagnostics start with (the pipeline that runs the check)">,
    Option<"gpuLaunches", "gpu-launches", "bool", /*default=*/"false",
           "Accept gpu.binary and gpu.launch_func (fa-to-gpu's output)">,
  ];
}

def FAReportPipelineErrorPass : Pass<"fa-report-pipeline-error", "ModuleOp"> {
  let summary = "Fail with a message: how a named pipeline reports an invalid option value";
  let description = [{
    A pipeline builder cannot emit diagnostics; when one of its options has a value that
    would make a later pass abort or silently do something else (`fa-to-ptx{O=4}`, a
    `features` string that is not a list of `+`/`-` features), the builder adds only this
    pass, which reports `message` on the module and fails.

    ```
    fa-opt x.mlir --pass-pipeline='builtin.module(fa-to-ptx{O=4})'
    error: fa-to-ptx option 'O=4' must be 0, 1, 2 or 3 (the NVPTX optimization level)
    ```
  }];
  let options = [
    Option<"message", "message", "std::string", /*default=*/"\"invalid pipeline option\"",
           "The error to report">,
  ];
}

#endif // FA_DIALECT_ATTENTION_TRANSFORMS_PASSES_TD
