"""fa.decode's plan (pure Python): when GQA packing and split-KV apply and how
many key chunks a call gets."""
from fa.decode import MAX_SPLITS, MIN_CHUNK_KEYS, MIN_SPLIT_KEYS, packable, plan_splits

SMS = 132  # H100/H200


def test_packable_rows_that_do_not_differ_by_position():
    assert packable(32, 8, 1, causal=False, window=None)
    assert packable(32, 8, 1, causal=True, window=(-1, 0))  # one row: causal sees all
    assert not packable(32, 8, 2, causal=True, window=(-1, 0))  # rows differ by position
    assert not packable(32, 8, 1, causal=False, window=(128, 0))  # a window
    assert not packable(32, 8, 1, causal=False, window=None, modifiers=True)
    assert packable(32, 8, 32, causal=False, window=None)  # 4 x 32 = 128 rows: one tile
    assert not packable(32, 8, 33, causal=False, window=None)  # more than a tile


def test_one_sequence_long_cache_splits_to_fill_the_gpu():
    # 8 K/V heads: 8 CTAs unsplit; one wave wanted: ceil(132 / 8) = 17, the
    # largest divisor of 128k below it is 16 (the best measured on the H200).
    assert plan_splits(1, 32, 8, 1, 131072, SMS) == 16
    assert plan_splits(1, 32, 8, 1, 32768, SMS) == 16
    assert plan_splits(8, 32, 8, 1, 32768, SMS) == 2  # 64 CTAs: ceil(132 / 64) = 3 -> 2 divides


def test_enough_ctas_no_split():
    assert plan_splits(64, 32, 8, 1, 4096, SMS) == 1  # 512 CTAs already


def test_chunks_keep_enough_keys():
    # Short caches are not split (the combine costs more than it gains).
    assert plan_splits(1, 32, 8, 1, 4096, SMS) == 1
    assert plan_splits(1, 32, 8, 1, MIN_SPLIT_KEYS - 1, SMS) == 1
    # At most Nk / MIN_CHUNK_KEYS chunks.
    assert plan_splits(1, 8, 1, 1, 16384, SMS) == 16384 // MIN_CHUNK_KEYS
    assert plan_splits(1, 8, 8, 1, 10 ** 7, SMS) <= MAX_SPLITS


def test_equal_chunks_divide_the_keys():
    n = 3 * 7 * 1024
    s = plan_splits(1, 32, 8, 1, n, SMS)
    assert s > 1 and n % s == 0 and n // s >= MIN_CHUNK_KEYS


def test_not_applicable():
    assert plan_splits(1, 32, 8, 4, 4096, SMS, causal=True, window=(-1, 0)) == 0
    assert plan_splits(1, 32, 8, 1, 0, SMS) == 0


# ---------------------------------------------------------------------------
# Paged caches: chunks of whole pages, per-chunk lengths

from fa.decode import page_chunk, plan_page_splits, split_lengths  # noqa: E402


def test_page_splits_need_no_divisor():
    # One sequence of 8 K/V heads, 128k keys in 16-key pages: the same 16
    # chunks as the contiguous cache.
    assert plan_page_splits(1, 32, 8, 1, 8192, 16, SMS) == 16
    # A prime cache length has no divisor but 1: plan_splits does not split
    # it. Chunks of whole pages need none: a prime number of pages
    # (ceil(2053 / 16) = 129 pages each, the last chunk 118 pages: the table
    # padded by 11), the length itself prime or not (split_lengths).
    assert plan_splits(1, 32, 8, 1, 32771, SMS) == 1
    s = plan_page_splits(1, 32, 8, 1, 2053, 16, SMS)
    assert s == 16 and page_chunk(2053, s) == 129 and s * 129 - 2053 == 11
    # Big pages: never more chunks than pages; no chunk all padding.
    for M in range(1, 200):
        s = plan_page_splits(1, 32, 8, 1, M, 256, SMS)
        c = page_chunk(M, s)
        assert 1 <= s <= M and (s - 1) * c < M <= s * c, M
    assert plan_page_splits(1, 32, 8, 1, 5, 256, SMS) == 1  # 1280 keys: too short to split
    # 16 wanted, 7 pages per chunk (ceil(100 / 16)) make 15 chunks.
    assert plan_page_splits(1, 32, 8, 1, 100, 256, SMS) == 15


def test_page_splits_like_plan_splits():
    assert plan_page_splits(64, 32, 8, 1, 256, 16, SMS) == 1  # 512 CTAs already
    # 64 CTAs: 2 chunks fill one wave (plan_splits: ceil(132 / 64) = 3 rounded
    # down to a divisor of Nk, 2; here down to the wave, 132 // 64).
    assert plan_page_splits(8, 32, 8, 1, 2048, 16, SMS) == 2
    assert plan_page_splits(1, 32, 8, 4, 2048, 16, SMS, causal=True, window=(-1, 0)) == 0
    assert plan_page_splits(1, 32, 8, 1, 0, 16, SMS) == 0
    assert plan_page_splits(1, 8, 8, 1, 10 ** 6, 16, SMS) <= MAX_SPLITS


def test_split_lengths_prime_and_empty_chunks():
    # Chunks of 64 keys out of a capacity of 256 (4 chunks): a prime length
    # (131 = 64 + 64 + 3), a full one, an empty sequence, one past the
    # capacity (clamped), a negative one (clamped to 0), an exact multiple.
    lens = [131, 256, 0, 1000, -5, 128]
    got = split_lengths(lens, 4, 64, 256)
    assert got == [64, 64, 3, 0,
                   64, 64, 64, 64,
                   0, 0, 0, 0,
                   64, 64, 64, 64,
                   0, 0, 0, 0,
                   64, 64, 0, 0]
    # Every chunk's keys add up to the (clamped) length.
    for b, n in enumerate(lens):
        assert sum(got[4 * b:4 * b + 4]) == min(max(n, 0), 256)
    # Without kv_lens: every sequence at the capacity; the padded last chunk
    # (a capacity of 3 pages of 16 keys in 2 chunks of 2 pages) holds 16.
    assert split_lengths(2, 2, 32, 48) == [32, 16, 32, 16]


from fa.decode import MIN_KERNEL_CHUNK_BLOCKS, plan_kernel_splits  # noqa: E402


def test_kernel_splits_fill_one_wave():
    # 1 x 8 packed tiles on 132 SMs: 16 chunks (17 would be a second wave: 136 CTAs);
    # 8 sequences: 64 tiles, 2 chunks; 64 sequences: no split.
    assert plan_kernel_splits(1, 32, 8, 1, 131072, 132) == 16
    assert plan_kernel_splits(8, 32, 8, 1, 131072, 132) == 2
    assert plan_kernel_splits(64, 32, 8, 1, 4096, 132) == 1
    for B, Nk in ((1, 4096), (1, 5000), (3, 999999), (8, 32768)):
        s = plan_kernel_splits(B, 32, 8, 1, Nk, 132)
        assert 1 <= s and B * 8 * s <= 132


def test_kernel_splits_need_no_divisor_and_leave_no_chunk_empty():
    # A prime length splits; chunks are whole 128-key blocks of at least
    # MIN_KERNEL_CHUNK_BLOCKS, and as few as give the same chunk length.
    s = plan_kernel_splits(1, 32, 8, 1, 32749, 132)
    blocks = -(-32749 // 128)
    per = -(-blocks // s)
    assert s > 1 and per >= MIN_KERNEL_CHUNK_BLOCKS and (s - 1) * per < blocks
    assert plan_kernel_splits(1, 32, 8, 1, 3 * 128, 132) == 1  # 3 blocks: one chunk
    assert plan_kernel_splits(1, 8, 8, 1, 5 * 128, 132) == 2  # 5 blocks: chunks of 3 and 2


def test_kernel_splits_not_applicable():
    assert plan_kernel_splits(1, 32, 8, 2, 4096, 132, causal=True) == 0  # rows differ
    assert plan_kernel_splits(1, 32, 8, 1, 4096, 132, window=(64, 0)) == 0
    assert plan_kernel_splits(1, 32, 8, 1, 0, 132) == 0

