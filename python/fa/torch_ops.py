"""fa.attention on torch tensors: the custom op fa::attention (so torch.compile
traces it as one node, through its fake implementation), its CUDA launch
through fa_runtime, its autograd (the backward kernel through the custom op
fa::attention_backward), and the torch fallbacks of both; per-sequence key
lengths (kv_lens) and paged KV caches (page_table), decoding's packing and
split (fa.decode) included. Imported by fa.attention on its first call:
`import fa` never imports torch.
"""
import math
import os
from typing import Optional, Tuple

import torch

from . import decode, dispatch
from fa_runtime.driver import check_indices_default, multiprocessor_count
from fa_runtime.manifest import check_index_values

from .validation import (AttentionInputError, UnsupportedError, check_inputs, check_mask,
                         mask_spec, unsupported_reason)
from .variant import Variant, chip_for_capability

_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
                torch.float64: "f64", torch.int32: "i32", torch.int64: "i64",
                torch.bool: "bool"}

_chips = {}


# FA_CHIP=sm_80 runs the sm_80 kernels (PTX, JIT-compiled by the driver) on a
# later GPU: how the A100 code is measured on an H100/H200. Read at import.
_CHIP_ENV = os.environ.get("FA_CHIP", "")


def chip_for_device(device):
    """sm_90a on compute capability 9.0, sm_80 on 8.x and later, None below
    (FA_CHIP=sm_80 asks for sm_80 on any device that can run it)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _chips:
        chip = chip_for_capability(*torch.cuda.get_device_capability(idx))
        if _CHIP_ENV == "sm_80" and chip is not None:
            chip = "sm_80"
        _chips[idx] = chip
    return _chips[idx]


def reference(q, k, v, causal=False, window=None, scale=None, softcap=None, return_lse=False,
              kv_lens=None, page_table=None, attn_mask=None):
    """fa.attention's semantics in torch (docs/Attention.md): bottom-right
    aligned causal mask and window, GQA, softcap, lse in natural log, fully
    masked rows give 0 and lse -inf. torch SDPA where it computes the same
    thing (no window, no softcap, no lse, causal only with Nq == Nk, no
    kv_lens or page table), else in f32 with materialized scores. The
    fallback, and the benchmarks' oracle.
    page_table [B, M] int32: k and v are page pools [P, Hkv, S, D], key j of
    sequence b is k[clamp(page_table[b, j // S], 0, P - 1), :, j % S] (the
    pages gathered into [B, Hkv, M*S, D]); kv_lens [B] int32: sequence b sees
    keys j < L_b = clamp(kv_lens[b], 0, Nk) and its causal/window diagonal is
    L_b - Nq (bottom-right per sequence). attn_mask (broadcastable to
    [B, Hq, Nq, Nk]): bool keeps where true, a float one is added to the
    scaled, softcapped scores (docs/Attention.md's order)."""
    B, Hq, Nq, D = q.shape
    if page_table is not None:
        k, v = gather_pages(k, v, page_table)
    Hkv, Nk = k.shape[1], k.shape[2]
    window = _window(causal, window)
    lens = None if kv_lens is None else kv_lens.long().clamp(0, Nk)
    varlen = kv_lens is not None or page_table is not None
    if softcap is None and not return_lse and not varlen and attn_mask is None and \
            window in (None, (-1, 0)) and \
            (window is None or Nq == Nk):
        out = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=window is not None, scale=scale, enable_gqa=Hq != Hkv)
        return out, None
    r = Hq // Hkv
    kf = k.float().repeat_interleave(r, dim=1)
    vf = v.float().repeat_interleave(r, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) * (scale if scale is not None
                                                          else 1.0 / math.sqrt(D))
    if softcap is not None:
        s = softcap * torch.tanh(s / softcap)
    s, visible = _apply_mask(s, attn_mask, _band(Nq, Nk, window, q.device, lens))
    if visible is not None:
        s = s.masked_fill(~visible, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l_ = p.sum(-1, keepdim=True)
    out = torch.matmul(p, vf) / torch.where(l_ == 0, torch.ones_like(l_), l_)
    lse = (m + torch.log(l_)).squeeze(-1)
    return out.to(q.dtype), lse


def _apply_mask(s, attn_mask, visible):
    """An additive attn_mask added to the scores s, a boolean one and-ed into
    `visible` (None: every key); both broadcast as torch does."""
    if attn_mask is None:
        return s, visible
    if attn_mask.dtype == torch.bool:
        return s, attn_mask if visible is None else visible & attn_mask
    return s + attn_mask.to(s.dtype), visible


def _window(causal, window):
    if window is None:
        return (-1, 0) if causal else None
    return tuple(window)


def _band(Nq, Nk, window, device, lens=None):
    """The keys each query sees ([Nq, Nk] bool) under `window` (left, right)
    around the bottom-right aligned diagonal, or None when it sees all. With
    `lens` (per-sequence key lengths [B], in 0 .. Nk): [B, 1, Nq, Nk], keys
    j < lens[b], the diagonal of sequence b at lens[b] - Nq."""
    if window is None and lens is None:
        return None
    i = torch.arange(Nq, device=device)[:, None]
    j = torch.arange(Nk, device=device)[None, :]
    if lens is None:
        visible = torch.ones((Nq, Nk), dtype=torch.bool, device=device)
        last = Nk
    else:
        last = lens.to(device).view(-1, 1, 1, 1)
        visible = j < last  # [B, 1, 1, Nk]
    if window is None:
        return visible
    dist = j - (i + (last - Nq))
    left, right = window
    if right >= 0:
        visible = visible & (dist <= right)
    if left >= 0:
        visible = visible & (dist >= -left)
    return visible


def gather_pages(k, v, page_table):
    """The dense K and V [B, Hkv, M*S, D] of page pools k, v [P, Hkv, S, D]
    through page_table [B, M] (page ids clamped to [0, P - 1], as the kernels
    do). A copy: the reference's, not a fast path."""
    B, M = page_table.shape
    P, Hkv, S, D = k.shape
    if P == 0:  # nothing to read (validation allows it only without work)
        return (k.new_zeros((B, Hkv, M * S, D)), v.new_zeros((B, Hkv, M * S, v.shape[-1])))
    idx = page_table.long().clamp(0, P - 1).to(k.device)

    def gather(x):
        return x[idx].permute(0, 2, 1, 3, 4).reshape(B, Hkv, M * S, x.shape[-1])
    return gather(k), gather(v)


def reference_grad(q, k, v, do, causal=False, window=None, scale=None, softcap=None,
                   grad_lse=None, attn_mask=None):
    """(dq, dk, dv) of `reference`'s attention for the output gradient do
    (and grad_lse, the gradient of its lse), in f32 (f64 for f64 inputs) with
    materialized scores (O(N^2) memory): the backward's fallback, written out
    (docs/Backward.md's math) rather than through autograd, so that it also
    runs inside the custom op, where autograd does not record. Fully masked
    rows contribute nothing (dq 0). attn_mask as in `reference` (no gradient
    of its own)."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    ft = torch.float64 if q.dtype == torch.float64 else torch.float32
    qf, dof = q.to(ft), do.to(ft)
    kf = k.to(ft).repeat_interleave(r, dim=1)
    vf = v.to(ft).repeat_interleave(r, dim=1)
    c = scale if scale is not None else 1.0 / math.sqrt(D)
    s = torch.matmul(qf, kf.transpose(-1, -2)) * c
    if softcap is not None:
        t = torch.tanh(s / softcap)
        s = softcap * t
    s, visible = _apply_mask(s, attn_mask, _band(Nq, Nk, _window(causal, window), q.device))
    if visible is not None:
        s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s, -1, keepdim=True)
    p = torch.exp(s - torch.where(torch.isinf(lse), torch.zeros_like(lse), lse))
    delta = (dof * torch.matmul(p, vf)).sum(-1, keepdim=True)
    if grad_lse is not None:
        delta = delta - grad_lse.to(ft).unsqueeze(-1)
    ds = p * (torch.matmul(dof, vf.transpose(-1, -2)) - delta)
    if softcap is not None:
        ds = ds * (1 - t * t)
    dq = torch.matmul(ds, kf) * c
    dk = (torch.matmul(ds.transpose(-1, -2), qf) * c).view(B, Hkv, r, Nk, D).sum(2)
    dv = torch.matmul(p.transpose(-1, -2), dof).view(B, Hkv, r, Nk, D).sum(2)
    return dq, dk, dv


_fast = {}  # the launch path's memo: (dtype, D, flags, device) -> fa_runtime.Kernel
dispatch.on_clear.append(_fast.clear)


def _run(q, k, v, causal, wl, wr, scale, softcap, return_lse, fallback, kv_lens=None,
         page_table=None, attn_mask=None):
    window = None if (wl, wr) == (-1, -1) else (wl, wr)
    if attn_mask is not None:
        return _run_masked(q, k, v, causal, window, scale, softcap, return_lse, fallback,
                           kv_lens, page_table, attn_mask)
    varlen = {}
    if kv_lens is not None or page_table is not None:
        varlen = dict(kv_lens=kv_lens, page_table=page_table)
        if check_indices_default():
            check_indices(q, k, kv_lens, page_table)
    res = _run_split_kernel(q, k, v, causal, window, scale, softcap, return_lse, **varlen)
    if res is not None:
        return res
    splits = _plan_decode(q, k, causal, window, **varlen)
    if splits:
        res = _run_packed(q, k, v, splits, scale, softcap, return_lse, **varlen)
        if res is not None:
            return res
    kern = _kernel(q, v, causal, window, scale, softcap, return_lse, fallback,
                   kv_lens=kv_lens is not None,
                   page_size=k.shape[2] if page_table is not None else None,
                   schedule=_prefill_schedule(q, k, v, causal, window, softcap, varlen))
    if isinstance(kern, str):
        if not fallback:
            raise _unsupported(kern)
        out, lse = reference(q, k, v, causal, window, scale, softcap, return_lse, **varlen)
        return out.contiguous(), (lse.contiguous() if return_lse else _no_lse(q))
    # The checked mode (if on) ran above: the kernel's own would read the same.
    res = kern(q, k, v, **varlen, check_indices=False) if varlen else kern(q, k, v)
    if return_lse:
        return res[0], res[1]
    return res, _no_lse(q)


def _run_masked(q, k, v, causal, window, scale, softcap, return_lse, fallback, kv_lens,
                page_table, attn_mask):
    """A call with a mask operand: the forward kernel compiled with it (the
    variant's `mask`, docs/Attention.md: [B or 1, Hq or 1, Nq, Nk], read per
    score), unsplit; with kv_lens or a page table there is none (the
    fallback, or UnsupportedError)."""
    if kv_lens is not None or page_table is not None:
        kern = "no kernel takes attn_mask with kv_lens or a page table"
        if not fallback:
            raise _unsupported(kern)
    else:
        kern = _kernel(q, v, causal, window, scale, softcap, return_lse, fallback,
                       mask=mask_spec(attn_mask.shape, _DTYPE_NAMES[attn_mask.dtype]))
    if isinstance(kern, str):
        out, lse = reference(q, k, v, causal, window, scale, softcap, return_lse, kv_lens,
                             page_table, attn_mask)
        return out.contiguous(), (lse.contiguous() if return_lse else _no_lse(q))
    res = kern(q, k, v, mask=attn_mask)
    if return_lse:
        return res[0], res[1]
    return res, _no_lse(q)


def check_indices(q, k, kv_lens, page_table):
    """The checked mode (FA_CHECK_INDICES=1) of fa.attention: kv_lens in
    0 .. capacity and the page ids each sequence reads in the pool, read on
    the host (fa_runtime.manifest.check_index_values); AttentionInputError
    naming the sequence and page. Unchecked, lengths and page ids are clamped
    (by the kernels and the reference alike)."""
    paged = page_table is not None
    capacity = page_table.shape[1] * k.shape[2] if paged else k.shape[2]
    try:
        check_index_values(None if kv_lens is None else kv_lens.tolist(),
                           page_table.tolist() if paged else None, capacity,
                           k.shape[0] if paged else None, k.shape[2] if paged else None)
    except ValueError as e:
        raise AttentionInputError(f"fa.attention: {e}") from None


_SPLIT_KV = os.environ.get("FA_SPLIT_KV", "1").lower() not in ("0", "false", "no", "off")


_SPLIT_KV_KERNEL = os.environ.get("FA_SPLIT_KV_KERNEL", "1").lower() not in (
    "0", "false", "no", "off")


def _num_sms(q):
    idx = q.device.index if q.device.index is not None else torch.cuda.current_device()
    return multiprocessor_count(idx)


def _run_split_kernel(q, k, v, causal, window, scale, softcap, return_lse, kv_lens=None,
                      page_table=None):
    """Decoding on sm_90a by in-kernel split-KV (fa.decode.plan_kernel_splits):
    the GQA-packed call [B, Hkv, G*Nq, D] in one launch of the kernel compiled
    with split-kv, num_splits CTAs per tile merged in the kernel; lengths and
    page tables as they are (the chunks are the kernel's). None when it does
    not apply (not sm_90a, not packable, one chunk, FA_SPLIT_KV or
    FA_SPLIT_KV_KERNEL off) or the kernel is not available: the caller takes
    the other paths."""
    if not (_SPLIT_KV and _SPLIT_KV_KERNEL) or q.device.type != "cuda":
        return None
    if chip_for_device(q.device) != "sm_90a":
        return None
    B, Hq, Nq, D = q.shape
    Hkv = k.shape[1]
    Nk = page_table.shape[1] * k.shape[2] if page_table is not None else k.shape[2]
    splits = decode.plan_kernel_splits(B, Hq, Hkv, Nq, Nk, _num_sms(q), causal, window)
    if splits <= 1:
        return None
    kern = _kernel(q, v, False, None, scale, softcap, return_lse, True,
                   kv_lens=kv_lens is not None,
                   page_size=k.shape[2] if page_table is not None else None, split_kv=True)
    if isinstance(kern, str):
        return None
    qp = q.contiguous().view(B, Hkv, (Hq // Hkv) * Nq, D)
    varlen = {}
    if kv_lens is not None or page_table is not None:
        varlen = dict(kv_lens=kv_lens, page_table=page_table, check_indices=False)
    res = kern(qp, k, v, num_splits=splits, **varlen)
    out, lse = (res[0], res[1]) if return_lse else (res, None)
    out = out.view(B, Hq, Nq, v.shape[-1])
    return out, (lse.view(B, Hq, Nq) if return_lse else _no_lse(q))


def _plan_decode(q, k, causal, window, kv_lens=None, page_table=None):
    """fa.decode.plan_splits (plan_page_splits with a page table) for this
    call on its device (0: run it as it is; FA_SPLIT_KV=0 turns the rewrite
    off). With kv_lens on a contiguous cache the split is a free view only
    with one K/V head; otherwise such a call is packed, not split."""
    if not _SPLIT_KV or q.device.type != "cuda":
        return 0
    B, Hq, Nq, _ = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    if not decode.packable(Hq, Hkv, Nq, causal, window):
        return 0
    sms = _num_sms(q)
    if page_table is not None:
        splits = decode.plan_page_splits(B, Hq, Hkv, Nq, page_table.shape[1], Nk, sms)
    elif kv_lens is not None and Hkv != 1:
        splits = 1
    else:
        splits = decode.plan_splits(B, Hq, Hkv, Nq, Nk, sms, causal, window)
    # Nothing to gain when there is neither a group to pack nor a split.
    return 0 if splits == 1 and Hq == Hkv else splits


def _run_packed(q, k, v, splits, scale, softcap, return_lse, kv_lens=None, page_table=None):
    """GQA packing and split-KV (fa.decode): one launch of the non-causal
    kernel over [B, Hkv*S, G*Nq, D], then the combine by lse (in f32). With
    kv_lens or a page table, the chunks are extra sequences instead
    (_run_packed_varlen). None when that kernel is not available (the caller
    runs the call as it is)."""
    if kv_lens is not None or page_table is not None:
        return _run_packed_varlen(q, k, v, splits, scale, softcap, return_lse, kv_lens,
                                  page_table)
    lse_needed = return_lse or splits > 1
    kern = _kernel(q, v, False, None, scale, softcap, lse_needed, fallback=True)
    if isinstance(kern, str):
        return None
    B, Hq, Nq, D = q.shape
    Hkv, Nk, Dv = k.shape[1], k.shape[2], v.shape[-1]
    rows = (Hq // Hkv) * Nq
    qp = q.contiguous().view(B, Hkv, rows, D)
    if splits > 1:
        qp = qp.unsqueeze(2).expand(B, Hkv, splits, rows, D).reshape(B, Hkv * splits, rows, D)
    kp = k.reshape(B, Hkv * splits, Nk // splits, D)
    vp = v.reshape(B, Hkv * splits, Nk // splits, Dv)
    res = kern(qp, kp, vp)
    out, lse = (res[0], res[1]) if lse_needed else (res, None)
    if splits > 1:
        lse = lse.view(B, Hkv, splits, rows).transpose(2, 3)  # [B, Hkv, rows, S]
        parts = out.view(B, Hkv, splits, rows, Dv).transpose(2, 3)  # [B, Hkv, rows, S, Dv]
        out, lse = combine(parts, lse, q.dtype, return_lse)
    out = out.view(B, Hq, Nq, Dv)
    return out, (lse.reshape(B, Hq, Nq) if return_lse else _no_lse(q))


def combine(parts, lse, dtype, return_lse=True, empty_chunks=False):
    """Merges the S chunks of a split by their lse: parts [..., S, Dv] (each
    chunk's normalized output), lse [..., S] (natural log) -> (out [..., 1, Dv]
    in `dtype`, lse [...] or None). The chunks' weights exp(lse_s - lse) (a
    softmax over the chunks) and the weighted sum as one batched matmul per
    row, in f32: few launches (each costs host time comparable to a short
    kernel). A chunk with no key (lse -inf, output 0) weighs 0; with
    empty_chunks a row may have no key in any chunk: its softmax (NaN) is
    zeroed, so out = 0 and lse = -inf, as the kernels give a fully masked row."""
    w = torch.softmax(lse, dim=-1)
    if empty_chunks:
        w = w.nan_to_num_(0.0)
    out = torch.matmul(w.unsqueeze(-2), parts.float()).to(dtype)
    return out, (torch.logsumexp(lse, dim=-1) if return_lse else None)


def _split_lengths(kv_lens, B, splits, chunk, capacity, device):
    """fa.decode.split_lengths on the device: [B * splits] int32, chunk s of
    sequence b holding clamp(L_b - s * chunk, 0, chunk) keys."""
    start = torch.arange(0, splits * chunk, chunk, device=device, dtype=torch.int32)
    if kv_lens is None:
        lens = torch.full((B, 1), capacity, device=device, dtype=torch.int32)
    else:
        lens = kv_lens.reshape(B, 1).clamp(0, capacity)
    return (lens - start).clamp_(0, chunk).view(B * splits)


def _run_packed_varlen(q, k, v, splits, scale, softcap, return_lse, kv_lens, page_table):
    """_run_packed with kv_lens or a page table: the packed query
    [B, Hkv, G*Nq, D] with the call's lengths and table; split, the chunks are
    S times as many sequences [B*S, ...] (sequence-major): the query repeated,
    each chunk's length from split_lengths, and either the page table's rows
    cut into chunks of whole pages ([B, M] viewed as [B*S, c], padded with a
    copy when S*c != M; the padding is past every length) or, with one K/V
    head, the contiguous cache viewed as [B*S, 1, Nk/S, D]. Then the combine,
    where a chunk with no key weighs 0."""
    paged = page_table is not None
    lse_needed = return_lse or splits > 1
    kern = _kernel(q, v, False, None, scale, softcap, lse_needed, fallback=True,
                   kv_lens=kv_lens is not None or splits > 1,
                   page_size=k.shape[2] if paged else None)
    if isinstance(kern, str):
        return None
    B, Hq, Nq, D = q.shape
    Hkv, Dv = k.shape[1], v.shape[-1]
    rows = (Hq // Hkv) * Nq
    qp = q.contiguous().view(B, Hkv, rows, D)
    if splits == 1:
        res = kern(qp, k, v, kv_lens=kv_lens, page_table=page_table, check_indices=False)
    else:
        qp = qp.unsqueeze(1).expand(B, splits, Hkv, rows, D).reshape(B * splits, Hkv, rows, D)
        kp, vp, table = k, v, None
        if paged:
            M, S = page_table.shape[1], k.shape[2]
            c = decode.page_chunk(M, splits)
            table = page_table
            if c * splits != M:
                table = torch.nn.functional.pad(table, (0, c * splits - M))
            table = table.contiguous().view(B * splits, c)
            chunk, capacity = c * S, M * S
        else:  # one K/V head: a free view of the contiguous cache
            Nk = k.shape[2]
            chunk, capacity = Nk // splits, Nk
            kp = k.reshape(B * splits, 1, chunk, D)
            vp = v.reshape(B * splits, 1, chunk, Dv)
        lens = _split_lengths(kv_lens, B, splits, chunk, capacity, q.device)
        res = kern(qp, kp, vp, kv_lens=lens, page_table=table, check_indices=False)
    out, lse = (res[0], res[1]) if lse_needed else (res, None)
    if splits > 1:
        lse = lse.view(B, splits, Hkv, rows).permute(0, 2, 3, 1)  # [B, Hkv, rows, S]
        parts = out.view(B, splits, Hkv, rows, Dv).permute(0, 2, 3, 1, 4)
        out, lse = combine(parts, lse, q.dtype, return_lse, empty_chunks=True)
    out = out.reshape(B, Hq, Nq, Dv)
    return out, (lse.reshape(B, Hq, Nq) if return_lse else _no_lse(q))


# Causal prefill up to this many tokens runs the sm_90a kernel with dynamic tiles
# (fa-to-ptx{dynamic-tiles}, docs/SM90.md): measured on the H200 (bench/results/
# dynamic_tiles_h200_2026-12-01_s12, run4; what a user sees) 1.19x / 1.08x (d64 / d128) as
# fast as the default at 512 tokens, 1.12x / 1.03x at 1k, 1.05x / 1.01x at 2k, but 0.99-1.00x
# at 4k and slower beyond.
DYNAMIC_TILES_MAX_TOKENS = 2048


def _short_causal(q, k, causal, window, softcap, varlen):
    """Whether this call takes the dynamic-tiles kernel: plain causal self-attention (Nq = Nk,
    no window, softcap, lengths or pages) of at most DYNAMIC_TILES_MAX_TOKENS tokens."""
    n = q.shape[2]
    return (causal and window is None and softcap is None and not varlen and n == k.shape[2]
            and 0 < n <= DYNAMIC_TILES_MAX_TOKENS and q.shape[-1] in (64, 128))


# Head dim 64 from this many query rows and keys runs the sm_90a kernel with three consumer
# warpgroups (fa-to-ptx{block-q=192}, 192-row tiles, docs/SM90.md): measured on the H200
# (bench/results/sm90_d64_h200_2026-12-03_s24; run4, what a user sees) 1.14-1.21x as fast as
# the previous choice from 2k tokens without a mask band, 1.04-1.13x causal from 4k; kernel
# only (run3) within 2% of the default at 512-1k without a mask band and 0.89-0.91x causal.
WIDE_TILE_MIN_TOKENS = 2048


def _prefill_schedule(q, k, v, causal, window, softcap, varlen):
    """The fa-to-ptx options beyond the defaults that this call's sm_90a forward kernel is
    compiled with, as sorted (flag, value) pairs: dynamic tiles for short causal
    self-attention (_short_causal); three consumer warpgroups (block-q 192) at head dim 64
    with at least WIDE_TILE_MIN_TOKENS query rows and keys, causal or not, without a window,
    softcap, lengths or pages; () otherwise."""
    if _short_causal(q, k, causal, window, softcap, varlen):
        return (("dynamic-tiles", True),)
    if (q.shape[-1] == 64 and v.shape[-1] == 64 and window is None and softcap is None
            and not varlen and min(q.shape[2], k.shape[2]) >= WIDE_TILE_MIN_TOKENS):
        return (("block-q", 192),)
    return ()


def _kernel(q, v, causal, window, scale, softcap, return_lse, fallback, grad=False,
            kv_lens=False, page_size=None, deterministic=False, schedule=(),
            split_kv=False, mask=None):
    """The fa_runtime.Kernel of this variant (with grad: its backward; with
    kv_lens / page_size: the kernel taking lengths / page pools) on q's
    device, or the reason there is none (a string; raises UnsupportedError
    instead when not `fallback`). `deterministic`: the backward kernel
    compiled with fa-to-ptx{deterministic} (dq in a fixed order).
    `schedule`: on sm_90a, the forward kernel compiled with these
    fa-to-ptx options too (_prefill_schedule: dynamic tiles, three consumer
    warpgroups), or the default kernel where there is none.
    `split_kv`: on sm_90a, the forward kernel compiled with
    fa-to-ptx{split-kv} (in-kernel split-KV decoding; _run_split_kernel),
    or the reason there is none (never another kernel instead).
    `mask`: the forward kernel taking a mask operand of this spec
    (Variant's mask, `<dtype>:<dims>`).
    Memoized per (dtype, head dims, flags, device)."""
    key = (q.dtype, q.shape[-1], v.shape[-1], causal, window, scale, softcap, return_lse,
           q.device, grad, kv_lens, page_size, deterministic, schedule, split_kv, mask)
    kern = _fast.get(key)
    if kern is None:
        dtype = _DTYPE_NAMES.get(q.dtype, str(q.dtype))
        chip = chip_for_device(q.device) if q.device.type == "cuda" else None
        reason = unsupported_reason(dtype, q.device, chip, q.shape[-1], v.shape[-1], softcap,
                                    grad)
        if reason is None:
            options = {"deterministic": True} if deterministic else {}
            if schedule and chip == "sm_90a" and not grad:
                options.update(schedule)
            if split_kv:
                if chip != "sm_90a" or grad:
                    _fast[key] = "split-kv kernels are sm_90a forward kernels"
                    return _fast[key]
                options["split-kv"] = True
            variant = Variant.make(dtype, q.shape[-1], causal, window, scale, softcap,
                                   return_lse, chip, grad=grad, kv_lens=kv_lens,
                                   page_size=page_size, options=options or None, mask=mask)
            try:
                kern = dispatch.kernel(variant).runtime
            except UnsupportedError as e:
                reason = str(e)
            if reason is not None and schedule and chip == "sm_90a" and not grad:
                # Not in a bundle made without it, no compiler here: the default kernel.
                kern = _kernel(q, v, causal, window, scale, softcap, return_lse, fallback,
                               grad, kv_lens, page_size, deterministic)
                _fast[key] = kern
                return kern
        if reason is not None:
            if not fallback:
                raise _unsupported(reason, grad)
            kern = reason  # remembered: the fallback, without asking again
        _fast[key] = kern
    return kern


def _unsupported(reason, grad=False):
    return UnsupportedError(f"fa.attention{' backward' if grad else ''}: {reason}. Pass "
                            f"fallback=True (or set FA_FALLBACK=1) to compute it with torch "
                            f"instead")


_NO_LSE = {}  # device -> the shared empty lse of calls without return_lse (direct path)


def _no_lse(q):
    """The empty lse of a call without return_lse: one per device, shared (an
    allocation costs as much as a short kernel's launch). The op returns a
    fresh one instead (attention_op: outputs of a custom op are its own)."""
    t = _NO_LSE.get(q.device)
    if t is None:
        t = _NO_LSE[q.device] = torch.empty((0,), device=q.device, dtype=torch.float32)
    return t


@torch.library.custom_op("fa::attention", mutates_args=())
def attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                 window_left: int, window_right: int, scale: Optional[float],
                 softcap: Optional[float], return_lse: bool, fallback: bool,
                 kv_lens: Optional[torch.Tensor] = None,
                 page_table: Optional[torch.Tensor] = None,
                 attn_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """fa.attention's op: (out, lse), lse empty unless return_lse."""
    out, lse = _run(q, k, v, causal, window_left, window_right, scale, softcap, return_lse,
                    fallback, kv_lens, page_table, attn_mask)
    if not return_lse:
        lse = torch.empty((0,), device=q.device, dtype=torch.float32)
    return out, lse


@attention_op.register_fake
def _attention_fake(q, k, v, causal, window_left, window_right, scale, softcap, return_lse,
                    fallback, kv_lens=None, page_table=None, attn_mask=None):
    B, Hq, Nq, _ = q.shape
    out = q.new_empty((B, Hq, Nq, v.shape[-1]))
    lse = q.new_empty((B, Hq, Nq) if return_lse else (0,), dtype=torch.float32)
    return out, lse


def _grad(grad_out, q, k, v, out, lse, grad_lse, causal, window_left, window_right, scale,
          softcap, fallback, attn_mask=None):
    """fa::attention_backward's body: (dq, dk, dv) from the backward kernel
    of the forward's variant on q's device (fa_runtime.Kernel.grad), or, when
    there is none and `fallback`, from reference_grad; else UnsupportedError.
    An empty lse (the forward was not asked for it) is computed again.
    attn_mask (the forward's kernel operand, as _mask_operand viewed it):
    the backward kernel compiled with the same mask operand reads it."""
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    # torch.use_deterministic_algorithms(True): the kernel that adds dq in a
    # fixed order (the other gradients are deterministic in either).
    deterministic = bool(getattr(torch, "are_deterministic_algorithms_enabled",
                                 lambda: False)())
    mask = None if attn_mask is None else mask_spec(attn_mask.shape,
                                                    _DTYPE_NAMES[attn_mask.dtype])
    kern = _kernel(q, v, causal, window, scale, softcap, False, fallback, grad=True,
                   deterministic=deterministic, mask=mask)
    if isinstance(kern, str):
        if not fallback:
            raise _unsupported(kern, grad=True)
        masked = () if attn_mask is None else (attn_mask,)
        dq, dk, dv = reference_grad(q, k, v, grad_out, causal, window, scale, softcap, grad_lse,
                                    *masked)
        return (dq.to(q.dtype).contiguous(), dk.to(k.dtype).contiguous(),
                dv.to(v.dtype).contiguous())
    if lse.dim() != 3:
        out, lse = _run(q, k, v, causal, window_left, window_right, scale, softcap, True,
                        fallback, attn_mask=attn_mask)
    if attn_mask is not None:
        return kern.grad(q, k, v, out, lse, grad_out, grad_lse=grad_lse, mask=attn_mask)
    return kern.grad(q, k, v, out, lse, grad_out, grad_lse=grad_lse)


@torch.library.custom_op("fa::attention_backward", mutates_args=())
def attention_backward_op(grad_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                          v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                          grad_lse: Optional[torch.Tensor], causal: bool, window_left: int,
                          window_right: int, scale: Optional[float], softcap: Optional[float],
                          fallback: bool, attn_mask: Optional[torch.Tensor] = None
                          ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """fa::attention's backward: (dq, dk, dv) given the output's gradient, the
    forward's inputs and results (lse empty: computed again) and the lse's
    gradient (None when the loss does not use it)."""
    return _grad(grad_out, q, k, v, out, lse, grad_lse, causal, window_left, window_right,
                 scale, softcap, fallback, attn_mask)


@attention_backward_op.register_fake
def _attention_backward_fake(grad_out, q, k, v, out, lse, grad_lse, causal, window_left,
                             window_right, scale, softcap, fallback, attn_mask=None):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    q, k, v, causal, window_left, window_right, scale, softcap, return_lse, fallback = inputs[:10]
    out, lse = output
    attn_mask = inputs[12] if len(inputs) > 12 else None
    ctx.fa_masked = attn_mask is not None
    ctx.save_for_backward(q, k, v, out, lse, *((attn_mask,) if ctx.fa_masked else ()))
    ctx.fa_flags = (causal, window_left, window_right, scale, softcap, return_lse, fallback)
    # kv_lens / page_table: no backward (inference only); said when it is asked for.
    ctx.fa_varlen = any(t is not None for t in inputs[10:12])
    # An output the loss does not use gets None, not zeros (lse, mostly).
    ctx.set_materialize_grads(False)


def _backward(ctx, grad_out, grad_lse):
    if getattr(ctx, "fa_varlen", False):
        raise UnsupportedError("fa.attention backward: no gradient through kv_lens or a paged "
                               "KV cache (inference only: call it under torch.no_grad() or "
                               "torch.inference_mode(), or with tensors that do not require "
                               "grad)")
    q, k, v, out, lse = ctx.saved_tensors[:5]
    attn_mask = ctx.saved_tensors[5] if getattr(ctx, "fa_masked", False) else None
    causal, window_left, window_right, scale, softcap, return_lse, fallback = ctx.fa_flags
    if grad_out is None:  # only lse reaches the loss
        grad_out = torch.zeros_like(out)
    if not return_lse:
        grad_lse = None
    args = (grad_out, q, k, v, out, lse, grad_lse, causal, window_left, window_right, scale,
            softcap, fallback, attn_mask)
    # Eager on plain tensors: the body directly (no dispatcher); traced
    # (torch.compile, opcheck, fake tensors): the op, whose fake gives shapes.
    if not torch.compiler.is_compiling() and all(type(t) is torch.Tensor
                                                 for t in (grad_out, q, k, v)):
        dq, dk, dv = _grad(*args)
    else:
        dq, dk, dv = attention_backward_op(*args)
    need = ctx.needs_input_grad
    return ((dq if need[0] else None), (dk if need[1] else None), (dv if need[2] else None)) \
        + (None,) * (len(need) - 3)


attention_op.register_autograd(_backward, setup_context=_setup_context)


def _dtype_name(t):
    n = _DTYPE_NAMES.get(t.dtype)
    return n if n is not None else str(t.dtype)


def attention(q, k, v, *, causal=False, window=None, scale=None, softcap=None, return_lse=False,
              fallback=None, kv_lens=None, page_table=None, attn_mask=None):
    """Scaled dot-product attention with fa's kernels, on torch tensors.

    q [B, Hq, Nq, D], k and v [B, Hkv, Nk, D] (torch SDPA's layout; Hq a
    multiple of Hkv: grouped-query attention), f16 or bf16, on one CUDA device.
    causal: bottom-right aligned (the last query sees every key).
    window=(left, right): keys within left before and right after the
    diagonal (-1 unbounded). scale: default 1/sqrt(D). softcap: s -> c tanh(s/c).
    return_lse: also the log-sum-exp [B, Hq, Nq] f32 (natural log).
    Picks the kernel for the dtype, head dim, flags and the device's compute
    capability (sm_90a on 9.0, sm_80 on 8.x), from a loaded bundle or compiled
    once (cached in memory and on disk), and launches it on the current stream
    of the tensors' device. Non-contiguous inputs are copied.
    Errors: AttentionInputError (a ValueError) for wrong arguments;
    UnsupportedError for what no kernel computes, unless fallback=True (or
    FA_FALLBACK=1), which computes it with torch. Registered as the custom op
    torch.ops.fa.attention, so torch.compile traces it without a graph break.
    Backward: when q, k or v require grad, the forward also computes lse
    (returned only if asked) and keeps q, k, v, out, lse; loss.backward()
    runs the backward kernel of the same variant (fa::attention_backward),
    also for a loss that uses lse. No backward kernel for the case (e.g. head
    dim 256): UnsupportedError, or with fallback the gradients in torch (f32,
    O(N^2) memory).
    Per-sequence lengths and paged KV caches (docs/Inference.md): kv_lens
    [B] int32: sequence b sees keys j < clamp(kv_lens[b], 0, Nk), its
    causal/window diagonal at L_b - Nq (bottom-right per sequence; a length
    of 0 gives out 0 and lse -inf). page_table [B, max_pages] int32: k and v
    are page pools [num_pages, Hkv, page_size, D] (page_size a multiple of 16)
    and key j of sequence b is k[page_table[b, j // page_size], :, j %
    page_size]; Nk is max_pages * page_size. Lengths and page ids are
    clamped (to [0, Nk] and [0, num_pages - 1]); FA_CHECK_INDICES=1 checks
    them on the host first (AttentionInputError naming the sequence and
    page). Decoding calls are packed and split through the page table
    (fa.decode). No backward (UnsupportedError if one is asked for).
    attn_mask: torch SDPA's, broadcastable to [B, Hq, Nq, Nk]: bool keeps
    the keys where it is true, float16 / bfloat16 / float32 is added to the
    scaled (and softcapped) scores; it combines with causal and window (a
    key is visible if all say so) and a row that sees no key gives out 0,
    lse -inf. The kernel compiled with a mask operand reads it per score
    (its batch, head and query dims may be 1; its key dim is expanded here;
    a boolean mask of one row, e.g. key padding [B, 1, 1, Nk], is
    classified per key block: hidden blocks are skipped). It gets no gradient (UnsupportedError if it requires one);
    loss.backward() through a masked call runs the backward kernel compiled
    with the same mask operand (q, k, v get their gradients). Not with
    kv_lens or a page table (UnsupportedError, or the fallback)."""
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
        raise AttentionInputError("fa.attention: q, k, v must be torch tensors")
    for name, t in (("kv_lens", kv_lens), ("page_table", page_table)):
        if t is not None and not isinstance(t, torch.Tensor):
            raise AttentionInputError(f"fa.attention: {name} must be a torch tensor (int32), "
                                      f"got {type(t).__name__}")
    window, sizes = check_inputs((q.shape, _dtype_name(q), q.device),
                                 (k.shape, _dtype_name(k), k.device),
                                 (v.shape, _dtype_name(v), v.device),
                                 causal=causal, window=window, scale=scale, softcap=softcap,
                                 kv_lens=_described(kv_lens), page_table=_described(page_table))
    if fallback is None:
        fallback = _FALLBACK_ENV
    if attn_mask is not None:
        attn_mask = _mask_operand(attn_mask, q, sizes)
    wl, wr = window if window is not None else (-1, -1)
    args = (q, k, v, bool(causal), int(wl), int(wr), None if scale is None else float(scale),
            None if softcap is None else float(softcap), bool(return_lse), bool(fallback))
    varlen = () if kv_lens is None and page_table is None else (kv_lens, page_table)
    if attn_mask is not None:
        varlen = (kv_lens, page_table, attn_mask)
    if _direct(q, k, v, *varlen):
        out, lse = _run(*args, *varlen)
    else:
        if not return_lse and torch.is_grad_enabled() and (q.requires_grad or k.requires_grad
                                                           or v.requires_grad):
            args = args[:8] + (True, args[9])  # the backward reads lse: computed, not returned
        out, lse = attention_op(*args, *varlen)
    return (out, lse) if return_lse else out


def _mask_operand(attn_mask, q, sizes):
    """attn_mask checked (validation.check_mask) and viewed as the kernel's
    [B or 1, Hq or 1, Nq or 1, Nk] operand: leading dims added, its key dim
    expanded, a query dim of 1 kept (one row that every query row reads; a
    view: the launch copies it contiguous where needed)."""
    if not isinstance(attn_mask, torch.Tensor):
        raise AttentionInputError(f"fa.attention: attn_mask must be a torch tensor, got "
                                  f"{type(attn_mask).__name__}")
    if attn_mask.device != q.device:
        raise AttentionInputError(f"fa.attention: attn_mask is on {attn_mask.device}, q, k, v "
                                  f"on {q.device}; they must be on one device")
    shape = check_mask((attn_mask.shape, _dtype_name(attn_mask), attn_mask.device), sizes)
    if attn_mask.requires_grad and torch.is_grad_enabled():
        raise UnsupportedError("fa.attention: attn_mask requires grad, but fa.attention gives "
                               "no gradient to the mask (pass attn_mask.detach())")
    return attn_mask.reshape((1,) * (4 - attn_mask.dim()) + tuple(attn_mask.shape)) \
        .expand(shape)


def _described(t):
    return None if t is None else (t.shape, _dtype_name(t), t.device)


def _direct(q, k, v, *others):
    """Whether this call may skip the dispatcher and run what the op runs
    (_run) directly: eager mode, plain tensors (no subclass such as a fake or
    distributed tensor; `others`: kv_lens, page_table), nothing that autograd
    must record. The dispatcher of a Python custom op costs tens of
    microseconds per call, as much as the kernel at short lengths. Under
    torch.compile the op is always used."""
    if torch.compiler.is_compiling():
        return False
    if type(q) is not torch.Tensor or type(k) is not torch.Tensor or type(v) is not torch.Tensor:
        return False
    if any(t is not None and type(t) is not torch.Tensor for t in others):
        return False
    return not (torch.is_grad_enabled() and (q.requires_grad or k.requires_grad
                                             or v.requires_grad))


_FALLBACK_ENV = os.environ.get("FA_FALLBACK", "").lower() in ("1", "true", "yes", "on")
