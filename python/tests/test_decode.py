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
