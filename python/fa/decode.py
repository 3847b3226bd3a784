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

With per-sequence key lengths (kv_lens) and paged caches the packing is the
same (kv_lens and the page table are per sequence, and the packed call keeps
the batch); the split is through the page table: the M pages of each
sequence's row are cut into S chunks of c = ceil(M / S) whole pages (the table
[B, M] viewed as [B*S, c], padded with a copy when S*c != M), the packed query
repeated S times along the batch, and each chunk gets its own length
clamp(L_b - s*c*page_size, 0, c*page_size) (split_lengths): unequal lengths,
a prime length included, split without a divisor condition, and a chunk with
no key writes lse = -inf, weight 0 in the combine. On a contiguous cache
with kv_lens the split is free only with one K/V head (k [B, 1, Nk, D] viewed
as [B*S, 1, Nk/S, D]); otherwise such a call is packed, not split.
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


def _most_splits(B, Hq, Hkv, Nq, Nk, num_sms):
    """The most chunks worth making (1: none): enough CTAs for one wave, each
    chunk at least MIN_CHUNK_KEYS keys, at most MAX_SPLITS."""
    G = Hq // Hkv
    tiles = B * Hkv * -(-(G * Nq) // TILE_ROWS)
    target = CTAS_PER_SM * num_sms
    if tiles >= target or Nk < MIN_SPLIT_KEYS:
        return 1
    return max(min(-(-target // tiles), Nk // MIN_CHUNK_KEYS, MAX_SPLITS), 1)


def plan_splits(B, Hq, Hkv, Nq, Nk, num_sms, causal=False, window=None):
    """The number of key chunks S (1: no split) for a call, or 0 when the
    packed rewrite does not apply (the call runs as it is)."""
    if not packable(Hq, Hkv, Nq, causal, window) or Nk <= 0:
        return 0
    splits = _most_splits(B, Hq, Hkv, Nq, Nk, num_sms)
    # Equal chunks: the largest S <= splits that divides Nk.
    while splits > 1 and Nk % splits:
        splits -= 1
    return max(splits, 1)


def plan_page_splits(B, Hq, Hkv, Nq, max_pages, page_size, num_sms, causal=False, window=None):
    """plan_splits for a paged cache of max_pages pages of page_size keys per
    sequence (the capacity; the lengths are on the device and not read): S
    chunks of whole pages, no divisor condition, so where plan_splits rounds
    down to a divisor of Nk this rounds down to one wave of CTAs
    (num_sms // tiles). S is the number of chunks of page_chunk(max_pages, S)
    pages that cover max_pages (none is all padding). 0 when the packed
    rewrite does not apply."""
    Nk = max_pages * page_size
    if not packable(Hq, Hkv, Nq, causal, window) or Nk <= 0:
        return 0
    tiles = B * Hkv * -(-((Hq // Hkv) * Nq) // TILE_ROWS)
    splits = min(_most_splits(B, Hq, Hkv, Nq, Nk, num_sms), max_pages,
                 max(CTAS_PER_SM * num_sms // tiles, 1))
    return -(-max_pages // page_chunk(max_pages, splits))


def page_chunk(max_pages, splits):
    """Pages per chunk when a page table row of max_pages pages is cut into
    `splits` chunks (the table padded to splits * page_chunk pages)."""
    return -(-max_pages // splits)


def split_lengths(kv_lens, splits, chunk, capacity):
    """The keys of each chunk, sequence-major ([b * splits + s]): chunk s of
    sequence b holds keys [s*chunk, (s+1)*chunk) of its L_b = clamp(kv_lens[b],
    0, capacity) (capacity itself without kv_lens: `kv_lens` is then the batch
    size), so clamp(L_b - s*chunk, 0, chunk). The pure-Python statement of
    what fa.torch_ops computes on the device."""
    lens = [capacity] * kv_lens if isinstance(kv_lens, int) else \
        [min(max(n, 0), capacity) for n in kv_lens]
    return [min(max(n - s * chunk, 0), chunk) for n in lens for s in range(splits)]


# In-kernel split-KV (sm_90a kernels compiled with fa-to-ptx{split-kv=true}:
# the chunks are CTAs of one launch, merged by lse in the last CTA of each
# tile; docs/Inference.md). No divisor condition (a chunk is whole key blocks
# of the kernel, the last one shorter) and no host-side combine, so short
# caches split too. Fewest key blocks of a chunk (below that a CTA's prologue
# and epilogue outweigh its blocks) and CTAs per SM to aim for: measured on
# the H200 (bench/results/decode_h200_2026-12-02_s14).
KERNEL_BLOCK_KEYS = 128
MIN_KERNEL_CHUNK_BLOCKS = 2
KERNEL_CTAS_PER_SM = 1


def plan_kernel_splits(B, Hq, Hkv, Nq, Nk, num_sms, causal=False, window=None):
    """The num_splits of an in-kernel split-KV launch on the packed call
    ([B, Hkv, G*Nq, D] queries): as many CTAs as fit in one wave
    (KERNEL_CTAS_PER_SM per SM: one more CTA than that is a second wave,
    measured 1.2-1.4x slower), chunks of at least MIN_KERNEL_CHUNK_BLOCKS
    key blocks, at most MAX_SPLITS, then as few chunks as give the same chunk
    length (none empty). 1: no split; 0 when the packed rewrite does not
    apply."""
    if not packable(Hq, Hkv, Nq, causal, window) or Nk <= 0:
        return 0
    tiles = B * Hkv * -(-((Hq // Hkv) * Nq) // TILE_ROWS)
    blocks = -(-Nk // KERNEL_BLOCK_KEYS)
    splits = min(KERNEL_CTAS_PER_SM * num_sms // tiles,
                 blocks // MIN_KERNEL_CHUNK_BLOCKS, MAX_SPLITS)
    if splits <= 1:
        return 1
    per = -(-blocks // splits)
    return -(-blocks // per)

