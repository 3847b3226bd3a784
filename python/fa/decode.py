"""Split-KV decoding: the plan (pure Python, no torch; tested without a GPU).

A decoding step has a handful of query rows per sequence: one CTA per
(batch, head, 128-row block) keeps a few SMs busy while the rest idle, and the
query heads of a GQA group each read the same K and V. Two rewrites of the
call fix that without another kernel (fa.torch_ops runs them, docs/Inference.md):

* GQA packing: q [B, Hq, Nq, D] is viewed as [B, Hkv, G*Nq, D] (G = Hq / Hkv,
  a free view): the G heads of a group become rows of one tile, so K and V are
  read once per group;
* split-KV: the keys are cut into S equal chunks viewed as S times as many
  heads (k [B, Hkv, Nk, D] -> [B, Hkv*S, Nk/S, D], a free view of a
  contiguous tensor), the packed query repeated S times; the kernel writes
  each chunk's (o, lse), and a combine merges them by lse:
  o = sum_s exp(lse_s - m) o_s / sum_s exp(lse_s - m), lse = m + log(...).

Both are exact in real arithmetic when no mask depends on the row's position
(no window; causal only with Nq = 1, where the bottom-right diagonal lets the
one row see every key).
"""

# The kernels' query tile (rows per CTA) on both chips.
TILE_ROWS = 128
# Fewest keys a chunk keeps, and fewest keys worth splitting: below those the
# per-CTA prologue and epilogue and the combine's few small kernels cost more
# than the parallelism gains (H200, bench/results/decode_h200_2026-12-01:
# at 4k keys the unsplit kernel was as fast or faster at every batch).
MIN_CHUNK_KEYS = 1024
MIN_SPLIT_KEYS = 16384
# CTAs to aim for, per SM: one wave (the same run: 16 chunks beat 32 for one
# sequence of 8 K/V heads, 2 beat 4 for eight).
CTAS_PER_SM = 1
# Most chunks (the combine reads S partial outputs per row).
MAX_SPLITS = 128


def packable(Hq, Hkv, Nq, causal, window, modifiers=False):
    """Whether the call may be rewritten: rows of a packed tile must not differ
    by position (no window; causal only with one query row) and fit a tile."""
    if modifiers or window not in (None, (-1, 0)):
        return False
    if window == (-1, 0) or causal:
        if Nq != 1:
            return False
    return Hq % Hkv == 0 and (Hq // Hkv) * Nq <= TILE_ROWS


def plan_splits(B, Hq, Hkv, Nq, Nk, num_sms, causal=False, window=None):
    """The number of key chunks S (1: no split) for a call, or 0 when the
    packed rewrite does not apply (the call runs as it is)."""
    if not packable(Hq, Hkv, Nq, causal, window) or Nk <= 0:
        return 0
    G = Hq // Hkv
    tiles = B * Hkv * -(-(G * Nq) // TILE_ROWS)
    target = CTAS_PER_SM * num_sms
    if tiles >= target or Nk < MIN_SPLIT_KEYS:
        return 1
    splits = min(-(-target // tiles), Nk // MIN_CHUNK_KEYS, MAX_SPLITS)
    # Equal chunks: the largest S <= splits that divides Nk.
    while splits > 1 and Nk % splits:
        splits -= 1
    return max(splits, 1)
