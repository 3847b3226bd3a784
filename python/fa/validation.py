"""Checks of fa.attention's arguments, before anything is compiled or launched.

Two kinds of failure:
  - AttentionInputError (a ValueError): the call is wrong whatever the
    backend (ranks, shapes that do not agree, mixed dtypes or devices, a bad
    window, scale or softcap). Never falls back.
  - UnsupportedError (a NotImplementedError): a valid attention that no fa
    kernel computes (an element type or head dim the kernels lack,
    a CPU tensor, a GPU older than sm_80). fa.attention(..., fallback=True)
    or FA_FALLBACK=1 computes these with torch instead.
Pure Python on shapes, dtype names and device strings: tested without torch.
"""
import math

from .variant import DTYPES, GRAD_HEAD_DIMS, HEAD_DIMS, normalize_window


class AttentionInputError(ValueError):
    pass


class UnsupportedError(NotImplementedError):
    pass


def check_inputs(q, k, v, causal=False, window=None, scale=None, softcap=None):
    """q, k, v: (shape, dtype name, device string) triples, [B, H, N, D]
    (torch SDPA's layout). Raises AttentionInputError; returns the
    normalized window and the sizes (B, Hq, Hkv, Nq, Nk, D, Dv)."""
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
    if Bk != B or Bv != B:
        raise AttentionInputError(f"fa.attention: batch sizes differ: q {B}, k {Bk}, v {Bv}")
    if Dk != D:
        raise AttentionInputError(f"fa.attention: k's head dim {Dk} differs from q's {D}")
    if (Hv, Nv) != (Hkv, Nk):
        raise AttentionInputError(f"fa.attention: v has {Hv} heads x {Nv} keys, k has "
                                  f"{Hkv} x {Nk}; they must agree")
    if Hkv == 0 or Hq % Hkv:
        raise AttentionInputError(f"fa.attention: {Hkv} key/value heads do not divide {Hq} "
                                  f"query heads (grouped-query attention needs Hq % Hkv == 0)")
    if Nk == 0 and B * Hq * Nq:
        raise AttentionInputError("fa.attention: k and v have no keys (seq_len 0)")
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
