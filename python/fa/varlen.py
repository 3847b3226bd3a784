"""fa.attention_varlen: packed variable-length sequences on torch tensors
(FlashAttention's flash_attn_varlen_func layout; docs/Attention.md, "Packed
variable-length sequences").

    out = fa.attention_varlen(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, causal=True)
    # q [T, Hq, D], k and v [T, Hkv, D]; cu_seqlens [B + 1] int32 (0, ..., T)

The kernel is the sm_90a one of the `varlen` Variant (token-major [T, H, D]
tensors, fa-to-ptx{varlen-layout=thd}); elsewhere, with fallback, torch runs
each sequence. Differentiable: the backward is the sm_90a kernel of the
`varlen,grad` Variant on the same token-major tensors, or torch per
sequence with fallback.
"""
import torch

from . import dispatch
from . import torch_ops
from .torch_ops import _DTYPE_NAMES, chip_for_device, reference
from .validation import AttentionInputError, UnsupportedError, unsupported_reason
from .variant import Variant, normalize_window

_kernels = {}  # (dtype, D, causal, window, scale, return_lse, device) -> runtime kernel or reason
dispatch.on_clear.append(_kernels.clear)  # fa.load_bundle may bring a kernel that was missing


def _check(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k=None):
    for name, t in (("q", q), ("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, torch.Tensor):
            raise AttentionInputError(f"fa.attention_varlen: {name} must be a torch tensor, got "
                                      f"{type(t).__name__}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 3:
            raise AttentionInputError(
                f"fa.attention_varlen: {name} must be [T, H, D] (the sequences packed along "
                f"dim 0), got shape {tuple(t.shape)}")
    if k.shape != v.shape:
        raise AttentionInputError(f"fa.attention_varlen: k {tuple(k.shape)} and v "
                                  f"{tuple(v.shape)} must have one shape [Tk, Hkv, D]")
    if q.shape[2] != k.shape[2]:
        raise AttentionInputError(f"fa.attention_varlen: head dims differ: q {q.shape[2]}, "
                                  f"k {k.shape[2]}")
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise AttentionInputError(f"fa.attention_varlen: Hq = {q.shape[1]} must be a multiple "
                                  f"of Hkv = {k.shape[1]} (grouped-query attention)")
    if q.dtype != k.dtype or q.dtype != v.dtype:
        raise AttentionInputError(f"fa.attention_varlen: q, k, v must share a dtype, got "
                                  f"{q.dtype}, {k.dtype}, {v.dtype}")
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if t.dtype != torch.int32:
            raise AttentionInputError(f"fa.attention_varlen: {name} must be int32, got "
                                      f"{t.dtype} (use .to(torch.int32))")
        if t.dim() != 1 or t.shape[0] < 1:
            raise AttentionInputError(f"fa.attention_varlen: {name} must be [B + 1] offsets, "
                                      f"got shape {tuple(t.shape)}")
        if t.device != q.device:
            raise AttentionInputError(f"fa.attention_varlen: {name} is on {t.device}, q on "
                                      f"{q.device}")
    if cu_seqlens_q.shape != cu_seqlens_k.shape:
        raise AttentionInputError(f"fa.attention_varlen: cu_seqlens_q {tuple(cu_seqlens_q.shape)}"
                                  f" and cu_seqlens_k {tuple(cu_seqlens_k.shape)} must both be "
                                  f"[B + 1]")
    for t in (k, v):
        if t.device != q.device:
            raise AttentionInputError(f"fa.attention_varlen: k and v must be on q's device "
                                      f"({q.device})")
    for name, n in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise AttentionInputError(f"fa.attention_varlen: {name} must be a non-negative "
                                      f"int, got {n!r}")


def _kernel(q, causal, window, scale, return_lse, grad=False):
    """The runtime kernel of the varlen variant (with grad: its backward), or
    why there is none (a str)."""
    key = (q.dtype, q.shape[2], causal, window, scale, return_lse, q.device, grad)
    kern = _kernels.get(key)
    if kern is None:
        dtype = _DTYPE_NAMES.get(q.dtype, str(q.dtype))
        chip = chip_for_device(q.device) if q.device.type == "cuda" else None
        kern = unsupported_reason(dtype, q.device, chip, q.shape[2], q.shape[2], None,
                                  grad=grad)
        if kern is None and chip != "sm_90a":
            kern = f"{chip}: packed variable-length sequences run on sm_90a only (for now)"
        if kern is None:
            variant = Variant.make(dtype, q.shape[2], causal, window, scale, None,
                                   return_lse and not grad, chip, grad=grad, varlen=True)
            try:
                kern = dispatch.kernel(variant).runtime
            except UnsupportedError as e:
                kern = str(e)
        _kernels[key] = kern
    return kern


def _reference(q, k, v, cu_q, cu_k, causal, window, scale, return_lse):
    """torch, one sequence at a time (offsets clamped as the op's semantics say;
    rows of no sequence are 0 and lse -inf)."""
    Tq, Tk = q.shape[0], k.shape[0]
    out = torch.zeros_like(q)
    lse = torch.full((q.shape[1], Tq), float("-inf"), device=q.device, dtype=torch.float32)
    oq, ok = cu_q.tolist(), cu_k.tolist()
    for s in range(len(oq) - 1):
        qs = min(max(oq[s], 0), Tq)
        qe = min(max(oq[s + 1], qs), Tq)
        ks = min(max(ok[s], 0), Tk)
        ke = min(max(ok[s + 1], ks), Tk)
        if qe == qs:
            continue
        if ke == ks:
            continue  # no key: 0 and -inf, as initialized
        o, l = reference(*(x[a:b].transpose(0, 1).unsqueeze(0) for x, a, b in
                           ((q, qs, qe), (k, ks, ke), (v, ks, ke))),
                         causal=causal, window=window, scale=scale, return_lse=True)
        out[qs:qe] = o[0].transpose(0, 1).to(q.dtype)
        lse[:, qs:qe] = l[0]
    return out, lse


class _VarlenAttention(torch.autograd.Function):
    """The varlen kernels under autograd: the forward kernel with lse (saved),
    the backward kernel of the `varlen,grad` Variant on the same token-major
    tensors (both compiled with the default varlen-layout, thd)."""

    @staticmethod
    def forward(ctx, q, k, v, cu_q, cu_k, max_seqlen_q, max_seqlen_k, fwd, bwd):
        out, lse = fwd(q.contiguous(), k.contiguous(), v.contiguous(), cu_seqlens_q=cu_q,
                       cu_seqlens_k=cu_k, max_seqlen_q=max_seqlen_q)
        ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
        ctx.bwd = bwd
        ctx.max_seqlen_k = max_seqlen_k
        ctx.set_materialize_grads(False)
        return out, lse

    @staticmethod
    def backward(ctx, dout, dlse):
        q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
        if dout is None:
            dout = torch.zeros_like(out)
        dq, dk, dv = ctx.bwd.grad(q, k, v, out, lse, dout.contiguous(), grad_lse=dlse,
                                  cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                  max_seqlen_k=ctx.max_seqlen_k)
        return dq, dk, dv, None, None, None, None, None, None


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k=None, max_seqlen_q=None,
                     max_seqlen_k=None, *,
                     causal=False, window=None, scale=None, return_lse=False, fallback=None):
    """Attention over packed variable-length sequences.

    q [Tq, Hq, D], k and v [Tk, Hkv, D] (f16 / bf16, one CUDA device; Hq a
    multiple of Hkv); cu_seqlens_q and cu_seqlens_k [B + 1] int32 cumulative
    offsets on that device (cu_seqlens_k defaults to cu_seqlens_q): sequence s
    has the query rows [cu_seqlens_q[s], cu_seqlens_q[s + 1]) and the keys
    [cu_seqlens_k[s], cu_seqlens_k[s + 1]), and its rows see only its keys.
    causal / window: bottom-right per sequence (diagonal Lk - Lq). scale:
    default 1/sqrt(D). max_seqlen_q: the longest sequence's query rows (the
    grid); None reads it from the offsets (a device synchronization).
    max_seqlen_k: the longest sequence's keys, the backward's grid (default:
    max_seqlen_q when cu_seqlens_k is cu_seqlens_q or None; else read from
    the offsets when the backward runs).
    Returns out [Tq, Hq, D] (and with return_lse the log-sum-exp [Hq, Tq] f32).
    Offsets should start at 0, never decrease and end at Tq / Tk: then every
    row is written; FA_CHECK_INDICES=1 checks that on the host. When q, k or v
    require gradients (and grad mode is on), the backward is the sm_90a
    `varlen,grad` kernel (head dims 64 and 128; out and lse, when returned,
    both differentiable); rows and keys of no sequence get zero gradients.
    Without an sm_90a kernel (another chip, the CPU, a head dim the kernel
    lacks, forward or backward): UnsupportedError, or with fallback=True
    (FA_FALLBACK=1) torch per sequence."""
    if max_seqlen_k is None and (cu_seqlens_k is None or cu_seqlens_k is cu_seqlens_q):
        max_seqlen_k = max_seqlen_q  # the same offsets: the same longest sequence
    if cu_seqlens_k is None:
        cu_seqlens_k = cu_seqlens_q
    _check(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    window = normalize_window(causal, window)
    if fallback is None:
        fallback = torch_ops._FALLBACK_ENV
    scale = None if scale is None else float(scale)
    training = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    kern = _kernel(q, bool(causal), window, scale, bool(return_lse) or training)
    if training and not isinstance(kern, str):
        bwd = _kernel(q, bool(causal), window, scale, False, grad=True)
        if not isinstance(bwd, str):
            out, lse = _VarlenAttention.apply(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                              max_seqlen_q, max_seqlen_k, kern, bwd)
            return (out, lse) if return_lse else out
        kern = f"no backward kernel: {bwd}"
    if isinstance(kern, str):
        if not fallback:
            raise UnsupportedError(f"fa.attention_varlen: {kern}. Pass fallback=True (or set "
                                   f"FA_FALLBACK=1) to compute it with torch instead")
        out, lse = _reference(q, k, v, cu_seqlens_q, cu_seqlens_k, causal, window, scale,
                              return_lse)
        return (out, lse) if return_lse else out
    res = kern(q.contiguous(), k.contiguous(), v.contiguous(), cu_seqlens_q=cu_seqlens_q,
               cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q)
    if return_lse:
        return res
    return res[0] if isinstance(res, tuple) else res
