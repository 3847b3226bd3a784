//===- AttentionOps.td - fa dialect ops --------------------*- tablegen -*-===//
#ifndef FA_DIALECT_ATTENTION_IR_ATTENTIONOPS_TD
#define FA_DIALECT_ATTENTION_IR_ATTENTIONOPS_TD

include "fa/Dialect/Attention/IR/AttentionDialect.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/TilingInterface.td"
include "mlir/IR/BuiltinAttributes.td"

// The optional modifier regions of fa.attention and fa.online_attention: none,
// or two, score_mod then mask_mod, where an absent one is empty (so that IR
// without modifiers, generic form included, is as before). fa.attention_grad
// has none or three (score_mod, mask_mod, score_mod_grad).
defvar FA_ModifierRegions = (region VariadicRegion<MaxSizedRegion<1>>:$modifiers);
defvar FA_ModifierAccessors = [{
    /// The score_mod region, null when the op has none.
    Region *getScoreMod() { return getModifierRegion(0); }
    /// The mask_mod region, null when the op has none.
    Region *getMaskMod() { return getModifierRegion(1); }
    /// Whether the op has a score_mod or a mask_mod.
    bool hasModifiers() { return getScoreMod() || getMaskMod(); }
    Region *getModifierRegion(unsigned index) {
      MutableArrayRef<Region> regions = getModifiers();
      if (regions.size() != 2 || regions[index].empty())
        return nullptr;
      return &regions[index];
    }
}];

// The accessors of fa.attention_grad's FA_ModifierRegions: none, or three,
// score_mod, mask_mod and score_mod_grad (the derivative of score_mod with
// respect to the score), an absent one empty.
defvar FA_GradModifierAccessors = [{
    /// The score_mod region, null when the op has none.
    Region *getScoreMod() { return getModifierRegion(0); }
    /// The mask_mod region, null when the op has none.
    Region *getMaskMod() { return getModifierRegion(1); }
    /// The score_mod_grad region ((s, b, h, i, j) -> (t, dt/ds)), null when
    /// the op has none.
    Region *getScoreModGrad() { return getModifierRegion(2); }
    /// Whether the op has a score_mod, a mask_mod or a score_mod_grad.
    bool hasModifiers() {
      return getScoreMod() || getMaskMod() || getScoreModGrad();
    }
    Region *getModifierRegion(unsigned index) {
      MutableArrayRef<Region> regions = getModifiers();
      if (regions.size() != 3 || regions[index].empty())
        return nullptr;
      return &regions[index];
    }
}];

def FA_InputElementType : AnyTypeOf<[F16, BF16, F32, F8E4M3FN]>;
def FA_OutputElementType : AnyTypeOf<[F16, BF16, F32]>;

def FA_AttentionOp : FA_Op<"attention", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<TilingInterface, [
      "getLoopIteratorTypes", "getIterationDomain", "getTiledImplementation",
      "getResultTilePosition", "generateResultTileValue"]>]> {
  let summary = "scaled dot-product attention over [batch, heads, seq, dim] tensors";
  let description = [{
    Computes, for every batch `b`, query head `h` and query row `i`:

    ```
    s[j]   = scale * dot(query[b, h, i, :], key[b, g, j, :])     g = h / (Hq / Hkv)
    s[j]   = softcap * tanh(s[j] / softcap)                        if softcap is set
    s[j]  += mask[b, h, i, j]                                      additive mask
    s[j]   = -inf where a boolean mask is false, or where j is outside the
             causal / sliding window of row i
    p      = exp(s - max(s)) / sum(exp(s - max(s)))
    out[b, h, i, :] = sum_j p[j] * value[b, g, j, :]
    lse[b, h, i]    = log(sum_j exp(s[j]))                         natural log
    ```

    Operands are `query: tensor<B x Hq x Nq x D x E>`, `key: tensor<B x Hkv x Nk x D x E>`,
    `value: tensor<B x Hkv x Nk x Dv x E>`; the result is
    `out: tensor<B x Hq x Nq x Dv x Eo>`. `E` is f16, bf16, f32 or f8E4M3FN and `Eo` is f16,
    bf16 or f32. B, H and N dims may be dynamic; D and Dv must be static. Hq is a multiple of
    Hkv (grouped-query attention, multi-query when Hkv = 1).

    Attributes:
    * `scale` (f32, default `1/sqrt(D)`) multiplies the scores before everything else.
    * `causal`: query row `i` sees keys `j <= i + diag` where `diag = Nk - Nq` by default
      (bottom-right aligned, so the last query row sees every key, as in decoding with a KV
      cache).
    * `window = array<i64: left, right>`: row `i` sees keys
      `i + diag - left <= j <= i + diag + right`; `-1` means unbounded on that side.
      With `causal`, `right` is 0. Any bound up to INT64_MAX is allowed; the lowerings
      compute with `min(bound, 2^62)`, the same band while `|j - i - diag| <= 2^62`.
    * `softcap` (f32 > 0): `s -> softcap * tanh(s / softcap)`, applied after scaling and
      before masks.

    Optional clauses, in this order, between the operands and the attribute dictionary:
    * `mask(%m : tensor<Bm x Hm x Nm x Nk x T>)`: T in f32/f16/bf16 is added to the scores,
      T = i1 keeps a key where true. Bm is B or 1, Hm is Hq or 1 and Nm is Nq or 1 (a
      size-1 dim broadcasts: Nm = 1 is a per-key mask such as a key-padding mask).
    * `descale(%qd, %kd, %vd)`: three f32 factors that undo the quantization scale of
      f8E4M3FN query, key and value. Required with f8E4M3FN inputs, rejected otherwise.
      Per tensor they are f32 scalars; finer granularities are ranked f32 tensors, written
      `descale(%qd, %kd, %vd : type(%qd), type(%kd), type(%vd))`, all three of one kind:
      per (batch, head) `[B, Hq]`, `[B, Hkv]`, `[B, Hkv]`, or per block of rows
      `[B, Hq, ceil(Nq / block_q)]`, `[B, Hkv, ceil(Nk / block_kv)]` (k and v) with the
      attribute `descale_block = array<i64: block_q, block_kv>` (required iff rank 3).
      Then `s[i,j] *= qd[b, h, i / block_q] * kd[b, g, j / block_kv]` and
      `out = sum_j p[j] * vd[b, g, j / block_kv] * value[b, g, j, :]` (docs/FP8.md).
    * `diagonal(%d)`, `%d : index`: overrides `diag`, the key column on the diagonal of query
      row 0, which is `Nk - Nq` without it. Only allowed with `causal` or `window`. Tiling
      the query rows produces it: a tile of rows `[i0, i0 + n)` of an op with diagonal `d`
      is an op over `n` rows with diagonal `d + i0`, so every row keeps its band of keys
      (a tile's own `Nk - n` would move the diagonal). Any value is allowed, negative too:
      rows whose band holds no key are fully masked. (The index arithmetic of the band
      assumes `|i + d| < 2^62`.)
    * `kv_lens(%l : tensor<B x i32>)`: per-sequence key lengths. Sequence `b` has the keys
      `j < L_b`, `L_b = clamp(l[b], 0, Ncap)`, where `Ncap`, the key capacity, is `Nk`
      (key dim 2) without pages and `M * S` with them; keys `j >= L_b` are invisible,
      like masked keys. Without `diagonal(...)` the causal/window diagonal of sequence
      `b` is `L_b - Nq` (bottom-right aligned per sequence, as decoding from a KV cache
      wants); an explicit `diagonal(%d)` stays absolute, the same for every sequence.
    * `pages(%t : tensor<B x M x i32>)`: key and value are page pools
      `[P, Hkv, S, D]` and `[P, Hkv, S, Dv]` (P pages of S rows each, "HND": dims 1 and
      3 keep their meaning) and key `j` of sequence `b` is `key[t[b, j / S], g, j % S, :]`
      (value likewise), so `Ncap = M * S`. S is static and a multiple of 16. Page ids
      outside `[0, P)` are clamped to `[0, P - 1]`: the compiled code never reads outside
      the pool. Without `kv_lens` every sequence has `Ncap` keys. A mask operand's key dim
      is `Ncap`, and score_mod / mask_mod see the logical key `j` (`0 <= j < Ncap`).
      fp8 descales are not supported with `kv_lens` or `pages` yet.
    * `varlen(%cq, %ck : tensor<B1 x i32>, tensor<B1 x i32>)`: packed variable-length
      sequences (FlashAttention's `cu_seqlens`), B1 = B + 1 cumulative offsets each.
      query, key and value then have batch dim 1 and hold the B sequences one after the
      other along their sequence dims (Tq = Nq query rows, Tk = Nk keys in all): sequence
      `s` has the query rows `[qs, qs + Lq)`, `qs = clamp(cq[s], 0, Tq)`,
      `Lq = clamp(cq[s + 1], qs, Tq) - qs`, and the keys `[ks, ks + Lk)` likewise from
      `ck`. Its rows see only its keys, as an op of its own over `Lq` rows and `Lk` keys:
      the causal/window diagonal is `Lk - Lq` (bottom-right per sequence), and score_mod /
      mask_mod see `%b = s` and the positions `i - qs`, `j - ks` within the sequence.
      Offsets that start at 0, never decrease and end at Tq / Tk cover every row once;
      a row of no sequence (or of two) is unspecified (the CPU lowerings write 0 and
      lse -inf, the GPU kernels leave it unwritten), never read or written out of
      bounds. Not with a mask operand, `diagonal`, `kv_lens`, `pages` or fp8 inputs.

    Tiling (`TilingInterface`): the loops are (batch, query head, query row), all parallel.
    The key dimension is not a loop of the interface: it is the softmax reduction, done inside
    the op by its lowering (online softmax), so a tile always reads all keys of its K/V heads.
    A head tile `[h0, h0 + hs)` must map onto whole K/V heads, since the tiled op reads K/V
    head `h / (hs / kvs)` for its local query head `h`. With `r = Hq / Hkv`: either `hs`
    divides `r` and `h0` is a multiple of `hs` (one K/V head, `h0 / r`), or `hs` and `h0` are
    multiples of `r` (K/V heads `[h0 / r, (h0 + hs) / r)`). Size 1, the whole head range and
    `Hkv = 1` always qualify. When this cannot be proven from the static sizes and the
    offsets (constants, loop induction variables, affine expressions of them), tiling fails
    with a diagnostic on the op rather than guessing. A batch tile slices `kv_lens` and
    the page table's batch dim; page pools are never sliced in dim 0 (a tile may read any
    page). A row tile `[i0, i0 + n)` of a causal/window op with `kv_lens` and no
    `diagonal(...)` gets `diagonal(L_b - Nq + i0)`, which one value can only express for
    a batch tile of size 1; other such tiles fail with a diagnostic on the op.

    Modifier regions (optional, after the attribute dictionary, in this order; each a
    single block ending in `fa.yield`, free of memory side effects and of other fa ops,
    and free to use values
    defined above the op, e.g. constants or a tensor read with `tensor.extract`):
    * `score_mod { ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index): ...
      fa.yield %t : f32 }`: `%s` is the score of query row `%i` and key `%j` (absolute
      positions in this op's query and key sequences, `0 <= i < Nq`, `0 <= j < Nk`) of
      batch `%b` and query head `%h`, after the scale (and fp8 descale), softcap and the
      additive mask; the yielded value is the score that enters the softmax.
    * `mask_mod { ^bb0(%b: index, %h: index, %i: index, %j: index): ...
      fa.yield %keep : i1 }`: whether key `j` is visible to row `i`, in addition to
      causal/window and a boolean mask operand (a key is visible iff all of them say so).
    The order is: scale (x descale), softcap, additive mask, score_mod, then the boolean
    mask, mask_mod and the causal/window band set invisible scores to -inf.

    A second result `lse: tensor<B x Hq x Nq x f32>` is returned when the result type list
    names two types. A row whose keys are all masked yields `out = 0` and `lse = -inf`.

    Accumulation is in f32 whatever the input type.

    Example:

    ```mlir
    %o = fa.attention %q, %k, %v {causal, scale = 1.250000e-01 : f32}
        : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
        -> tensor<2x8x128x64xf16>
    %o2, %lse = fa.attention %q, %k, %v mask(%m : tensor<1x1x128x128xi1>) {window = array<i64: 32, 0>}
        : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
        -> (tensor<2x8x128x64xf32>, tensor<2x8x128xf32>)
    // Rows [32, 64) of a causal op with Nq = Nk = 128: diagonal 0 + 32.
    %o3 = fa.attention %q1, %k, %v diagonal(%c32) {causal}
        : tensor<2x8x32x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
        -> tensor<2x8x32x64xf16>
    // ALiBi (one slope per query head, from a tensor<8xf32> defined above the op)
    // and a prefix-LM mask (keys < 16 are seen by every row).
    %o4 = fa.attention %q, %k, %v score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<8xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %t = math.fma %slope, %df, %s : f32
      fa.yield %t : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %p = arith.cmpi ult, %j, %c16 : index
      %c = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %p, %c : i1
      fa.yield %keep : i1
    } : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
        -> tensor<2x8x128x64xf16>
    // Three packed sequences (offsets [0, 100, 356, 400] for queries and keys).
    %o6 = fa.attention %qp, %kp2, %vp2 varlen(%cq, %ck : tensor<4xi32>, tensor<4xi32>) {causal}
        : tensor<1x8x400x64xf16>, tensor<1x2x400x64xf16>, tensor<1x2x400x64xf16>
        -> tensor<1x8x400x64xf16>
    // Decoding from a paged KV cache: 4 sequences of up to 64 pages of 16 keys
    // (one query row each), sequence b sees its first lens[b] keys.
    %o5 = fa.attention %q, %kp, %vp kv_lens(%lens : tensor<4xi32>) pages(%table : tensor<4x64xi32>) {causal}
        : tensor<4x32x1x128xf16>, tensor<512x8x16x128xf16>, tensor<512x8x16x128xf16>
        -> tensor<4x32x1x128xf16>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<AnyRankedTensor>:$mask,
    // f32 scalars, or ranked f32 tensors (per head, per block of rows): the
    // verifier checks the type with a message per rule.
    Optional<AnyType>:$q_descale,
    Optional<AnyType>:$k_descale,
    Optional<AnyType>:$v_descale,
    Optional<Index>:$diagonal,
    // kv_lens: [B] x i32; pages: [B, M] x i32. Ranked tensors here, the
    // verifier checks the element types and ranks with a message per rule.
    Optional<AnyRankedTensor>:$kv_lens,
    Optional<AnyRankedTensor>:$pages,
    // varlen: [B + 1] x i32 cumulative offsets of queries and keys.
    Optional<AnyRankedTensor>:$cu_seqlens_q,
    Optional<AnyRankedTensor>:$cu_seqlens_k,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$causal,
    OptionalAttr<DenseI64ArrayAttr>:$window,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<DenseI64ArrayAttr>:$descale_block
  );
  let results = (outs AnyRankedTensor:$out, Optional<AnyRankedTensor>:$lse);
  // Optional user modifiers: the score and mask of one (b, h, i, j), see the
  // description.
  let regions = FA_ModifierRegions;

  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`descale` `(` $q_descale^ `,` $k_descale `,`
     custom<LastDescale>($v_descale, type($q_descale), type($k_descale),
                         type($v_descale)))?
    (`diagonal` `(` $diagonal^ `)`)?
    (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    (`pages` `(` $pages^ `:` type($pages) `)`)?
    (`varlen` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `:` type($cu_seqlens_q) `,`
     type($cu_seqlens_k) `)`)?
    attr-dict custom<ModifiersAndColon>($modifiers)
    type($query) `,` type($key) `,` type($value)
    `->` custom<ResultTypes>(type($out), type($lse))
  }];

  let builders = [
    OpBuilder<(ins "Type":$outType, "Value":$query, "Value":$key, "Value":$value,
                   CArg<"bool", "false">:$causal)>
  ];

  let extraClassDeclaration = !strconcat(FA_ModifierAccessors, [{
    RankedTensorType getQueryType() { return getQuery().getType(); }
    RankedTensorType getKeyType() { return getKey().getType(); }
    RankedTensorType getValueType() { return getValue().getType(); }
    RankedTensorType getOutType() { return getOut().getType(); }
    /// The scale applied to Q K^T: the attribute, else 1/sqrt(D).
    double getEffectiveScale();
    /// Window bounds relative to the diagonal, -1 for unbounded; causal
    /// forces right = 0.
    std::pair<int64_t, int64_t> getEffectiveWindow();
    /// True when some key of some row may be excluded by position.
    bool hasPositionalMask() {
      auto [left, right] = getEffectiveWindow();
      return left >= 0 || right >= 0;
    }
    bool isBooleanMask() {
      return getMask() &&
             cast<ShapedType>(getMask().getType()).getElementType().isInteger(1);
    }

    // Per-sequence key lengths and paged K/V caches. Passes read the key
    // count through these, never through key dim 2 (the page size when
    // paged) or key dim 0 (the page count when paged).
    /// Whether key and value are page pools [P, Hkv, S, D] read through the
    /// page table `pages`.
    bool isPaged() { return static_cast<bool>(getPages()); }
    /// Whether the op has per-sequence key lengths.
    bool hasKVLens() { return static_cast<bool>(getKvLens()); }
    /// S, the rows of a page (key dim 2; static when paged). Only with pages.
    int64_t getPageSize() {
      assert(isPaged() && "only paged ops have a page size");
      return getKeyType().getDimSize(2);
    }
    /// P, the pages of the pool (key dim 0, maybe dynamic). Only with pages.
    int64_t getStaticNumPages() {
      assert(isPaged() && "only paged ops have a page pool");
      return getKeyType().getDimSize(0);
    }
    /// Ncap, the keys a sequence can have: Nk (key dim 2) without pages,
    /// M * S with pages (M = the page table's dim 1); kDynamic when unknown.
    int64_t getStaticKeyCapacity();
    /// Whether dim `dim` (batch 0, head 1, query row 2) of the mask operand
    /// broadcasts: a static 1 where the query's dim is not 1 (read at 0).
    bool isMaskDimBroadcast(unsigned dim);
    /// Ncap as an index value at the builder's insertion point (a constant
    /// when static).
    Value getKeyCapacity(OpBuilder &b, Location loc);
    /// The same as an OpFoldResult (an attribute when static).
    OpFoldResult getMixedKeyCapacity(OpBuilder &b, Location loc);
    /// L_b = clamp(kv_lens[batch], 0, capacity) as an index value (the
    /// tensor.extract, index_cast, maxsi, minsi of docs/TiledForm.md); only
    /// with kv_lens. `capacity` is getKeyCapacity's value.
    Value getSequenceKeyLength(OpBuilder &b, Location loc, Value batch,
                               Value capacity);

    /// Whether query, key and value hold packed variable-length sequences
    /// (`varlen(...)`).
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
  }]);

  let hasVerifier = 1;
}


def FA_GradElementType : AnyTypeOf<[F16, BF16, F32]>;

def FA_AttentionGradOp : FA_Op<"attention_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "the backward pass of fa.attention: dq, dk, dv from do";
  let description = [{
    The gradients of `fa.attention` (without descale or diagonal operands)
    with respect to its query, key and value, given the forward's `out` and `lse`
    (natural log) and `grad_out`, the gradient of the loss with respect to `out`.
    With `g = h / (Hq / Hkv)`, `s` the forward's scores before masking
    (`s = scale * q k^T`, then `softcap * tanh(s / softcap)` if softcap is set)
    and `visible(i, j)` the causal / window band of the forward (bottom-right
    aligned):

    ```
    p[i,j]   = visible(i,j) ? exp(s[i,j] - lse[i]) : 0       (0 when lse = -inf)
    dv[g]    = sum over the query heads h of group g of  p^T do[h]
    dp[i,j]  = dot(do[i,:], v[g,j,:])
    delta[i] = dot(do[i,:], out[i,:])
    ds[i,j]  = p[i,j] * (dp[i,j] - delta[i]) * (softcap ? 1 - (s[i,j]/softcap)^2 : 1)
    dq[h]    = scale * ds k[g]
    dk[g]    = scale * sum over the query heads h of group g of  ds^T q[h]
    ```

    A fully masked row (every key outside its band: `lse = -inf`, `out = 0`)
    contributes nothing and gets `dq = 0`.

    `mask(%m : tensor<Bm x Hm x Nm x Nk x T>)` (after grad_out): the forward's mask
    operand, with its shapes and broadcasting (Bm = B or 1, Hm = Hq or 1, Nm = Nq or
    1). An additive one (f16 / bf16 / f32) is added to `s` after the softcap, a
    boolean one (i1) hides a key where false (`visible` also needs it); it gets no
    gradient. Not with `varlen`.

    Modifier regions (optional, after the attribute dictionary, in this order;
    the rules of fa.attention's regions: one block ending in `fa.yield`, free of
    memory side effects and of other fa ops, values from above used as they are):
    * `score_mod { ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index): ...
      fa.yield %t : f32 }` and `mask_mod { ^bb0(%b: index, %h: index, %i: index,
      %j: index): ... fa.yield %keep : i1 }`: those of the forward fa.attention
      whose gradient this is (copied from it).
    * `score_mod_grad { ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      ... fa.yield %t, %dt : f32, f32 }`: `%t = score_mod(s, b, h, i, j)` and
      `%dt = d t / d s` at that point. `fa-differentiate-score-mod` builds it from
      score_mod (forward-mode differentiation); one written by hand is a custom
      derivative and is used as it is. Only allowed with a score_mod.
    With them, as in the forward, `u = softcap(scale * q k^T)` (or `scale * q k^T`),
    `(t, dt) = score_mod_grad(u, b, h, i, j)` (`t = u`, `dt = 1` without
    score_mod) and `visible(i, j)` also needs `mask_mod(b, h, i, j)`:

    ```
    p[i,j]   = visible(i,j) ? exp(t[i,j] - lse[i]) : 0
    ds[i,j]  = p[i,j] * (dp[i,j] - delta[i]) * dt[i,j] * (softcap ? 1 - (u[i,j]/softcap)^2 : 1)
               (0 wherever p = 0: an invisible score's dt is never read)
    ```
    The lowerings read score_mod_grad, never score_mod: a score_mod without
    score_mod_grad is a diagnostic there (the pipelines run
    `fa-differentiate-score-mod` first).

    `grad_captures(%c0, ... : tensor<...>, ...)` (after varlen; not with it):
    tensors defined above that score_mod reads (a learnable bias table, ALiBi
    slopes; f16, bf16 or f32, each listed once) whose gradients follow dq, dk,
    dv as results of their shapes in f32, in that order. Only score_mod's
    `tensor.extract` reads carry gradient (mask_mod is boolean):

    ```
    dc[x]    = sum over visible (b, h, i, j) and reads e of c in score_mod at x of
               p[i,j] * (dp[i,j] - delta[i]) * d t / d e      (score_mod at u)
    ```
    With them, score_mod_grad yields after `t, dt` one term per read:
    its coefficient `d t / d e` (f32) and the read's indices (index each), and
    the attribute `capture_grad_terms = array<i64: ...>` gives each term's
    grad_captures position. fa-differentiate-score-mod builds both (one more
    forward sweep per read, a read whose t does not depend on it dropped). The
    lowerings add the terms at indices clamped into the tensor (at a visible
    score they are those score_mod read). The GPU kernels form the terms whose
    coefficient and indices do not depend on the score (score_mod adds the
    captured values); others are a diagnostic there (fa-to-cpu forms all). Operands are `query`, `key`, `value` as
    for fa.attention, `out: [B, Hq, Nq, Dv]`, `lse: [B, Hq, Nq] x f32` and
    `grad_out: [B, Hq, Nq, Dv]`; q, k, v, out and grad_out share one element type
    (f16, bf16 or f32), and the results have exactly the types of q, k and v.
    Accumulation is in f32. Attributes `scale`, `causal`, `window` and `softcap`
    mean what they mean on fa.attention.

    `varlen(%cq, %ck : tensor<B1 x i32>, tensor<B1 x i32>)` (after grad_out): the
    gradients of a varlen fa.attention (packed sequences in batch 1, the same
    offsets and clamping): q, out, lse, grad_out and dq `[1, Hq, Tq, .]`, k, v,
    dk, dv `[1, Hkv, Tk, .]`; sequence s's rows and keys are those of
    fa.attention's varlen, the regions see `%b = s` and positions counted from
    the sequence's first row and key. Rows and keys of no sequence get zero
    gradients (with overlapping offsets the result is unspecified, as the
    forward's is).

    Example:

    ```mlir
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 0.125 : f32}
        : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>,
          tensor<2x8x128x64xf16>, tensor<2x8x128xf32>, tensor<2x8x128x64xf16>
        -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
    // ALiBi (slopes captured from above): t = s + slope[h] * (j - i), dt/ds = 1.
    %dq2, %dk2, %dv2 = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal} score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<8xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %t = math.fma %slope, %df, %s : f32
      fa.yield %t : f32
    } score_mod_grad {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<8xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %t = math.fma %slope, %df, %s : f32
      %one = arith.constant 1.0 : f32
      fa.yield %t, %one : f32, f32
    } : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>,
        tensor<2x8x128x64xf16>, tensor<2x8x128xf32>, tensor<2x8x128x64xf16>
        -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$out,
    AnyRankedTensor:$lse,
    AnyRankedTensor:$grad_out,
    Optional<AnyRankedTensor>:$mask,
    // varlen: none, or the forward's [B + 1] x i32 cumulative offsets of
    // queries and keys (the verifier checks there are two).
    Variadic<AnyRankedTensor>:$cu_seqlens,
    // Tensors score_mod reads whose gradients are wanted (capture_grads).
    Variadic<AnyRankedTensor>:$grad_captures,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$causal,
    OptionalAttr<DenseI64ArrayAttr>:$window,
    OptionalAttr<F32Attr>:$softcap,
    // score_mod_grad's capture-gradient terms: the grad_captures position of
    // each (see the description).
    OptionalAttr<DenseI64ArrayAttr>:$capture_grad_terms
  );
  let results = (outs AnyRankedTensor:$grad_query, AnyRankedTensor:$grad_key,
                      AnyRankedTensor:$grad_value,
                      Variadic<AnyRankedTensor>:$capture_grads);
  // Optional score_mod, mask_mod and score_mod_grad, see the description.
  let regions = FA_ModifierRegions;

  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $lse `,` $grad_out
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`varlen` `(` $cu_seqlens^ `:` type($cu_seqlens) `)`)?
    (`grad_captures` `(` $grad_captures^ `:` type($grad_captures) `)`)?
    attr-dict custom<GradModifiersAndColon>($modifiers) type($query) `,` type($key) `,` type($value) `,` type($out) `,`
    type($lse) `,` type($grad_out)
    `->` type($grad_query) `,` type($grad_key) `,` type($grad_value)
    (`,` type($capture_grads)^)?
  }];

  let extraClassDeclaration = !strconcat(FA_GradModifierAccessors, [{
    RankedTensorType getQueryType() { return getQuery().getType(); }
    RankedTensorType getKeyType() { return getKey().getType(); }
    RankedTensorType getValueType() { return getValue().getType(); }
    /// The scale applied to Q K^T: the attribute, else 1/sqrt(D).
    double getEffectiveScale();
    /// Window bounds relative to the diagonal, -1 for unbounded; causal
    /// forces right = 0.
    std::pair<int64_t, int64_t> getEffectiveWindow();
    /// Packed variable-length sequences (`varlen(...)`).
    bool isVarlen() { return !getCuSeqlens().empty(); }
    Value getCuSeqlensQ() { return isVarlen() ? getCuSeqlens()[0] : Value(); }
    Value getCuSeqlensK() { return isVarlen() ? getCuSeqlens()[1] : Value(); }
  }]);

  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Tile-level ops: the FlashAttention form produced by fa-tile-attention
//===----------------------------------------------------------------------===//

def FA_OnlineAttentionOp : FA_Op<"online_attention", [Pure,
    AttrSizedOperandSegments,
    AllTypesMatch<["max", "sum", "new_max", "new_sum"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "one key/value block of the online-softmax recurrence";
  let description = [{
    Folds one key/value block into the running state of a block of query rows:
    the FlashAttention inner step. With `q: [M, D]`, `k: [N, D]`, `v: [N, Dv]` and
    the f32 state `max: [M]`, `sum: [M]`, `acc: [M, Dv]`:

    ```
    t[i,j]  = scale * (descale) * dot(q[i], k[j])            f32
    t       = softcap * tanh(t / softcap)                    if softcap
    t      += mask[i,j]   (additive)  |  t = -inf where !mask[i,j] (i1)
    t       = -inf where key col0+j is outside the window of query row0+i
    t       = log2(e) * t                                    scores in log2 units
    m'[i]   = max(max[i], max_j t[i,j])
    p[i,j]  = exp2(t[i,j] - m'[i])                           (0 where t = -inf)
    a[i]    = exp2(max[i] - m'[i])                           (0 when max = -inf)
    sum'    = a * sum + sum_j p                  acc' = a * acc + vd * (p v)
    ```

    `mask(%m : tensor<M x N x T>)` may have a single (static) row, `tensor<1 x N x T>`:
    it broadcasts over the query rows (`mask[0, j]` for every row, a per-key mask).

    `descale(%sd)` (f32, required with f8E4M3FN inputs, rejected otherwise) multiplies
    the scores; `descale(%sd, %vd)` also gives `vd`, the
    per-block V descale of an fa.attention with per-block descales (1 without it; a
    per-tensor or per-head V descale is applied once in the epilogue instead). A GPU
    kernel may keep `acc` in units of `1 / vd` of the current block instead (rescale by
    `a * vd_prev / vd` when moving on, multiply by the last `vd` at the end): the
    same value in exact arithmetic.

    The running max is in log2 units, so that the exponentials are `exp2` and the
    `log2(e)` factor folds into `scale` when nothing non-linear or additive sits in
    between (FlashAttention-2, Triton). Rows whose every score so far is -inf keep
    `max = -inf`, `sum = 0`, `acc = 0`: no NaN is ever formed. After the last block,
    `out = acc / sum` and `lse = ln(2) * (max + log2(sum))`.

    The positional mask applies only when `positions(%row0, %col0, %diagonal)` is
    given: row `row0 + i` sees key `col0 + j` iff
    `-left <= (col0 + j) - (row0 + i + diagonal) <= right` (`window = array<i64: left,
    right>`, -1 unbounded; causal is `right = 0`). fa-tile-attention gives positions
    only to the blocks that straddle a window edge; blocks fully inside are unmasked
    and blocks fully outside are never visited.

    The optional regions `score_mod` and `mask_mod` are those of fa.attention, with the
    same block arguments and the same meaning: `(s, b, h, i, j)` and `(b, h, i, j)` with
    ABSOLUTE batch, query head, query row and key. `coords(%b, %h, %row0, %col0)` (index
    values: the step's batch, query head, first query row and first key in the
    fa.attention's sequences) is required iff a region is present; the step evaluates
    the regions at `(b, h, row0 + i, col0 + j)` for its local row `i` and key `j`. The
    order within the step is: scale (x descale), softcap, additive mask, score_mod, then
    boolean mask, mask_mod and window to -inf, then `log2(e)` and the online softmax:

    ```
    t[i,j]  = scale * (descale) * dot(q[i], k[j]);  t = softcap * tanh(t / softcap)
    t      += mask[i,j]                                      (additive)
    t       = score_mod(t, b, h, row0 + i, col0 + j)         if score_mod
    t       = -inf where !mask[i,j] (i1), !mask_mod(b, h, row0 + i, col0 + j), or
              outside the window
    ```
    (log2(e) is then never folded into the scale: score_mod sees natural units.)

    Example:

    ```mlir
    %m1, %l1, %acc1 = fa.online_attention %q, %k, %v into %m0, %l0, %acc0
        positions(%row0, %col0, %diag) {scale = 0.125 : f32, window = array<i64: -1, 0>}
        : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
    %m2, %l2, %acc2 = fa.online_attention %q, %k, %v into %m1, %l1, %acc1
        coords(%b, %h, %row0, %col0) {scale = 0.125 : f32} mask_mod {
    ^bb0(%bb: index, %hh: index, %i: index, %j: index):
      %di = tensor.extract %doc[%i] : tensor<128xi32>
      %dj = tensor.extract %doc[%j] : tensor<128xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      fa.yield %same : i1
    } : tensor<?x64xf16>, tensor<?x64xf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?x64xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$max,
    AnyRankedTensor:$sum,
    AnyRankedTensor:$acc,
    Optional<AnyRankedTensor>:$mask,
    // descale(%sd) or descale(%sd, %vd): the score descale, then the
    // optional value descale (getDescale(), getValueDescale()).
    Variadic<F32>:$descales,
    Optional<Index>:$row0,
    Optional<Index>:$col0,
    Optional<Index>:$diagonal,
    // coords(%b, %h, %row0, %col0): where the modifier regions are evaluated.
    Optional<Index>:$coord_batch,
    Optional<Index>:$coord_head,
    Optional<Index>:$coord_row,
    Optional<Index>:$coord_col,
    F32Attr:$scale,
    OptionalAttr<DenseI64ArrayAttr>:$window,
    OptionalAttr<F32Attr>:$softcap
  );
  let results = (outs AnyRankedTensor:$new_max, AnyRankedTensor:$new_sum,
                      AnyRankedTensor:$new_acc);
  // The modifier regions of fa.attention, cloned verbatim.
  let regions = FA_ModifierRegions;
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $max `,` $sum `,` $acc
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`descale` `(` $descales^ `)`)?
    (`positions` `(` $row0^ `,` $col0 `,` $diagonal `)`)?
    (`coords` `(` $coord_batch^ `,` $coord_head `,` $coord_row `,` $coord_col `)`)?
    attr-dict custom<ModifiersAndColon>($modifiers)
    type($query) `,` type($key) `,` type($value) `,` type($max) `,`
    type($acc)
  }];
  let extraClassDeclaration = !strconcat(FA_ModifierAccessors, [{
    RankedTensorType getQueryType() { return getQuery().getType(); }
    RankedTensorType getAccType() { return getAcc().getType(); }
    /// The score descale (q_descale * k_descale), null without fp8.
    Value getDescale() {
      return getDescales().empty() ? Value() : getDescales()[0];
    }
    /// The per-block value descale, null unless given (second descale).
    Value getValueDescale() {
      return getDescales().size() < 2 ? Value() : getDescales()[1];
    }
    bool isBooleanMask() {
      return getMask() &&
             cast<ShapedType>(getMask().getType()).getElementType().isInteger(1);
    }
  }]);
  let hasVerifier = 1;
}

def FA_YieldOp : FA_Op<"yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["AttentionOp", "AttentionGradOp", "OnlineAttentionOp"]>]> {
  let summary = "the value of a score_mod, mask_mod or score_mod_grad region";
  let description = [{
    Terminates the modifier regions of fa.attention, fa.attention_grad and
    fa.online_attention: one f32 (the modified score) in `score_mod`, one i1 (the
    key is visible) in `mask_mod`, two f32 (the modified score and its derivative)
    in `score_mod_grad`; the parent op's verifier checks the count and types.

    ```mlir
    fa.yield %t : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def FA_KVBlockRangeOp : FA_Op<"kv_block_range", [Pure]> {
  let summary = "the key/value blocks a block of query rows must visit";
  let description = [{
    For query rows `[row_begin, row_end)` of an attention whose diagonal is at key
    column `row + diagonal` (bottom-right alignment: `diagonal = Nk - Nq`), with
    `window = array<i64: left, right>` (-1 unbounded) and key blocks of `block_kv`
    columns over `key_length` keys, returns four block indices
    `begin <= full_begin <= full_end <= end`:

    * blocks `[begin, end)` hold at least one key some row of the range may see;
      every other block is fully masked and is skipped;
    * blocks `[full_begin, full_end)` are fully visible to every row of the range
      and need no positional mask; the others in `[begin, end)` straddle an edge.

    Without a window all blocks are visible: `begin = full_begin = 0`,
    `full_end = end = ceildiv(key_length, block_kv)`.

    ```mlir
    %b, %fb, %fe, %e = fa.kv_block_range rows [%r0, %r1) keys %nk diagonal %d
        {block_kv = 64 : i64, window = array<i64: -1, 0>}
    ```
  }];
  let arguments = (ins Index:$row_begin, Index:$row_end, Index:$key_length,
                       Index:$diagonal, I64Attr:$block_kv,
                       DenseI64ArrayAttr:$window);
  let results = (outs Index:$begin, Index:$full_begin, Index:$full_end,
                      Index:$end);
  let assemblyFormat = [{
    `rows` `[` $row_begin `,` $row_end `)` `keys` $key_length `diagonal` $diagonal
    attr-dict
  }];
  let hasVerifier = 1;
}

#endif // FA_DIALECT_ATTENTION_IR_ATTENTIONOPS_TD
