"""Checks of fa.attention's arguments, before anything is compiled or launched.

Two kinds of failure:
  - AttentionInputError (a ValueError): the call is wrong whatever the
    backend (ranks, shapes that do not agree, mixed dtypes or devices, a bad
    window, scale or softcap, kv_lens or a page table that do not fit). Never
    falls back.
  - UnsupportedError (a NotImplementedError): a valid attention that no fa
    kernel computes (an element type or head dim the kernels lack,
    a CPU tensor, a GPU older than sm_80). fa.attention(..., fallback=True)
    or FA_FALLBACK=1 computes these with torch instead.
Pure Python on shapes, dtype names and device strings: tested without torch.
"""
import math

from .variant import (DTYPES, GRAD_HEAD_DIMS, HEAD_DIMS, MASK_DTYPES, PAGE_MULTIPLE,
                      normalize_window)


class AttentionInputError(ValueError):
    pass


class UnsupportedError(NotImplementedError):
    pass


def check_inputs(q, k, v, causal=False, window=None, scale=None, softcap=None, kv_lens=None,
                 page_table=None):
    """q, k, v: (shape, dtype name, device string) triples, [B, H, N, D]
    (torch SDPA's layout). kv_lens ([B] i32) and page_table ([B, M] i32): such
    triples or None; with a page table k and v are page pools [P, Hkv, S, D]
    (S a multiple of 16) and Nk is the capacity M * S. Raises
    AttentionInputError; returns the normalized window and the sizes (B, Hq,
    Hkv, Nq, Nk, D, Dv)."""
    names = ("q", "k", "v")
    shapes = {}
    for n, (shape, dtype, device) in zip(names, (q, k, v)):
        if len(shape) != 4:
            raise AttentionInputError(
                f"fa.attention: {n} has rank {len(shape)} (shape {list(shape)}); expected "
                f"[batch, heads, seq_len, head_dim] (torch SDPA's layout; from [B, N, H, D] "
                f"use .transpose(1, 2))")
        shapes[n] = tuple(shape)  # no int(): torch.compile's symbolic sizes stay symbolic
    dt = {n: t[1] for n, t in zip(names, (q, k, v))}
    if not (dt["q"] == dt["k"] == dt["v"]):
        raise AttentionInputError(f"fa.attention: q, k, v must have one dtype, got "
                                  f"{dt['q']}, {dt['k']}, {dt['v']}")
    dev = {n: t[2] for n, t in zip(names, (q, k, v))}
    if not (dev["q"] == dev["k"] == dev["v"]):
        raise AttentionInputError(f"fa.attention: q, k, v must be on one device, got "
                                  f"{dev['q']}, {dev['k']}, {dev['v']}")
    B, Hq, Nq, D = shapes["q"]
    Bk, Hkv, Nk, Dk = shapes["k"]
    Bv, Hv, Nv, Dv = shapes["v"]
    for name, t, rank in (("kv_lens", kv_lens, 1), ("page_table", page_table, 2)):
        if t is None:
            continue
        shape, dtype, device = t
        if len(shape) != rank or shape[0] != B:
            want = "[B]" if rank == 1 else "[B, max_pages]"
            raise AttentionInputError(f"fa.attention: {name} has shape {list(shape)}; expected "
                                      f"{want} with B = {B} (q's batch)")
        if dtype != "i32":
            raise AttentionInputError(f"fa.attention: {name} has dtype {dtype}; it must be "
                                      f"int32 ({name}.to(torch.int32))")
        if device != dev["q"]:
            raise AttentionInputError(f"fa.attention: {name} is on {device}, q, k, v on "
                                      f"{dev['q']}; they must be on one device")
    if page_table is not None:
        # k, v: page pools [P, Hkv, S, D]; the capacity is max_pages * S.
        P, S, M = Bk, Nk, page_table[0][1]
        if (Bv, Hv, Nv) != (P, Hkv, S):
            raise AttentionInputError(f"fa.attention: v is a pool of {Bv} pages x {Hv} heads x "
                                      f"{Nv} keys, k of {P} x {Hkv} x {S}; they must agree")
        if S <= 0 or S % PAGE_MULTIPLE:
            raise AttentionInputError(f"fa.attention: page size {S} (keys per page: k.shape[2] "
                                      f"of the pools [num_pages, Hkv, page_size, D]) must be a "
                                      f"positive multiple of {PAGE_MULTIPLE}")
        if P == 0 and B * Hq * Nq:
            raise AttentionInputError("fa.attention: the page pools k and v have no pages")
        Nk = M * S
    else:
        if Bk != B or Bv != B:
            raise AttentionInputError(f"fa.attention: batch sizes differ: q {B}, k {Bk}, v {Bv}"
                                      f" (a paged KV cache needs page_table=)")
        if (Hv, Nv) != (Hkv, Nk):
            raise AttentionInputError(f"fa.attention: v has {Hv} heads x {Nv} keys, k has "
                                      f"{Hkv} x {Nk}; they must agree")
    if Dk != D:
        raise AttentionInputError(f"fa.attention: k's head dim {Dk} differs from q's {D}")
    if Hkv == 0 or Hq % Hkv:
        raise AttentionInputError(f"fa.attention: {Hkv} key/value heads do not divide {Hq} "
                                  f"query heads (grouped-query attention needs Hq % Hkv == 0)")
    if Nk == 0 and B * Hq * Nq:
        raise AttentionInputError("fa.attention: page_table has no pages per sequence "
                                  "(max_pages = 0)" if page_table is not None else
                                  "fa.attention: k and v have no keys (seq_len 0)")
    try:
        window = normalize_window(causal, window)
    except ValueError as e:
        raise AttentionInputError(f"fa.attention: {e}") from None
    if scale is not None and not math.isfinite(float(scale)):
        raise AttentionInputError(f"fa.attention: scale = {scale} is not finite")
    if softcap is not None and not (math.isfinite(float(softcap)) and float(softcap) > 0):
        raise AttentionInputError(f"fa.attention: softcap = {softcap} must be > 0")
    return window, (B, Hq, Hkv, Nq, Nk, D, Dv)


def unsupported_reason(dtype, device, chip, D, Dv, softcap, grad=False):
    """Why no fa kernel computes this valid attention (with grad: its
    backward), or None."""
    if not str(device).startswith("cuda"):
        return f"tensors on {device}: fa's kernels run on CUDA devices (numpy on the CPU: fa.cpu)"
    if chip is None:
        return f"{device} is older than sm_80 (compute capability 8.0): fa has no kernel for it"
    if dtype not in DTYPES:
        return (f"dtype {dtype}: fa.attention takes {' and '.join(DTYPES)} (the sm_90a FP8 "
                f"kernels need descale factors: fa.compile on MLIR text and fa_runtime)")
    if Dv != D:
        return f"value head dim {Dv} differs from the query head dim {D}: no kernel for it"
    dims = (GRAD_HEAD_DIMS if grad else HEAD_DIMS)[chip]
    if D not in dims:
        return (f"head dim {D}: the {chip} {'backward ' if grad else ''}kernel supports "
                f"{', '.join(map(str, dims))}")
    return None


def mask_spec(shape, dtype):
    """The kernel's mask spec `<dtype>:<dims>` (variant.MASK_DTYPES,
    MASK_BROADCASTS) of a [B or 1, Hq or 1, Nq or 1, Nk] mask of dtype name
    `dtype`: its batch and head dims 1 where it broadcasts over them, a third
    `1` when it has one row for every query row (a per-key mask: key
    padding)."""
    return (f"{dtype}:{'1' if shape[0] == 1 else 'B'}{'1' if shape[1] == 1 else 'H'}"
            f"{'1' if shape[2] == 1 else ''}")


def check_mask(mask, sizes):
    """attn_mask: a (shape, dtype name, device) triple, torch SDPA's
    convention: broadcastable to [B, Hq, Nq, Nk] (rank 4 at most, aligned
    right), bool (keep where true) or f16 / bf16 / f32 (added to the scaled,
    softcapped scores). `sizes` as check_inputs returns them. Raises
    AttentionInputError; returns the [B or 1, Hq or 1, Nq or 1, Nk] shape
    to expand the mask to (its key dim in full, its query dim 1 where it has
    one row: every query row reads it, nothing is copied; mask_spec gives
    the kernel's spec of that)."""
    shape, dtype, _ = mask
    B, Hq, _, Nq, Nk, _, _ = sizes
    full = (B, Hq, Nq, Nk)
    if len(shape) > 4:
        raise AttentionInputError(f"fa.attention: attn_mask has rank {len(shape)} (shape "
                                  f"{list(shape)}); it must broadcast to [B, Hq, Nq, Nk] = "
                                  f"{list(full)}")
    shape = (1,) * (4 - len(shape)) + tuple(shape)
    for d, (m, n) in enumerate(zip(shape, full)):
        if m != 1 and m != n:
            raise AttentionInputError(f"fa.attention: attn_mask of shape {list(shape)} does not "
                                      f"broadcast to [B, Hq, Nq, Nk] = {list(full)} (dim {d} "
                                      f"is {m}; it must be 1 or {n})")
    if dtype not in MASK_DTYPES:
        raise AttentionInputError(f"fa.attention: attn_mask has dtype {dtype}; it must be bool "
                                  f"(keep where true) or float16, bfloat16, float32 (added to "
                                  f"the scores)")
    return (shape[0], shape[1], shape[2], Nk)
